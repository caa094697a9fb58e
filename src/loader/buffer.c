/* libcjrt: buffers: from host data, zero-copy views, back to host, and their properties. */
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"

static cjrt_error *check_shape(cjrt_dtype dtype, const int64_t *dims, size_t rank, const char *what) {
  if (!cjrt__dtype_valid_array(dtype))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: element type %d (%s) has no host representation",
                       what, (int)dtype, cjrt_dtype_name(dtype));
  if (rank && !dims) return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: dims is NULL for rank %zu", what, rank);
  if (cjrt__num_elements(dims, rank, cjrt_dtype_size(dtype)) < 0)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "%s: a dimension is negative or the size overflows", what);
  return NULL;
}

static atomic_llong live_buffers;
CJRT_API int64_t cjrt_live_buffers(void) { return (int64_t)atomic_load(&live_buffers); }

static void destroy_raw(const cjrt_lib *lib, PJRT_Buffer *raw) {
  if (!raw) return;
  PJRT_Buffer_Destroy_Args d = {.struct_size = PJRT_Buffer_Destroy_Args_STRUCT_SIZE, .buffer = raw};
  cjrt_error_free(CJRT_PJRT(lib, PJRT_Buffer_Destroy, &d));
}

cjrt_error *cjrt__wrap_buffer(cjrt_client *c, PJRT_Buffer *raw, cjrt_buffer **out) {
  *out = NULL;
  cjrt_lib *lib = c->lib;
  if (!raw) return cjrt__error(CJRT_INTERNAL, "the plugin returned a NULL buffer");
  cjrt_buffer *b = calloc(1, sizeof *b);
  if (!b) {
    destroy_raw(lib, raw);
    return cjrt__oom();
  }
  b->raw = raw;
  atomic_init(&b->refs, 1);
  atomic_fetch_add(&live_buffers, 1);
  b->client = cjrt__client_retain(c);
  PJRT_Buffer_ElementType_Args ta = {.struct_size = PJRT_Buffer_ElementType_Args_STRUCT_SIZE,
                                     .buffer = raw};
  cjrt_error *err = CJRT_PJRT(lib, PJRT_Buffer_ElementType, &ta);
  if (!err) {
    b->dtype = (cjrt_dtype)ta.type;
    PJRT_Buffer_Dimensions_Args da = {.struct_size = PJRT_Buffer_Dimensions_Args_STRUCT_SIZE,
                                      .buffer = raw};
    err = CJRT_PJRT(lib, PJRT_Buffer_Dimensions, &da);
    if (!err && da.num_dims) {
      if (!da.dims) {
        err = cjrt__error(CJRT_INTERNAL, "PJRT_Buffer_Dimensions returned %zu dims and no array",
                          da.num_dims);
      } else if (!(b->dims = malloc(da.num_dims * sizeof *b->dims))) {
        err = cjrt__oom();
      } else {
        memcpy(b->dims, da.dims, da.num_dims * sizeof *b->dims);
        b->rank = da.num_dims;
      }
    }
  }
  if (!err) {
    PJRT_Buffer_Device_Args va = {.struct_size = PJRT_Buffer_Device_Args_STRUCT_SIZE, .buffer = raw};
    cjrt_error *e = CJRT_PJRT(lib, PJRT_Buffer_Device, &va);
    if (!e) b->device = cjrt__client_find_device(c, va.device);
    cjrt_error_free(e);
  }
  if (err) {
    cjrt_buffer_free(b);
    return err;
  }
  *out = b;
  return NULL;
}

