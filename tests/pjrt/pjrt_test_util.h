/* cjrt tests: helpers for driving a PJRT plugin through its C API only (dlopen + GetPjrtApi).
 * Included by one test file; everything is static. */
#ifndef CJ_TESTS_PJRT_TEST_UTIL_H
#define CJ_TESTS_PJRT_TEST_UTIL_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "pjrt_c_api.h"

static const PJRT_Api *api;

/* Declares `v` as zeroed T_Args with struct_size set. */
#define ARGS(T, v)          \
  T##_Args v;               \
  memset(&v, 0, sizeof v);  \
  v.struct_size = T##_Args_STRUCT_SIZE

static PJRT_Error_Code err_code(PJRT_Error *e) {
  PJRT_Error_GetCode_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  a.error = e;
  PJRT_Error *x = api->PJRT_Error_GetCode(&a);
  if (x) return PJRT_Error_Code_UNKNOWN;
  return a.code;
}

/* The message, copied into a static buffer (valid until the next call). */
static const char *err_msg(PJRT_Error *e) {
  static char buf[1024];
  PJRT_Error_Message_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  a.error = e;
  api->PJRT_Error_Message(&a);
  size_t n = a.message_size < sizeof buf - 1 ? a.message_size : sizeof buf - 1;
  if (a.message) memcpy(buf, a.message, n);
  buf[n] = 0;
  return buf;
}

static void err_free(PJRT_Error *e) {
  if (!e) return;
  PJRT_Error_Destroy_Args a;
  memset(&a, 0, sizeof a);
  a.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  a.error = e;
  api->PJRT_Error_Destroy(&a);
}

/* Counts a check: `e` must be NULL (the error is freed). */
static int check_ok_at(PJRT_Error *e, const char *what, const char *file, int line) {
  check_count++;
  if (!e) return 1;
  check_failures++;
  fprintf(stderr, "%s:%d: %s failed: [%d] %s\n", file, line, what, (int)err_code(e), err_msg(e));
  err_free(e);
  return 0;
}
#define OK(call) check_ok_at((call), #call, __FILE__, __LINE__)

/* Counts a check: `e` must be an error with `code` whose message contains `needle` (NULL: any);
 * the error is freed. */
