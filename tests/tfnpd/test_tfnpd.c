/* src/tfnpd, TensorFlow's next-pluggable-device entry point, from outside the plugin:
 *  - its structs have the offsets TensorFlow 2.21's headers give (measured with g++ on
 *    plugin_c_api.h and xla/stream_executor/tpu/c_api_decl.h of the tensorflow-cpu 2.21 wheel);
 *  - the plugin exports TFNPD_InitPlugin and answers it, loaded with dlopen;
 *  - built plainly, this process has no TensorFlow: calls that need TensorFlow's C API fail
 *    (NULL results, a message on stderr) and nothing crashes;
 *  - built with FAKE_TF (test_tfnpd_fake_tf), the executable exports TF_SetStatus,
 *    TF_TensorData and TF_TensorByteSize of its own, which the plugin finds the way it finds
 *    TensorFlow's: then the statuses and the tensor copies are checked.
 * Usage: test_tfnpd PLUGIN.so */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfnpd/tfnpd.h"

_Static_assert(sizeof(tfnpd_api) == 176, "TFNPD_Api is 176 bytes");
_Static_assert(offsetof(tfnpd_api, new_event) == 16, "TFNPD_NewDeviceEvent");
_Static_assert(offsetof(tfnpd_api, allocator_create) == 56, "TFNPD_DeviceAllocatorCreate");
_Static_assert(offsetof(tfnpd_api, context_create) == 104, "TFNPD_DeviceContextCreate");
_Static_assert(offsetof(tfnpd_api, device_to_host) == 120, "TFNPD_DeviceTensorToHostTensor");
_Static_assert(offsetof(tfnpd_api, same_device_buffer_copy) == 144, "SameDevicePjRtBufferCopy");
_Static_assert(offsetof(tfnpd_api, xla_shape_to_device_shape) == 152, "XlaShapeToDeviceShape");
_Static_assert(offsetof(tfnpd_api, device_count) == 160, "TFNPD_GetDeviceCount");
_Static_assert(offsetof(tfnpd_api, init_device_states) == 168, "InitPluginInternalDeviceStates");
_Static_assert(sizeof(tfnpd_plugin_params) == 40, "TFNPD_PluginParams");
_Static_assert(offsetof(tfnpd_plugin_params, device_type) == 16, "device_type");
_Static_assert(offsetof(tfnpd_plugin_params, priority) == 32, "priority");
_Static_assert(offsetof(tfnpd_plugin_params, is_pluggable_device) == 36, "is_pluggable_device");
_Static_assert(offsetof(tfnpd_plugin_params, use_pjrt_on_demand_compile) == 37, "on demand");
_Static_assert(sizeof(tfnpd_xla_shape) == 536, "XLA_Shape");
_Static_assert(offsetof(tfnpd_xla_shape, dynamic_dimensions) == 64, "dynamic_dimensions");
_Static_assert(offsetof(tfnpd_xla_shape, tuple_shapes) == 80, "tuple_shapes");
_Static_assert(offsetof(tfnpd_xla_shape, has_layout) == 92, "has_layout");
_Static_assert(offsetof(tfnpd_xla_shape, layout) == 96, "layout");
_Static_assert(offsetof(tfnpd_xla_layout, index_primitive_type) == 400, "index_primitive_type");
_Static_assert(offsetof(tfnpd_xla_layout, tail_padding_alignment_in_elements) == 432, "tail");

static int failures;
#define CHECK(cond)                                                    \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                      \
    }                                                                  \
  } while (0)

#ifdef FAKE_TF
/* A status and a tensor of our own, behind TensorFlow's names (found through RTLD_DEFAULT). */
struct TSL_Status {
  int code;
  char msg[512];
};
struct TF_Tensor {
  void *data;
  size_t size;
};
__attribute__((visibility("default"))) void TF_SetStatus(TF_Status *s, int code, const char *m) {
  s->code = code;
  snprintf(s->msg, sizeof s->msg, "%s", m);
}
__attribute__((visibility("default"))) void *TF_TensorData(const TF_Tensor *t) { return t->data; }
__attribute__((visibility("default"))) size_t TF_TensorByteSize(const TF_Tensor *t) {
  return t->size;
}
#endif

static int called;
static void callback(void *arg) { called = *(int *)arg; }

static void check_events_and_allocator(const tfnpd_api *api) {
  tfnpd_event *e = api->new_event();
  CHECK(e && api->event_is_ready(e));
  int v = 7;
  api->event_and_then(e, callback, &v);
  CHECK(called == 7);
  api->event_await(NULL, NULL); /* a NULL event is reported, not dereferenced */
  api->event_delete(e);

  tfnpd_allocator *a = api->allocator_create(0);
  CHECK(a != NULL);
  void *p = api->allocate_raw(a, 256, 100);
  CHECK(p && (uintptr_t)p % 256 == 0);
  if (p) memset(p, 1, 100);
  api->deallocate_raw(a, p);
  void *z = api->allocate_raw(a, 0, 0);
  CHECK(z != NULL);
  api->deallocate_raw(a, z);
  CHECK(api->allocate_raw(a, 64, SIZE_MAX - 8) == NULL); /* too large: NULL, not a wrap */
  tfnpd_string_view name = api->allocator_name(a);
  CHECK(name.len == 9 && memcmp(name.data, "cjrt_host", 9) == 0);
  CHECK(!api->allocator_allocates_opaque_handle(a));
  api->allocator_delete(a);
}

