/* cjrt: PJRT_Buffer_*. A PJRT_Buffer is a cj_buffer whose handle owns one reference. */
#include <stdlib.h>

#include "pjrt/internal.h"

#define CJP_BUF(NAME, var, expr) CJP_BUFFER(NAME, var, expr, "buffer")
#define CJP_BUF_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_BUF(NAME, b, args->buffer), __VA_ARGS__)

CJP_DESTROY_SLOT(PJRT_Buffer_Destroy, buffer, cj_buffer, cj_buffer_check, cj_buffer_destroy)

CJP_BUF_SLOT(PJRT_Buffer_ElementType, type,
    args->type = (PJRT_Buffer_Type)cj_buffer_dtype(b);)

CJP_BUF_SLOT(PJRT_Buffer_Dimensions, num_dims,
    args->dims = cj_buffer_dims(b);
    args->num_dims = (size_t)cj_buffer_rank(b);)

CJP_BUF_SLOT(PJRT_Buffer_UnpaddedDimensions, num_dims,
    /* Shapes are static: nothing is padded. */
    args->unpadded_dims = cj_buffer_dims(b);
    args->num_dims = (size_t)cj_buffer_rank(b);)

CJP_BUF_SLOT(PJRT_Buffer_DynamicDimensionIndices, num_dynamic_dims,
    (void)b;
    args->dynamic_dim_indices = NULL;
    args->num_dynamic_dims = 0;)

PJRT_Error *cjp_PJRT_Buffer_GetMemoryLayout(PJRT_Buffer_GetMemoryLayout_Args *args) {
  CJP_CHECK_ARGS(PJRT_Buffer_GetMemoryLayout, args, layout);
  CJP_BUF(PJRT_Buffer_GetMemoryLayout, b, args->buffer);
  PJRT_Buffer_MemoryLayout *l = &args->layout;
  l->struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  l->extension_start = NULL;
  l->type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  l->tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  l->tiled.extension_start = NULL;
  l->tiled.minor_to_major = cj_buffer_minor_to_major(b);
  l->tiled.minor_to_major_size = (size_t)cj_buffer_rank(b);
  l->tiled.tile_dims = NULL;
  l->tiled.tile_dim_sizes = NULL;
  l->tiled.num_tiles = 0;
  return NULL;
}

CJP_BUF_SLOT(PJRT_Buffer_OnDeviceSizeInBytes, on_device_size_in_bytes,
    args->on_device_size_in_bytes = cj_buffer_nbytes(b);)

CJP_BUF_SLOT(PJRT_Buffer_Device, device,
    args->device = (PJRT_Device *)cj_buffer_device(b);)

CJP_BUF_SLOT(PJRT_Buffer_Memory, memory,
    args->memory = (PJRT_Memory *)cj_buffer_memory(b);)

CJP_BUF_SLOT(PJRT_Buffer_Delete, buffer,
    cj_buffer_delete(b);)

CJP_BUF_SLOT(PJRT_Buffer_IsDeleted, is_deleted,
    args->is_deleted = cj_buffer_is_deleted(b);)

PJRT_Error *cjp_PJRT_Buffer_CopyToDevice(PJRT_Buffer_CopyToDevice_Args *args) {
  CJP_ENTER(PJRT_Buffer_CopyToDevice, dst_buffer);
  CJP_BUF(PJRT_Buffer_CopyToDevice, b, args->buffer);
  CJP_DEVICE(PJRT_Buffer_CopyToDevice, d, args->dst_device, "dst_device");
  if (d->client != cj_buffer_client(b))
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: dst_device belongs to another client", fn);
  if (d == cj_buffer_device(b))
    return cjp_errorf(CJ_INVALID_ARGUMENT,
                      "%s: the buffer is already on device %d (CopyToDevice cannot accept the "
                      "same source and destination devices)",
                      fn, d->id);
  if (!cj_device_is_local(d))
    return cjp_errorf(CJ_UNIMPLEMENTED,
                      "%s: dst_device %d belongs to process %d; cross-process buffer transfers "
                      "are not implemented by cjrt (use a collective in a program instead)",
                      fn, d->id, d->process_index);
  cj_buffer *out;
  cj_status st = cj_buffer_copy_to_memory(b, d->memories[CJ_MEMORY_DEVICE], &out);
  CJP_RETURN_OUT(st, dst_buffer, PJRT_Buffer, out);
}