static int check_err_at(PJRT_Error *e, PJRT_Error_Code code, const char *needle, const char *what,
                        const char *file, int line) {
  check_count++;
  if (!e) {
    check_failures++;
    fprintf(stderr, "%s:%d: %s succeeded; expected error code %d\n", file, line, what, (int)code);
    return 0;
  }
  PJRT_Error_Code c = err_code(e);
  const char *m = err_msg(e);
  int good = c == code && (!needle || strstr(m, needle));
  if (!good) {
    check_failures++;
    fprintf(stderr, "%s:%d: %s: got [%d] \"%s\"; expected [%d] containing \"%s\"\n", file, line,
            what, (int)c, m, (int)code, needle ? needle : "");
  }
  err_free(e);
  return good;
}
#define ERR(call, code, needle) \
  check_err_at((call), PJRT_Error_Code_##code, (needle), #call, __FILE__, __LINE__)

/* ---- events ---- */

static void event_free(PJRT_Event *e) {
  if (!e) return;
  ARGS(PJRT_Event_Destroy, a);
  a.event = e;
  OK(api->PJRT_Event_Destroy(&a));
}

static int event_ready(PJRT_Event *e) {
  ARGS(PJRT_Event_IsReady, a);
  a.event = e;
  if (!OK(api->PJRT_Event_IsReady(&a))) return -1;
  return a.is_ready;
}

/* Awaits and frees the event; returns its error, or the error of freeing it (caller frees).
 * Counts no checks, so threads may use it (and the helpers built on it). */
static PJRT_Error *event_wait_free(PJRT_Event *e) {
  ARGS(PJRT_Event_Await, a);
  a.event = e;
  PJRT_Error *r = api->PJRT_Event_Await(&a);
  ARGS(PJRT_Event_Destroy, d);
  d.event = e;
  PJRT_Error *r2 = api->PJRT_Event_Destroy(&d);
  if (r) {
    err_free(r2);
    return r;
  }
  return r2;
}

/* ---- clients, devices, memories ---- */

static PJRT_Client *client_create_n(int64_t ndevices) {
  PJRT_NamedValue opt;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  opt.name = "cpu_device_count";
  opt.name_size = strlen(opt.name);
  opt.type = PJRT_NamedValue_kInt64;
  opt.int64_value = ndevices;
  opt.value_size = 1;
  ARGS(PJRT_Client_Create, a);
  a.create_options = &opt;
  a.num_options = ndevices > 0 ? 1 : 0;
  if (!OK(api->PJRT_Client_Create(&a))) return NULL;
  return a.client;
}

static void client_free(PJRT_Client *c) {
  if (!c) return;
  ARGS(PJRT_Client_Destroy, a);
  a.client = c;
  OK(api->PJRT_Client_Destroy(&a));
}

static PJRT_Device *const *client_devices(PJRT_Client *c, size_t *n) {
  ARGS(PJRT_Client_Devices, a);
  a.client = c;
  *n = 0;
  if (!OK(api->PJRT_Client_Devices(&a))) return NULL;
  *n = a.num_devices;
  return a.devices;
}

static PJRT_Device *device_at(PJRT_Client *c, size_t i) {
  size_t n;
  PJRT_Device *const *d = client_devices(c, &n);
  return d && i < n ? d[i] : NULL;
}

static const char *memory_kind(PJRT_Memory *m) {
  static char buf[64];
  ARGS(PJRT_Memory_Kind, a);
  a.memory = m;
  buf[0] = 0;
  if (OK(api->PJRT_Memory_Kind(&a)) && a.kind_size < sizeof buf) {
    memcpy(buf, a.kind, a.kind_size);
    buf[a.kind_size] = 0;
  }
  return buf;
}

static PJRT_Memory *device_memory(PJRT_Device *d, const char *kind) {
  ARGS(PJRT_Device_AddressableMemories, a);
  a.device = d;
  if (!OK(api->PJRT_Device_AddressableMemories(&a))) return NULL;
  for (size_t i = 0; i < a.num_memories; i++)
    if (strcmp(memory_kind(a.memories[i]), kind) == 0) return a.memories[i];
  return NULL;
}

/* ---- buffers ---- */

/* BufferFromHostBuffer; returns the buffer (NULL on error, counted as a failed check). The done
 * event is awaited and freed unless out_done is given. */
static PJRT_Buffer *buffer_from_host_ex(PJRT_Client *c, PJRT_Device *d, PJRT_Memory *m,
                                        PJRT_Buffer_Type t, const int64_t *dims, size_t rank,
                                        const void *data, const int64_t *strides,
                                        PJRT_HostBufferSemantics sem, PJRT_Event **out_done) {
  ARGS(PJRT_Client_BufferFromHostBuffer, a);
  a.client = c;
  a.data = data;
  a.type = t;
  a.dims = dims;
  a.num_dims = rank;
  a.byte_strides = strides;
  a.num_byte_strides = strides ? rank : 0;
  a.host_buffer_semantics = sem;
  a.device = d;
  a.memory = m;
  if (!OK(api->PJRT_Client_BufferFromHostBuffer(&a))) return NULL;
  CHECK(a.done_with_host_buffer != NULL);
  CHECK(a.buffer != NULL);
  if (out_done)
    *out_done = a.done_with_host_buffer;
  else
    OK(event_wait_free(a.done_with_host_buffer));
  return a.buffer;
}

static PJRT_Buffer *buffer_from_host(PJRT_Client *c, PJRT_Device *d, PJRT_Buffer_Type t,
                                     const int64_t *dims, size_t rank, const void *data) {
  return buffer_from_host_ex(c, d, NULL, t, dims, rank, data, NULL,
                             PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, NULL);
}

static void buffer_free(PJRT_Buffer *b) {
  if (!b) return;
  ARGS(PJRT_Buffer_Destroy, a);
  a.buffer = b;
  OK(api->PJRT_Buffer_Destroy(&a));
}

/* ToHostBuffer + await; returns the error of the call or of the event. */
static PJRT_Error *buffer_to_host(PJRT_Buffer *b, void *dst, size_t size,
                                  PJRT_Buffer_MemoryLayout *layout) {
  ARGS(PJRT_Buffer_ToHostBuffer, a);
  a.src = b;
  a.host_layout = layout;
  a.dst = dst;
  a.dst_size = size;
  PJRT_Error *e = api->PJRT_Buffer_ToHostBuffer(&a);
  if (e) return e;
  if (!a.event) return NULL;
  return event_wait_free(a.event);
}

static PJRT_Error *buffer_ready_error(PJRT_Buffer *b) {
  ARGS(PJRT_Buffer_ReadyEvent, a);
  a.buffer = b;
  PJRT_Error *e = api->PJRT_Buffer_ReadyEvent(&a);
  if (e) return e;
  return event_wait_free(a.event);
}

static int buffer_is_deleted(PJRT_Buffer *b) {
  ARGS(PJRT_Buffer_IsDeleted, a);
  a.buffer = b;
  if (!OK(api->PJRT_Buffer_IsDeleted(&a))) return -1;
  return a.is_deleted;
}

static int64_t device_bytes_in_use(PJRT_Device *d) {
  ARGS(PJRT_Device_MemoryStats, a);
  a.device = d;
  if (!OK(api->PJRT_Device_MemoryStats(&a))) return -1;
  return a.bytes_in_use;
}

/* Loads the plugin and its API; NULL on failure. */
static void *plugin_open(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen(%s): %s\n", path, dlerror());
    return NULL;
  }
  const PJRT_Api *(*get)(void) = NULL;
  *(void **)&get = dlsym(h, "GetPjrtApi");
  if (!get) {
    fprintf(stderr, "GetPjrtApi not found in %s\n", path);
    dlclose(h);
    return NULL;
  }
  api = get();
  return h;
}

