/* cjrt: asynchronous host-to-device transfers (PJRT_Client_CreateBuffersForAsyncHostToDevice,
 * PJRT_AsyncHostToDeviceTransferManager_*) and copy-to-device streams (PJRT_CopyToDeviceStream_*).
 */
#include <stdlib.h>

#include "pjrt/internal.h"

#define CJP_XFER(NAME, var, expr)                                                       \
  CJP_HANDLE(NAME, cj_transfer, cj_transfer_check, var, expr, "transfer_manager")
#define CJP_XFER_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_XFER(NAME, t, args->transfer_manager), __VA_ARGS__)

PJRT_Error *cjp_PJRT_Client_CreateBuffersForAsyncHostToDevice(
    PJRT_Client_CreateBuffersForAsyncHostToDevice_Args *args) {
  CJP_ENTER(PJRT_Client_CreateBuffersForAsyncHostToDevice, transfer_manager);
  CJP_CLIENT_MEMORY(PJRT_Client_CreateBuffersForAsyncHostToDevice, c, mem);
  size_t n = args->num_shape_specs;
  if (n > (size_t)INT32_MAX)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: num_shape_specs %zu is too large", fn, n);
  CJP_REQUIRE(PJRT_Client_CreateBuffersForAsyncHostToDevice, !n || args->shape_specs,
              "shape_specs is NULL but num_shape_specs is %zu", n);
  if (args->num_device_layouts && args->num_device_layouts != n)
    return cjp_errorf(CJ_INVALID_ARGUMENT,
                      "%s: num_device_layouts is %zu; it must be 0 or num_shape_specs (%zu)", fn,
                      args->num_device_layouts, n);
  CJP_REQUIRE(PJRT_Client_CreateBuffersForAsyncHostToDevice,
              !args->num_device_layouts || args->device_layouts, "device_layouts is NULL");
  cj_shape_spec *specs = calloc(n ? n : 1, sizeof *specs);
  if (!specs) return cjp_errorf(CJ_RESOURCE_EXHAUSTED, "%s: out of memory", fn);
  cj_status st = NULL;
  for (size_t i = 0; i < n && !st; i++) {
    const PJRT_ShapeSpec *s = &args->shape_specs[i];
    if (s->struct_size < (size_t)PJRT_STRUCT_SIZE(PJRT_ShapeSpec, element_type)) {
      st = cj_invalid("shape_specs[%zu] has struct_size %zu, smaller than %zu", i, s->struct_size,
                      (size_t)PJRT_ShapeSpec_STRUCT_SIZE);
      break;
    }
    st = cjp_dtype(s->element_type, &specs[i].dtype);
    if (!st) st = cjp_shape(specs[i].dtype, s->dims, s->num_dims);
    if (!st && args->num_device_layouts)
      st = cjp_check_device_layout(args->device_layouts[i], specs[i].dtype, s->dims, s->num_dims);
    if (st) {
      st = cj_status_annotate(st, "shape_specs[%zu]", i);
      break;
    }
    specs[i].rank = (int)s->num_dims;
    specs[i].dims = s->dims;
  }
  cj_transfer *t = NULL;
  if (!st) st = cj_transfer_create(mem, (int)n, specs, &t);
  free(specs);
  CJP_RETURN_OUT(st, transfer_manager, PJRT_AsyncHostToDeviceTransferManager, t);
}

CJP_DESTROY_SLOT(PJRT_AsyncHostToDeviceTransferManager_Destroy, transfer_manager,
                 cj_transfer, cj_transfer_check, cj_transfer_destroy)

PJRT_Error *cjp_PJRT_AsyncHostToDeviceTransferManager_TransferData(
    PJRT_AsyncHostToDeviceTransferManager_TransferData_Args *args) {
  CJP_CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferData, args,
                 done_with_h2d_transfer);
  CJP_XFER(PJRT_AsyncHostToDeviceTransferManager_TransferData, t, args->transfer_manager);
  cj_event *done;
  cj_status st = cj_transfer_data(t, args->buffer_index, args->data, args->offset,
                                  args->transfer_size, args->is_last_transfer, &done);
  if (st) return cjp_error_in("PJRT_AsyncHostToDeviceTransferManager_TransferData", st);
  args->done_with_h2d_transfer = (PJRT_Event *)done;
  return NULL;
}

PJRT_Error *cjp_PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(
    PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args *args) {
  CJP_ENTER(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral, done_with_h2d_transfer);
  CJP_XFER(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral, t, args->transfer_manager);
  cj_dtype dt;
  int64_t strides[CJ_MAX_RANK];
  size_t span;
  cj_status st = cjp_dtype(args->shape_element_type, &dt);
  if (!st) st = cjp_shape(dt, args->shape_dims, args->shape_num_dims);
  if (!st)
    st = cjp_host_layout_strides(args->shape_layout, dt, args->shape_dims, args->shape_num_dims,
                                 strides, &span);
  cj_event *done = NULL;
  if (!st)
    st = cj_transfer_literal(t, args->buffer_index, args->data, dt, args->shape_dims,
                             (int)args->shape_num_dims, strides, &done);
  CJP_RETURN_OUT(st, done_with_h2d_transfer, PJRT_Event, done);
}