PJRT_Error *cjp_PJRT_Buffer_CopyToMemory(PJRT_Buffer_CopyToMemory_Args *args) {
  CJP_ENTER(PJRT_Buffer_CopyToMemory, dst_buffer);
  CJP_BUF(PJRT_Buffer_CopyToMemory, b, args->buffer);
  CJP_MEMORY(PJRT_Buffer_CopyToMemory, m, args->dst_memory, "dst_memory");
  cj_buffer *out;
  cj_status st = cj_buffer_copy_to_memory(b, m, &out);
  CJP_RETURN_OUT(st, dst_buffer, PJRT_Buffer, out);
}

PJRT_Error *cjp_PJRT_Buffer_ToHostBuffer(PJRT_Buffer_ToHostBuffer_Args *args) {
  CJP_ENTER(PJRT_Buffer_ToHostBuffer, event);
  CJP_BUFFER(PJRT_Buffer_ToHostBuffer, b, args->src, "src");
  int64_t strides[CJ_MAX_RANK];
  size_t need;
  cj_status st = cjp_host_layout_strides(args->host_layout, cj_buffer_dtype(b), cj_buffer_dims(b),
                                         (size_t)cj_buffer_rank(b), strides, &need);
  if (st) return cjp_error_in(fn, cj_status_annotate(st, "host_layout"));
  if (!args->dst) {
    /* A size query. */
    args->dst_size = need;
    args->event = NULL;
    return NULL;
  }
  if (args->dst_size < need)
    return cjp_errorf(CJ_INVALID_ARGUMENT,
                      "%s: dst_size %zu is smaller than the %zu bytes the array needs", fn,
                      args->dst_size, need);
  cj_event *done;
  st = cj_buffer_to_host(b, args->dst, strides, &done);
  CJP_RETURN_OUT(st, event, PJRT_Event, done);
}

CJP_BUF_SLOT(PJRT_Buffer_IsOnCpu, is_on_cpu,
    args->is_on_cpu = cj_client_memory_is_host(cj_buffer_client(b));)

CJP_BUF_SLOT(PJRT_Buffer_ReadyEvent, event,
    cj_event *e;
    cj_status st = cj_buffer_ready_event(b, &e);
    if (st) return cjp_error_in("PJRT_Buffer_ReadyEvent", st);
    args->event = (PJRT_Event *)e;)

CJP_BUF_SLOT(PJRT_Buffer_UnsafePointer, buffer_pointer,
    void *p;
    cj_status st = cj_buffer_data_pointer(b, &p);
    if (st) return cjp_error_in("PJRT_Buffer_UnsafePointer", st);
    args->buffer_pointer = (uintptr_t)p;)

CJP_BUF_SLOT(PJRT_Buffer_OpaqueDeviceMemoryDataPointer, device_memory_ptr,
    void *p;
    cj_status st = cj_buffer_data_pointer(b, &p);
    if (st) return cjp_error_in("PJRT_Buffer_OpaqueDeviceMemoryDataPointer", st);
    args->device_memory_ptr = p;)

PJRT_Error *cjp_PJRT_Buffer_IncreaseExternalReferenceCount(
    PJRT_Buffer_IncreaseExternalReferenceCount_Args *args) {
  CJP_CHECK_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount, args, buffer);
  CJP_BUF(PJRT_Buffer_IncreaseExternalReferenceCount, b, args->buffer);
  return cjp_error_in("PJRT_Buffer_IncreaseExternalReferenceCount", cj_buffer_external_ref(b, 1));
}

PJRT_Error *cjp_PJRT_Buffer_DecreaseExternalReferenceCount(
    PJRT_Buffer_DecreaseExternalReferenceCount_Args *args) {
  CJP_CHECK_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount, args, buffer);
  CJP_BUF(PJRT_Buffer_DecreaseExternalReferenceCount, b, args->buffer);
  return cjp_error_in("PJRT_Buffer_DecreaseExternalReferenceCount",
                      cj_buffer_external_ref(b, -1));
}

CJP_BUF_SLOT(PJRT_Buffer_CopyRawToHost, event,
    cj_event *done;
    cj_status st =
        cj_buffer_copy_raw_to_host(b, args->dst, args->offset, args->transfer_size, &done);
    if (st) return cjp_error_in("PJRT_Buffer_CopyRawToHost", st);
    args->event = (PJRT_Event *)done;)