/* ---- pending buffers through a transfer manager ---- */

typedef struct pending {
  PJRT_AsyncHostToDeviceTransferManager *tm;
  PJRT_Buffer *buffer;
} pending;

static pending pending_f32(PJRT_Client *c, PJRT_Device *d, size_t n) {
  pending p = {NULL, NULL};
  int64_t dim = (int64_t)n;
  PJRT_ShapeSpec spec;
  memset(&spec, 0, sizeof spec);
  spec.struct_size = PJRT_ShapeSpec_STRUCT_SIZE;
  spec.dims = &dim;
  spec.num_dims = 1;
  spec.element_type = PJRT_Buffer_Type_F32;
  ARGS(PJRT_Client_CreateBuffersForAsyncHostToDevice, a);
  a.client = c;
  a.shape_specs = &spec;
  a.num_shape_specs = 1;
  a.memory = device_memory(d, "device");
  if (!OK(api->PJRT_Client_CreateBuffersForAsyncHostToDevice(&a))) return p;
  p.tm = a.transfer_manager;
  ARGS(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer, r);
  r.transfer_manager = p.tm;
  r.buffer_index = 0;
  if (OK(api->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&r))) p.buffer = r.buffer_out;
  return p;
}

/* Fills the pending buffer (which becomes ready) and frees the manager. */
static void pending_fill(pending *p, const float *data, size_t n) {
  ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferData, t);
  t.transfer_manager = p->tm;
  t.buffer_index = 0;
  t.data = data;
  t.offset = 0;
  t.transfer_size = (int64_t)(n * sizeof(float));
  t.is_last_transfer = true;
  if (OK(api->PJRT_AsyncHostToDeviceTransferManager_TransferData(&t)))
    OK(event_wait_free(t.done_with_h2d_transfer));
  ARGS(PJRT_AsyncHostToDeviceTransferManager_Destroy, d);
  d.transfer_manager = p->tm;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_Destroy(&d));
  p->tm = NULL;
}

#endif