CJP_XFER_SLOT(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer, buffer_out,
    cj_buffer *b;
    cj_status st = cj_transfer_retrieve(t, args->buffer_index, &b);
    if (st) return cjp_error_in("PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer", st);
    args->buffer_out = (PJRT_Buffer *)b;)

CJP_XFER_SLOT(PJRT_AsyncHostToDeviceTransferManager_Device, device_out,
    args->device_out = (PJRT_Device *)cj_transfer_device(t);)

CJP_XFER_SLOT(PJRT_AsyncHostToDeviceTransferManager_BufferCount, buffer_count,
    args->buffer_count = (size_t)cj_transfer_count(t);)

CJP_XFER_SLOT(PJRT_AsyncHostToDeviceTransferManager_BufferSize, buffer_size,
    cj_status st = cj_transfer_check_index(t, args->buffer_index);
    if (st) return cjp_error_in("PJRT_AsyncHostToDeviceTransferManager_BufferSize", st);
    args->buffer_size = cj_transfer_buffer_size(t, args->buffer_index);)

PJRT_Error *cjp_PJRT_AsyncHostToDeviceTransferManager_SetBufferError(
    PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args *args) {
  CJP_ENTER(PJRT_AsyncHostToDeviceTransferManager_SetBufferError, error_message_size);
  CJP_XFER(PJRT_AsyncHostToDeviceTransferManager_SetBufferError, t, args->transfer_manager);
  if (args->error_code == PJRT_Error_Code_OK)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: error_code is OK; an error is needed", fn);
  cj_status err = cjp_status_from_code(args->error_code, args->error_message,
                                       args->error_message_size, "the transfer failed");
  return cjp_error_in(fn, cj_transfer_set_error(t, args->buffer_index, err));
}

PJRT_Error *cjp_PJRT_AsyncHostToDeviceTransferManager_AddMetadata(
    PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args *args) {
  CJP_CHECK_ARGS(PJRT_AsyncHostToDeviceTransferManager_AddMetadata, args, num_metadata);
  CJP_XFER(PJRT_AsyncHostToDeviceTransferManager_AddMetadata, t, args->transfer_manager);
  (void)t;
  CJP_REQUIRE(PJRT_AsyncHostToDeviceTransferManager_AddMetadata,
              !args->num_metadata || args->transfer_metadata,
              "transfer_metadata is NULL but num_metadata is %zu", args->num_metadata);
  /* Metadata are hints for schedulers of real DMA engines; the CPU has no use for them. */
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */

#define CJP_STREAM(NAME, var, expr) \
  CJP_HANDLE(NAME, cj_stream, cj_stream_check, var, expr, "stream")
#define CJP_STREAM_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_STREAM(NAME, s, args->stream), __VA_ARGS__)

CJP_DESTROY_SLOT(PJRT_CopyToDeviceStream_Destroy, stream,
                 cj_stream, cj_stream_check, cj_stream_destroy)

PJRT_Error *cjp_PJRT_CopyToDeviceStream_AddChunk(PJRT_CopyToDeviceStream_AddChunk_Args *args) {
  CJP_ENTER(PJRT_CopyToDeviceStream_AddChunk, transfer_complete);
  CJP_REQUIRE(PJRT_CopyToDeviceStream_AddChunk, args->chunk, "chunk is NULL");
  PJRT_Chunk chunk = *args->chunk;
  cj_status st = NULL;
  cj_event *done = NULL;
  if (!cj_stream_check(args->stream))
    st = cj_invalid("%s", args->stream ? "stream is not a live cjrt stream" : "stream is NULL");
  else
    st = cj_stream_add_chunk((cj_stream *)args->stream, chunk.data, chunk.size, &done);
  /* The chunk is ours either way: give it back to its owner. */
  if (chunk.deleter) chunk.deleter(chunk.data, chunk.deleter_arg);
  CJP_RETURN_OUT(st, transfer_complete, PJRT_Event, done);
}

CJP_STREAM_SLOT(PJRT_CopyToDeviceStream_TotalBytes, total_bytes,
    args->total_bytes = cj_stream_total_bytes(s);)

CJP_STREAM_SLOT(PJRT_CopyToDeviceStream_GranuleSize, granule_size_in_bytes,
    args->granule_size_in_bytes = cj_stream_granule(s);)

CJP_STREAM_SLOT(PJRT_CopyToDeviceStream_CurrentBytes, current_bytes,
    args->current_bytes = cj_stream_current_bytes(s);)
