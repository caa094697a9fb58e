/* cjrt: PJRT_DeviceDescription_*, PJRT_Device_* and async tracking events. A PJRT_Device is a
 * cj_device; its PJRT_DeviceDescription is the cj_device_desc embedded in it. */
#include <string.h>

#include "pjrt/internal.h"
#include "runtime/executable.h"

#define CJP_DESC(NAME, var, expr)                                                  \
  CJP_HANDLE(NAME, cj_device_desc, cj_device_desc_check, var##_desc, expr,         \
             "device_description");                                                \
  cj_device *var = var##_desc->device

PJRT_Error *cjp_PJRT_DeviceDescription_Id(PJRT_DeviceDescription_Id_Args *args) {
  CJP_CHECK_ARGS(PJRT_DeviceDescription_Id, args, id);
  CJP_DESC(PJRT_DeviceDescription_Id, d, args->device_description);
  args->id = d->id;
  return NULL;
}

PJRT_Error *cjp_PJRT_DeviceDescription_ProcessIndex(
    PJRT_DeviceDescription_ProcessIndex_Args *args) {
  CJP_CHECK_ARGS(PJRT_DeviceDescription_ProcessIndex, args, process_index);
  CJP_DESC(PJRT_DeviceDescription_ProcessIndex, d, args->device_description);
  args->process_index = d->process_index;
  return NULL;
}

PJRT_Error *cjp_PJRT_DeviceDescription_Attributes(PJRT_DeviceDescription_Attributes_Args *args) {
  CJP_CHECK_ARGS(PJRT_DeviceDescription_Attributes, args, attributes);
  CJP_DESC(PJRT_DeviceDescription_Attributes, d, args->device_description);
  /* Only string, int64 and int64-list values: frameworks abort on others. */
  cjp_device_attributes(d, &args->attributes, &args->num_attributes);
  return NULL;
}

PJRT_Error *cjp_PJRT_DeviceDescription_Kind(PJRT_DeviceDescription_Kind_Args *args) {
  CJP_CHECK_ARGS(PJRT_DeviceDescription_Kind, args, device_kind_size);
  CJP_DESC(PJRT_DeviceDescription_Kind, d, args->device_description);
  args->device_kind = cj_client_device_kind(d->client);
  args->device_kind_size = strlen(args->device_kind);
  return NULL;
}

PJRT_Error *cjp_PJRT_DeviceDescription_DebugString(
    PJRT_DeviceDescription_DebugString_Args *args) {
  CJP_CHECK_ARGS(PJRT_DeviceDescription_DebugString, args, debug_string_size);
  CJP_DESC(PJRT_DeviceDescription_DebugString, d, args->device_description);
  args->debug_string = d->debug_string;
  args->debug_string_size = strlen(d->debug_string);
  return NULL;
}

PJRT_Error *cjp_PJRT_DeviceDescription_ToString(PJRT_DeviceDescription_ToString_Args *args) {
  CJP_CHECK_ARGS(PJRT_DeviceDescription_ToString, args, to_string_size);
  CJP_DESC(PJRT_DeviceDescription_ToString, d, args->device_description);
  args->to_string = d->to_string;
  args->to_string_size = strlen(d->to_string);
  return NULL;
}

PJRT_Error *cjp_PJRT_Device_GetDescription(PJRT_Device_GetDescription_Args *args) {
  CJP_CHECK_ARGS(PJRT_Device_GetDescription, args, device_description);
  CJP_DEVICE(PJRT_Device_GetDescription, d, args->device, "device");
  args->device_description = (PJRT_DeviceDescription *)&d->desc;
  return NULL;
}

PJRT_Error *cjp_PJRT_Device_IsAddressable(PJRT_Device_IsAddressable_Args *args) {
  CJP_CHECK_ARGS(PJRT_Device_IsAddressable, args, is_addressable);
  CJP_DEVICE(PJRT_Device_IsAddressable, d, args->device, "device");
  args->is_addressable = d->process_index == d->client->opts.process_index;
  return NULL;
}

PJRT_Error *cjp_PJRT_Device_LocalHardwareId(PJRT_Device_LocalHardwareId_Args *args) {
  CJP_CHECK_ARGS(PJRT_Device_LocalHardwareId, args, local_hardware_id);
  CJP_DEVICE(PJRT_Device_LocalHardwareId, d, args->device, "device");
  args->local_hardware_id = d->local_hardware_id;
  return NULL;
}