CJRT_API cjrt_error *cjrt_buffer_from_host(cjrt_client *c, cjrt_device *device, cjrt_dtype dtype,
                                           const int64_t *dims, size_t rank, const void *data,
                                           const int64_t *byte_strides, cjrt_buffer **out) {
  *out = NULL;
  if (!c) return cjrt__error(CJRT_INVALID_ARGUMENT, "buffer: client is NULL");
  CJRT_TRY(check_shape(dtype, dims, rank, "buffer"));
  int64_t n = cjrt__num_elements(dims, rank, 0);
  if (n > 0 && !data) return cjrt__error(CJRT_INVALID_ARGUMENT, "buffer: data is NULL");
  cjrt_error *err;
  cjrt_device *d = cjrt__default_device(c, device, &err);
  if (!d) return err;
  static const char empty[16];
  PJRT_Client_BufferFromHostBuffer_Args a = {
      .struct_size = PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE,
      .client = c->raw,
      .data = data ? data : empty,
      .type = (PJRT_Buffer_Type)dtype,
      .dims = dims,
      .num_dims = rank,
      .byte_strides = byte_strides,
      .num_byte_strides = byte_strides ? rank : 0,
      .host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
      .device = d->raw,
  };
  CJRT_TRY(CJRT_PJRT(c->lib, PJRT_Client_BufferFromHostBuffer, &a));
  /* the caller may reuse `data` once we return: wait until the plugin is done with it */
  err = cjrt__await_event(c->lib, a.done_with_host_buffer, "copying host data");
  if (err) {
    destroy_raw(c->lib, a.buffer);
    return err;
  }
  return cjrt__wrap_buffer(c, a.buffer, out);
}

/* on_delete bookkeeping for views: the plugin's callback is forwarded exactly once, and not at
 * all when creating the view failed (the caller then still owns the memory). */
typedef struct {
  atomic_int state; /* 0 creating, 1 created, 2 called while creating */
  void (*fn)(void *, void *);
  void *arg;
} view_ctx;

static void view_on_delete(void *ptr, void *user) {
  view_ctx *v = user;
  int expect = 0;
  if (atomic_compare_exchange_strong(&v->state, &expect, 2)) return; /* decided after create */
  if (v->fn) v->fn(ptr, v->arg);
  free(v);
}

CJRT_API cjrt_error *cjrt_buffer_view(cjrt_client *c, cjrt_device *device, cjrt_dtype dtype,
                                      const int64_t *dims, size_t rank, void *data,
                                      void (*on_delete)(void *data, void *arg), void *arg,
                                      cjrt_buffer **out) {
  *out = NULL;
  if (!c) return cjrt__error(CJRT_INVALID_ARGUMENT, "view: client is NULL");
  CJRT_TRY(check_shape(dtype, dims, rank, "view"));
  if (!data) return cjrt__error(CJRT_INVALID_ARGUMENT, "view: data is NULL");
  cjrt_error *err;
  cjrt_device *d = cjrt__default_device(c, device, &err);
  if (!d) return err;
  view_ctx *v = calloc(1, sizeof *v);
  if (!v) return cjrt__oom();
  atomic_init(&v->state, 0);
  v->fn = on_delete;
  v->arg = arg;
  PJRT_Client_CreateViewOfDeviceBuffer_Args a = {
      .struct_size = PJRT_Client_CreateViewOfDeviceBuffer_Args_STRUCT_SIZE,
      .client = c->raw,
      .device_buffer_ptr = data,
      .dims = dims,
      .num_dims = rank,
      .element_type = (PJRT_Buffer_Type)dtype,
      .device = d->raw,
      .on_delete_callback = view_on_delete,
      .on_delete_callback_arg = v,
      .memory = d->default_memory ? d->default_memory->raw : NULL,
  };
  err = CJRT_PJRT(c->lib, PJRT_Client_CreateViewOfDeviceBuffer, &a);
  if (!err && !a.buffer) err = cjrt__error(CJRT_INTERNAL, "PJRT_Client_CreateViewOfDeviceBuffer returned no buffer");
  int expect = 0;
  bool pending = atomic_compare_exchange_strong(&v->state, &expect, 1);
  if (err) {
    /* the plugin keeps nothing after a failure; the caller keeps its memory */
    free(v);
    return err;
  }
  if (!pending) {
    /* the plugin let go of the memory while creating the view: pass that on now */
    if (v->fn) v->fn(data, v->arg);
    free(v);
  }
  return cjrt__wrap_buffer(c, a.buffer, out);
}