static void check_shapes(const tfnpd_api *api, TF_Status *status) {
  tfnpd_xla_shape in, out;
  memset(&in, 0, sizeof in);
  in.element_type = 11; /* F32 */
  in.dimensions.size = 2;
  in.dimensions.inlined[0] = 3;
  in.dimensions.inlined[1] = 4;
  memset(&out, 0xab, sizeof out);
  api->xla_shape_to_device_shape(&in, 1, false, 0, &out, status);
  CHECK(memcmp(&in, &out, sizeof in) == 0);
  /* An empty tuple array (TensorFlow's ToC makes one) is the caller's: not handed on. */
  tfnpd_xla_shape none[1];
  in.tuple_shapes = none;
  api->xla_shape_to_device_shape(&in, 1, false, 0, &out, status);
  CHECK(out.tuple_shapes == NULL && out.dimensions.inlined[1] == 4 && out.element_type == 11);
  in.tuple_shapes = NULL;
  in.dimensions.size = 7; /* stored on TensorFlow's heap: refused, out left an empty shape */
  memset(&out, 0xab, sizeof out);
  api->xla_shape_to_device_shape(&in, 1, false, 0, &out, status);
  CHECK(out.dimensions.size == 0 && out.ntuple_shapes == 0 && !out.has_layout);
#ifdef FAKE_TF
  CHECK(status->code == CJ_UNIMPLEMENTED && strstr(status->msg, "rank above 6"));
#endif
}

static void check_copies(const tfnpd_api *api, TF_Status *status) {
  tfnpd_context *c = api->context_create(0);
  CHECK(c != NULL);
#ifdef FAKE_TF
  float src[4] = {1, 2, 3, 4}, dst[4] = {0}, small[2];
  TF_Tensor ts = {src, sizeof src}, td = {dst, sizeof dst}, tsmall = {small, sizeof small};
  tfnpd_event *e = api->host_to_device(c, &ts, &td, status);
  CHECK(e && status->code == 0 && dst[3] == 4);
  api->event_delete(e);
  CHECK(api->device_to_host(c, &ts, &tsmall, status) == NULL);
  CHECK(status->code == CJ_INVALID_ARGUMENT && strstr(status->msg, "has 16 bytes but"));
  CHECK(api->device_to_host(c, NULL, &td, status) == NULL && status->code == CJ_INVALID_ARGUMENT);
  CHECK(api->same_device_buffer_copy(NULL, NULL, status) == NULL);
  CHECK(status->code == CJ_INVALID_ARGUMENT && strstr(status->msg, "NULL"));
#else
  /* No TensorFlow in this process: no TF_TensorData, so no copy; stderr says why. */
  CHECK(api->host_to_device(c, (const TF_Tensor *)c, (TF_Tensor *)c, status) == NULL);
  CHECK(api->same_device_buffer_copy(NULL, NULL, status) == NULL);
#endif
  tfnpd_event *e2 = api->same_device_tensor_copy(c);
  CHECK(e2 != NULL);
  api->event_delete(e2);
  api->context_delete(c);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  typedef const tfnpd_api *init_fn(tfnpd_plugin_params *, TF_Status *);
  init_fn *init;
  *(void **)&init = dlsym(lib, "TFNPD_InitPlugin");
  CHECK(init != NULL);
  CHECK(dlsym(lib, "GetPjrtApi") != NULL);
  if (!init) return 1;
#ifdef FAKE_TF
  struct TSL_Status st = {0};
  TF_Status *status = &st;
#else
  TF_Status *status = NULL; /* never dereferenced without TF_SetStatus */
#endif
  CHECK(init(NULL, status) == NULL);
  tfnpd_plugin_params params;
  memset(&params, 0, sizeof params);
  params.struct_size = 8;
  CHECK(init(&params, status) == NULL);
#ifdef FAKE_TF
  CHECK(st.code == CJ_INVALID_ARGUMENT && strstr(st.msg, "struct_size 8"));
#endif
  unsetenv("TF_XLA_FLAGS");
  params.struct_size = offsetof(tfnpd_plugin_params, is_pluggable_device) + 1; /* TF 2.21's */
  const tfnpd_api *api = init(&params, status);
  CHECK(api && !params.use_pjrt_on_demand_compile);
  static const struct {
    const char *flags;
    bool on;
  } cases[] = {{"--tf_xla_use_device_api_for_xla_launch=true", false},
               {"--tf_xla_use_device_api=false", false},
               {"--tf_xla_use_device_api_for_compile_on_demand", true},
               {"--xla_foo=1  --tf_xla_use_device_api=true", true},
               {"--tf_xla_use_device_api=1 --x", true}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    setenv("TF_XLA_FLAGS", cases[i].flags, 1);
    api = init(&params, status);
    CHECK(api && params.use_pjrt_on_demand_compile == cases[i].on);
  }
  if (!api) return 1;
  CHECK(strcmp(params.device_type, "CJRT") == 0);
  CHECK(strcmp(params.compilation_device_name, "XLA_CPU_JIT") == 0);
  CHECK(params.is_pluggable_device);
  CHECK(api->struct_size == sizeof(tfnpd_api));
  for (size_t off = offsetof(tfnpd_api, new_event); off < sizeof *api; off += sizeof(void *)) {
    void *fn;
    memcpy(&fn, (const char *)api + off, sizeof fn);
    CHECK(fn != NULL);
  }
  CHECK(api->device_count(status) == 1);
  /* It creates TensorFlow's PJRT client through TensorFlow's C++ functions: not found here. */
  api->init_device_states(status);
#ifdef FAKE_TF
  CHECK(st.code == CJ_UNIMPLEMENTED && strstr(st.msg, "is not in this process"));
#endif
  check_events_and_allocator(api);
  check_shapes(api, status);
  check_copies(api, status);
  dlclose(lib);
  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("tfnpd: all checks passed\n");
  return failures ? 1 : 0;
}