PJRT_Error *cjp_PJRT_Device_AddressableMemories(PJRT_Device_AddressableMemories_Args *args) {
  CJP_CHECK_ARGS(PJRT_Device_AddressableMemories, args, num_memories);
  CJP_DEVICE(PJRT_Device_AddressableMemories, d, args->device, "device");
  /* another process's device has no memories this process can address */
  bool local = cj_device_is_local(d);
  args->memories = local ? (PJRT_Memory *const *)d->memories : NULL;
  args->num_memories = local ? (size_t)d->nmemories : 0;
  return NULL;
}

PJRT_Error *cjp_PJRT_Device_DefaultMemory(PJRT_Device_DefaultMemory_Args *args) {
  CJP_CHECK_ARGS(PJRT_Device_DefaultMemory, args, memory);
  CJP_DEVICE(PJRT_Device_DefaultMemory, d, args->device, "device");
  if (!cj_device_is_local(d))
    return cjp_errorf(CJ_INVALID_ARGUMENT,
                      "PJRT_Device_DefaultMemory: device %d belongs to process %d and has no "
                      "memory this process can address",
                      d->id, d->process_index);
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

PJRT_Error *cjp_PJRT_Device_ClearMemoryStats(PJRT_Device_ClearMemoryStats_Args *args) {
  CJP_CHECK_ARGS(PJRT_Device_ClearMemoryStats, args, device);
  CJP_DEVICE(PJRT_Device_ClearMemoryStats, d, args->device, "device");
  cj_device_clear_memory_stats(d);
  return NULL;
}

/* The attributes are owned by the device; the deleter has nothing to free. */
static void attributes_deleter(PJRT_Device_Attributes *a) { (void)a; }

PJRT_Error *cjp_PJRT_Device_GetAttributes(PJRT_Device_GetAttributes_Args *args) {
  CJP_CHECK_ARGS(PJRT_Device_GetAttributes, args, attributes_deleter);
  CJP_DEVICE(PJRT_Device_GetAttributes, d, args->device, "device");
  cjp_device_attributes(d, &args->attributes, &args->num_attributes);
  args->device_attributes = (PJRT_Device_Attributes *)d;
  args->attributes_deleter = attributes_deleter;
  return NULL;
}

PJRT_Error *cjp_PJRT_Device_CreateAsyncTrackingEvent(
    PJRT_Device_CreateAsyncTrackingEvent_Args *args) {
  CJP_CHECK_ARGS(PJRT_Device_CreateAsyncTrackingEvent, args, event);
  CJP_DEVICE(PJRT_Device_CreateAsyncTrackingEvent, d, args->device, "device");
  cj_tracking_event *e;
  cj_status st = cj_tracking_event_create(d, args->description, args->description_size, &e);
  if (st) return cjp_error_in("PJRT_Device_CreateAsyncTrackingEvent", st);
  args->event = (PJRT_AsyncTrackingEvent *)e;
  return NULL;
}

PJRT_Error *cjp_PJRT_AsyncTrackingEvent_Destroy(PJRT_AsyncTrackingEvent_Destroy_Args *args) {
  CJP_CHECK_ARGS(PJRT_AsyncTrackingEvent_Destroy, args, event);
  if (!args->event) return NULL;
  CJP_HANDLE(PJRT_AsyncTrackingEvent_Destroy, cj_tracking_event, cj_tracking_event_check, e,
             args->event, "event");
  cj_tracking_event_destroy(e);
  return NULL;
}

/* Makes the earliest unfinished execution on the device with this launch_id fail with the given
 * error: its outputs become error buffers and its completion event carries the error. `poisoned`
 * says whether one was found. An OK error_code is refused (there would be nothing to fail
 * with). Payloads (0.100) are accepted and not kept: cjrt errors carry none. */
PJRT_Error *cjp_PJRT_Device_PoisonExecution(PJRT_Device_PoisonExecution_Args *args) {
  static const char fn[] = "PJRT_Device_PoisonExecution";
  CJP_CHECK_ARGS(PJRT_Device_PoisonExecution, args, poisoned);
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
