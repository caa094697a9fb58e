/* cjrt: PJRT_DeviceDescription_*, PJRT_Device_* and async tracking events. A PJRT_Device is a
 * cj_device; its PJRT_DeviceDescription is the cj_device_desc embedded in it. */
#include <string.h>

#include "pjrt/internal.h"
#include "runtime/executable.h"

#define CJP_DESC(NAME, var, expr)                                                  \
  CJP_HANDLE(NAME, cj_device_desc, cj_device_desc_check, var##_desc, expr,         \
             "device_description");                                                \
  cj_device *var = var##_desc->device
#define CJP_DESC_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_DESC(NAME, d, args->device_description), __VA_ARGS__)

CJP_DESC_SLOT(PJRT_DeviceDescription_Id, id,
    args->id = d->id;)

CJP_DESC_SLOT(PJRT_DeviceDescription_ProcessIndex, process_index,
    args->process_index = d->process_index;)

CJP_DESC_SLOT(PJRT_DeviceDescription_Attributes, attributes,
    /* Only string, int64 and int64-list values: frameworks abort on others. */
    cjp_device_attributes(d, &args->attributes, &args->num_attributes);)

CJP_DESC_SLOT(PJRT_DeviceDescription_Kind, device_kind_size,
    CJP_SET_STR(args, device_kind, cj_client_device_kind(d->client));)

CJP_DESC_SLOT(PJRT_DeviceDescription_DebugString, debug_string_size,
    CJP_SET_STR(args, debug_string, d->debug_string);)

CJP_DESC_SLOT(PJRT_DeviceDescription_ToString, to_string_size,
    CJP_SET_STR(args, to_string, d->to_string);)

CJP_DEVICE_SLOT(PJRT_Device_GetDescription, device_description,
    args->device_description = (PJRT_DeviceDescription *)&d->desc;)

CJP_DEVICE_SLOT(PJRT_Device_IsAddressable, is_addressable,
    args->is_addressable = d->process_index == d->client->opts.process_index;)

CJP_DEVICE_SLOT(PJRT_Device_LocalHardwareId, local_hardware_id,
    args->local_hardware_id = d->local_hardware_id;)

CJP_DEVICE_SLOT(PJRT_Device_AddressableMemories, num_memories,
    /* another process's device has no memories this process can address */
    bool local = cj_device_is_local(d);
    args->memories = local ? (PJRT_Memory *const *)d->memories : NULL;
    args->num_memories = local ? (size_t)d->nmemories : 0;)

PJRT_Error *cjp_PJRT_Device_DefaultMemory(PJRT_Device_DefaultMemory_Args *args) {
  CJP_CHECK_ARGS(PJRT_Device_DefaultMemory, args, memory);
  CJP_DEVICE(PJRT_Device_DefaultMemory, d, args->device, "device");
  CJP_REQUIRE(PJRT_Device_DefaultMemory, cj_device_is_local(d),
              "device %d belongs to process %d and has no memory this process can address", d->id,
              d->process_index);
  args->memory = (PJRT_Memory *)d->memories[CJ_MEMORY_DEVICE];
  return NULL;
}

PJRT_Error *cjp_PJRT_Device_MemoryStats(PJRT_Device_MemoryStats_Args *args) {
  CJP_CHECK_ARGS(PJRT_Device_MemoryStats, args, bytes_in_use);
  CJP_DEVICE(PJRT_Device_MemoryStats, d, args->device, "device");
  cj_memory_stats s;
  cj_device_memory_stats(d, &s);
  args->bytes_in_use = s.bytes_in_use;
  /* Write only what the caller's struct holds; report what we track, mark the rest unset. */
#define SET(field, value, is_set)                                          \
  do {                                                                     \
    if (CJP_HAS(PJRT_Device_MemoryStats, args, field##_is_set)) {          \
      args->field = (value);                                               \
      args->field##_is_set = (is_set);                                     \
    }                                                                      \
  } while (0)
  SET(peak_bytes_in_use, s.peak_bytes_in_use, true);
  SET(num_allocs, s.num_allocs, true);
  SET(largest_alloc_size, s.largest_alloc, true);
  SET(bytes_limit, 0, false);
  SET(bytes_reserved, 0, false);
  SET(peak_bytes_reserved, 0, false);
  SET(bytes_reservable_limit, 0, false);
  SET(largest_free_block_bytes, 0, false);
  SET(pool_bytes, 0, false);
  SET(peak_pool_bytes, 0, false);
  SET(peak_allocated_bytes, s.peak_bytes_in_use, true);
#undef SET
  return NULL;
}

CJP_DEVICE_SLOT(PJRT_Device_ClearMemoryStats, device,
    cj_device_clear_memory_stats(d);)

/* The attributes are owned by the device; the deleter has nothing to free. */
static void attributes_deleter(PJRT_Device_Attributes *a) { (void)a; }

CJP_DEVICE_SLOT(PJRT_Device_GetAttributes, attributes_deleter,
    cjp_device_attributes(d, &args->attributes, &args->num_attributes);
    args->device_attributes = (PJRT_Device_Attributes *)d;
    args->attributes_deleter = attributes_deleter;)

CJP_DEVICE_SLOT(PJRT_Device_CreateAsyncTrackingEvent, event,
    cj_tracking_event *e;
    cj_status st = cj_tracking_event_create(d, args->description, args->description_size, &e);
    if (st) return cjp_error_in("PJRT_Device_CreateAsyncTrackingEvent", st);
    args->event = (PJRT_AsyncTrackingEvent *)e;)

CJP_DESTROY_SLOT(PJRT_AsyncTrackingEvent_Destroy, event,
                 cj_tracking_event, cj_tracking_event_check, cj_tracking_event_destroy)

/* Makes the earliest unfinished execution on the device with this launch_id fail with the given
 * error: its outputs become error buffers and its completion event carries the error. `poisoned`
 * says whether one was found. An OK error_code is refused (there would be nothing to fail
 * with). Payloads (0.100) are accepted and not kept: cjrt errors carry none. */
PJRT_Error *cjp_PJRT_Device_PoisonExecution(PJRT_Device_PoisonExecution_Args *args) {
  CJP_ENTER(PJRT_Device_PoisonExecution, poisoned);
  CJP_DEVICE(PJRT_Device_PoisonExecution, d, args->device, "device");
  if (args->error_code == PJRT_Error_Code_OK)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: error_code is OK; poisoning needs an error", fn);
  if (!args->error_message && args->error_message_size)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: error_message is NULL but its size is %zu", fn,
                      args->error_message_size);
  if (CJP_HAS(PJRT_Device_PoisonExecution, args, num_payload) && args->num_payload &&
      !args->payload)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: payload is NULL but num_payload is %zu", fn,
                      args->num_payload);
  cj_status err = cjp_status_from_code(args->error_code, args->error_message,
                                       args->error_message_size, "poisoned execution");
  args->poisoned = cj_device_poison(d, args->launch_id, err);
  return NULL;
}