/* The caller hands over the destination (or an error) for a CopyRawToHostFuture. */
static void raw_future_ready(PJRT_Buffer_CopyRawToHostFuture_Callback_Args *a) {
  typedef PJRT_Buffer_CopyRawToHostFuture_Callback_Args cb_args;
  if (!a || a->struct_size < (size_t)PJRT_STRUCT_SIZE(cb_args, callback_data))
    return; /* not even callback_data can be read */
  cj_raw_copy *rc = a->callback_data;
  if (a->struct_size < (size_t)PJRT_STRUCT_SIZE(cb_args, dst)) {
    /* Fail the copy rather than leave its event pending forever. */
    cj_raw_copy_complete(rc, NULL,
                         cj_invalid("PJRT_Buffer_CopyRawToHostFuture: the callback's struct_size "
                                    "%zu is too small",
                                    a->struct_size));
    return;
  }
  cj_status err = cjp_status_from_code(a->error_code, a->error_message, a->error_message_size,
                                       "the destination future failed");
  cj_raw_copy_complete(rc, err ? NULL : a->dst, err);
}

PJRT_Error *cjp_PJRT_Buffer_CopyRawToHostFuture(PJRT_Buffer_CopyRawToHostFuture_Args *args) {
  CJP_CHECK_ARGS(PJRT_Buffer_CopyRawToHostFuture, args, future_ready_callback);
  CJP_BUF(PJRT_Buffer_CopyRawToHostFuture, b, args->buffer);
  cj_event *done;
  cj_raw_copy *rc;
  cj_status st = cj_buffer_copy_raw_deferred(b, args->offset, args->transfer_size, &done, &rc);
  if (st) return cjp_error_in("PJRT_Buffer_CopyRawToHostFuture", st);
  args->event = (PJRT_Event *)done;
  args->callback_data = rc;
  args->future_ready_callback = raw_future_ready;
  return NULL;
}

/* The caller reports that the control dependency of a donation is satisfied (or failed). */
static void donation_dependency_ready(PJRT_Buffer_DonateWithControlDependency_Callback_Args *a) {
  typedef PJRT_Buffer_DonateWithControlDependency_Callback_Args cb_args;
  if (!a || a->struct_size < (size_t)PJRT_STRUCT_SIZE(cb_args, callback_data)) return;
  cj_event *dep = a->callback_data;
  if (!cj_event_check(dep)) return;
  cj_status st =
      a->struct_size < (size_t)PJRT_STRUCT_SIZE(cb_args, error_message_size)
          ? cj_invalid("PJRT_Buffer_DonateWithControlDependency: the callback's struct_size %zu "
                       "is too small",
                       a->struct_size)
          : cjp_status_from_code(a->error_code, a->error_message, a->error_message_size,
                                 "the donation's control dependency failed");
  /* the dependency can be set already (a second call, reported by the caller's check) */
  cj_status_ignore(cj_event_set(dep, st));
  cj_event_release(dep);
}

PJRT_Error *cjp_PJRT_Buffer_DonateWithControlDependency(
    PJRT_Buffer_DonateWithControlDependency_Args *args) {
  CJP_ENTER(PJRT_Buffer_DonateWithControlDependency, out_buffer);
  CJP_BUF(PJRT_Buffer_DonateWithControlDependency, b, args->buffer);
  cj_event *dep = cj_event_create(false);
  if (!dep) return cjp_errorf(CJ_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  cj_buffer *out;
  cj_status st = cj_buffer_donate(b, dep, &out);
  if (st) {
    cj_event_release(dep);
    return cjp_error_in(fn, st);
  }
  args->callback_data = dep; /* our reference, dropped by the callback */
  args->dependency_ready_callback = donation_dependency_ready;
  args->out_buffer = (PJRT_Buffer *)out;
  return NULL;
}

PJRT_Error *cjp_PJRT_Buffer_Bitcast(PJRT_Buffer_Bitcast_Args *args) {
  CJP_ENTER(PJRT_Buffer_Bitcast, out_buffer);
  CJP_BUF(PJRT_Buffer_Bitcast, b, args->buffer);
  cj_dtype dt;
  cj_status st = cjp_device_array(args->element_type, args->dims, args->num_dims,
                                  args->device_layout, &dt);
  cj_buffer *out = NULL;
  if (!st) st = cj_buffer_bitcast(b, dt, args->dims, (int)args->num_dims, &out);
  CJP_RETURN_OUT(st, out_buffer, PJRT_Buffer, out);
}