CJRT_API cjrt_buffer *cjrt_buffer_retain(cjrt_buffer *b) {
  if (b) atomic_fetch_add(&b->refs, 1);
  return b;
}

CJRT_API void cjrt_buffer_free(cjrt_buffer *b) {
  if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
  destroy_raw(b->client->lib, b->raw);
  cjrt__client_release(b->client);
  free(b->dims);
  free(b);
  atomic_fetch_sub(&live_buffers, 1);
}

CJRT_API cjrt_dtype cjrt_buffer_dtype(const cjrt_buffer *b) { return b->dtype; }
CJRT_API size_t cjrt_buffer_rank(const cjrt_buffer *b) { return b->rank; }
CJRT_API const int64_t *cjrt_buffer_dims(const cjrt_buffer *b) { return b->dims; }
CJRT_API int64_t cjrt_buffer_num_elements(const cjrt_buffer *b) {
  return cjrt__num_elements(b->dims, b->rank, 0);
}
CJRT_API size_t cjrt_buffer_nbytes(const cjrt_buffer *b) {
  int64_t n = cjrt__num_elements(b->dims, b->rank, cjrt_dtype_size(b->dtype));
  return n < 0 ? 0 : (size_t)n * cjrt_dtype_size(b->dtype);
}
CJRT_API cjrt_device *cjrt_buffer_device(const cjrt_buffer *b) { return b->device; }
CJRT_API cjrt_client *cjrt_buffer_client(const cjrt_buffer *b) { return b->client; }
CJRT_API struct PJRT_Buffer *cjrt_buffer_raw(const cjrt_buffer *b) { return b->raw; }

CJRT_API cjrt_error *cjrt_buffer_await(cjrt_buffer *b) {
  PJRT_Buffer_ReadyEvent_Args a = {.struct_size = PJRT_Buffer_ReadyEvent_Args_STRUCT_SIZE,
                                   .buffer = b->raw};
  CJRT_TRY(CJRT_PJRT(b->client->lib, PJRT_Buffer_ReadyEvent, &a));
  return cjrt__await_event(b->client->lib, a.event, NULL);
}

CJRT_API cjrt_error *cjrt_buffer_to_host(cjrt_buffer *b, void *dst, size_t dst_size) {
  if (!b) return cjrt__error(CJRT_INVALID_ARGUMENT, "to_host: buffer is NULL");
  if (!cjrt__dtype_valid_array(b->dtype))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "to_host: a %s buffer has no host representation",
                       cjrt_dtype_name(b->dtype));
  size_t need = cjrt_buffer_nbytes(b);
  if (dst_size < need || (need && !dst))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "to_host: destination holds %zu bytes; the buffer has %zu",
                       dst ? dst_size : 0, need);
  char empty[16];
  PJRT_Buffer_ToHostBuffer_Args a = {.struct_size = PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE,
                                     .src = b->raw,
                                     .dst = dst ? dst : empty,
                                     .dst_size = dst ? dst_size : 0};
  CJRT_TRY(CJRT_PJRT(b->client->lib, PJRT_Buffer_ToHostBuffer, &a));
  return cjrt__await_event(b->client->lib, a.event, "copying to host");
}

CJRT_API cjrt_error *cjrt_buffer_copy_to_device(cjrt_buffer *b, cjrt_device *device,
                                                cjrt_buffer **out) {
  *out = NULL;
  cjrt_error *err;
  cjrt_device *d = cjrt__default_device(b->client, device, &err);
  if (!d) return err;
  PJRT_Buffer_CopyToDevice_Args a = {.struct_size = PJRT_Buffer_CopyToDevice_Args_STRUCT_SIZE,
                                     .buffer = b->raw,
                                     .dst_device = d->raw};
  CJRT_TRY(CJRT_PJRT(b->client->lib, PJRT_Buffer_CopyToDevice, &a));
  return cjrt__wrap_buffer(b->client, a.dst_buffer, out);
}

CJRT_API cjrt_error *cjrt_buffer_is_on_cpu(cjrt_buffer *b, bool *out) {
  *out = false;
  PJRT_Buffer_IsOnCpu_Args a = {.struct_size = PJRT_Buffer_IsOnCpu_Args_STRUCT_SIZE, .buffer = b->raw};
  CJRT_TRY(CJRT_PJRT(b->client->lib, PJRT_Buffer_IsOnCpu, &a));
  *out = a.is_on_cpu;
  return NULL;
}

CJRT_API cjrt_error *cjrt_buffer_unsafe_pointer(cjrt_buffer *b, uintptr_t *out) {
  *out = 0;
  PJRT_Buffer_UnsafePointer_Args a = {.struct_size = PJRT_Buffer_UnsafePointer_Args_STRUCT_SIZE,
                                      .buffer = b->raw};
  CJRT_TRY(CJRT_PJRT(b->client->lib, PJRT_Buffer_UnsafePointer, &a));
  *out = a.buffer_pointer;
  return NULL;
}

CJRT_API cjrt_error *cjrt_buffer_delete(cjrt_buffer *b) {
  PJRT_Buffer_Delete_Args a = {.struct_size = PJRT_Buffer_Delete_Args_STRUCT_SIZE, .buffer = b->raw};
  return CJRT_PJRT(b->client->lib, PJRT_Buffer_Delete, &a);
}

CJRT_API bool cjrt_buffer_is_deleted(cjrt_buffer *b) {
  PJRT_Buffer_IsDeleted_Args a = {.struct_size = PJRT_Buffer_IsDeleted_Args_STRUCT_SIZE, .buffer = b->raw};
  cjrt_error *e = CJRT_PJRT(b->client->lib, PJRT_Buffer_IsDeleted, &a);
  bool deleted = e ? false : a.is_deleted;
  cjrt_error_free(e);
  return deleted;
}

bool cjrt__client_on_cpu(cjrt_client *c) {
  int v = atomic_load(&c->on_cpu);
  if (v >= 0) return v == 1;
  /* probe with a one-element buffer */
  uint8_t one = 0;
  int64_t dim = 1;
  cjrt_buffer *b = NULL;
  bool on = false;
  cjrt_error *e = cjrt_buffer_from_host(c, NULL, CJRT_U8, &dim, 1, &one, NULL, &b);
  if (!e) e = cjrt_buffer_is_on_cpu(b, &on);
  cjrt_error_free(e);
  cjrt_buffer_free(b);
  atomic_store(&c->on_cpu, on ? 1 : 0);
  return on;
}

/* ---- arrays <-> buffers ---- */

CJRT_API cjrt_error *cjrt_buffer_from_array(cjrt_client *c, cjrt_device *device,
                                            const cjrt_array *a, cjrt_buffer **out) {
  *out = NULL;
  if (!a) return cjrt__error(CJRT_INVALID_ARGUMENT, "buffer: array is NULL");
  int64_t n = cjrt__num_elements(a->dims, a->rank, cjrt_dtype_size(a->dtype));
  if (n < 0 || (size_t)n * cjrt_dtype_size(a->dtype) > a->nbytes)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "buffer: the array's data is smaller than its shape");
  return cjrt_buffer_from_host(c, device, a->dtype, a->dims, a->rank, a->data, NULL, out);
}

CJRT_API cjrt_error *cjrt_buffer_to_array(cjrt_buffer *b, cjrt_array *out) {
  memset(out, 0, sizeof *out);
  if (!b) return cjrt__error(CJRT_INVALID_ARGUMENT, "to_array: buffer is NULL");
  CJRT_TRY(cjrt_array_alloc(b->dtype, b->dims, b->rank, out));
  cjrt_error *err = cjrt_buffer_to_host(b, out->data, out->nbytes);
  if (err) cjrt_array_free(out);
  return err;
}
