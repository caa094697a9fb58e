/* TFNPD_InitPlugin: cjrt as TensorFlow's next pluggable device "CJRT" (tfnpd.h,
 * docs/TENSORFLOW.md). Everything runs on the host CPU, so device memory is host memory: events
 * are ready when made, and tensor copies are memcpy. TensorFlow 2.21 moves data and runs
 * compiled clusters through the PJRT client it creates from GetPjrtApi (same library); this
 * table covers what it still asks of the plugin itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfnpd/tfnpd.h"

/* The names TensorFlow sees: the device type ("/device:CJRT:0") and the XLA compilation device
 * whose op kernels (tf2xla) build the HLO cjrt compiles (the CPU's set). */
#define TFNPD_DEVICE_TYPE "CJRT"
#define TFNPD_COMPILATION_DEVICE "XLA_CPU_JIT"
/* A low priority: ops land on CJRT only where placed there. */
#define TFNPD_PRIORITY 1

struct tfnpd_event {
  int ready; /* always 1: the host finishes a copy before returning */
};
struct tfnpd_allocator {
  int ordinal;
};
struct tfnpd_context {
  int ordinal;
};

/* ---- events ---- */

static tfnpd_event *event_new(void) {
  tfnpd_event *e = calloc(1, sizeof *e);
  if (e) e->ready = 1;
  return e;
}
static void event_await(tfnpd_event *e, TF_Status *status) {
  if (!e) {
    (void)tfnpd_set_status(status, CJ_INVALID_ARGUMENT, "cjrt: TFNPD_DeviceEventAwait: NULL event");
    return;
  }
  (void)tfnpd_set_status(status, CJ_OK, "");
}
static bool event_is_ready(tfnpd_event *e) { return e != NULL; }
static void event_and_then(tfnpd_event *e, void (*callback)(void *), void *arg) {
  if (callback) callback(arg);
}
static void event_delete(tfnpd_event *e) { free(e); }

/* ---- allocator: host memory ---- */

static tfnpd_allocator *allocator_create(int ordinal) {
  tfnpd_allocator *a = calloc(1, sizeof *a);
  if (a) a->ordinal = ordinal;
  return a;
}
static void *allocate_raw(tfnpd_allocator *a, size_t alignment, size_t num_bytes) {
  /* aligned_alloc wants a power-of-two alignment (at least a pointer's) and a size that is a
   * multiple of it; a request of 0 bytes still gets a distinct pointer. */
  size_t align = 64;
  while (align < alignment && align < ((size_t)1 << 30)) align <<= 1;
  if (alignment > align) return NULL;
  size_t n = num_bytes ? num_bytes : 1;
  if (n > SIZE_MAX - align) return NULL;
  n = (n + align - 1) / align * align;
  return aligned_alloc(align, n);
}
static void deallocate_raw(tfnpd_allocator *a, void *ptr) { free(ptr); }
static tfnpd_string_view allocator_name(tfnpd_allocator *a) {
  tfnpd_string_view v = {"cjrt_host", sizeof "cjrt_host" - 1};
  return v;
}
static bool allocator_opaque(tfnpd_allocator *a) { return false; }
static void allocator_delete(tfnpd_allocator *a) { free(a); }

/* ---- tensor copies ---- */

static tfnpd_context *context_create(int ordinal) {
  tfnpd_context *c = calloc(1, sizeof *c);
  if (c) c->ordinal = ordinal;
  return c;
}
static void context_delete(tfnpd_context *c) { free(c); }

static CJ_MUST_USE cj_status copy_tensor(const TF_Tensor *src, const char *src_what,
                                         TF_Tensor *dst, const char *dst_what) {
  void *s, *d;
  size_t ns, nd;
  CJ_RETURN_IF_ERROR(tfnpd_tensor_bytes(src, src_what, &s, &ns));
  CJ_RETURN_IF_ERROR(tfnpd_tensor_bytes(dst, dst_what, &d, &nd));
  if (ns != nd)
    return cj_status_make(CJ_INVALID_ARGUMENT, "%s has %zu bytes but %s has %zu", src_what, ns,
                          dst_what, nd);
  if (ns) memmove(d, s, ns);
  return NULL;
}

/* The copy, then an event (ready) for TensorFlow to wait on; NULL with *status set on failure. */
static tfnpd_event *copy_and_event(const TF_Tensor *src, const char *src_what, TF_Tensor *dst,
                                   const char *dst_what, TF_Status *status) {
  cj_status st = copy_tensor(src, src_what, dst, dst_what);
  tfnpd_event *e = NULL;
  if (!st && !(e = event_new())) st = cj_status_make(CJ_RESOURCE_EXHAUSTED, "out of memory");
  if (st) st = cj_status_annotate(st, "cjrt: tensor copy");
  tfnpd_report(status, st);
  return e;
}

static tfnpd_event *device_to_host(tfnpd_context *c, const TF_Tensor *device_tensor,
                                   TF_Tensor *cpu_tensor, TF_Status *status) {
  return copy_and_event(device_tensor, "the device tensor", cpu_tensor, "the host tensor", status);
}
static tfnpd_event *host_to_device(tfnpd_context *c, const TF_Tensor *cpu_tensor,
                                   TF_Tensor *device_tensor, TF_Status *status) {
  return copy_and_event(cpu_tensor, "the host tensor", device_tensor, "the device tensor", status);
}
/* TensorFlow passes no tensors here (the copy itself is its own): nothing to wait for. */
static tfnpd_event *same_device_tensor_copy(tfnpd_context *c) { return event_new(); }

static struct PJRT_Buffer *same_device_buffer_copy(struct PJRT_Buffer *src,
                                                   struct PJRT_Client *client, TF_Status *status) {
  struct PJRT_Buffer *out = NULL;
  cj_status st = src ? cjp_tfnpd_buffer_copy(src, &out)
                     : cj_status_make(CJ_INVALID_ARGUMENT, "the source buffer is NULL");
  if (st) st = cj_status_annotate(st, "cjrt: TFNPD_SameDevicePjRtBufferCopy");
  tfnpd_report(status, st);
  return out;
}

/* ---- shapes: the device keeps XLA's shape as it is ---- */

/* The shape's lists all stored inline (nothing for the receiver to free twice). TensorFlow
 * frees tuple_shapes only when ntuple_shapes > 0 (it may hold an empty array otherwise). */
static bool shape_inline(const tfnpd_xla_shape *s) {
  return s->ntuple_shapes == 0 && s->dimensions.size <= TFNPD_INLINED &&
         s->dynamic_dimensions.size <= TFNPD_INLINED &&
         (!s->has_layout || (s->layout.minor_to_major.size <= TFNPD_INLINED &&
                             s->layout.tiles.size == 0));
}

static void xla_shape_to_device_shape(tfnpd_xla_shape *xla_shape, int data_type,
                                      bool use_fast_memory, int layout_preference,
                                      tfnpd_xla_shape *device_shape, TF_Status *status) {
  cj_status st = NULL;
  /* TensorFlow destroys *device_shape whatever the status: it must always be a valid shape
   * (empty lists, no layout, no tuple) that owns nothing. */
  if (device_shape) memset(device_shape, 0, sizeof *device_shape);
  if (!xla_shape || !device_shape)
    st = cj_status_make(CJ_INVALID_ARGUMENT, "NULL shape");
  else if (!shape_inline(xla_shape))
    /* Lists longer than 6 live on TensorFlow's C++ heap (new[]), which C cannot allocate. */
    st = cj_status_make(CJ_UNIMPLEMENTED,
                        "shapes of rank above %d, tuples or tiled layouts are not supported "
                        "(rank %lld, %d tuple elements)",
                        TFNPD_INLINED, (long long)xla_shape->dimensions.size,
                        xla_shape->ntuple_shapes);
  else {
    *device_shape = *xla_shape;
    device_shape->tuple_shapes = NULL; /* the caller's; not the copy's to free */
  }
  if (st) st = cj_status_annotate(st, "cjrt: TFNPD_XlaShapeToDeviceShapeRepresentation");
  tfnpd_report(status, st);
}

/* ---- devices ---- */

/* TensorFlow creates the PJRT client without options: cjrt's default client has one device. */
static int32_t device_count(TF_Status *status) {
  (void)tfnpd_set_status(status, CJ_OK, "");
  return 1;
}
/* TensorFlow calls this before it creates the devices, after it registered GetPjrtApi for
 * "CJRT": the moment to give it the PJRT client it will look for (tfnpd_client.c). */
static void init_device_states(TF_Status *status) {
  (void)tfnpd_set_status(status, CJ_OK, "");
  tfnpd_create_client(TFNPD_DEVICE_TYPE, TFNPD_COMPILATION_DEVICE, status);
}

static const tfnpd_api api = {
    .struct_size = offsetof(tfnpd_api, init_device_states) + sizeof(void (*)(TF_Status *)),
    .priv = NULL,
    .new_event = event_new,
    .event_await = event_await,
    .event_is_ready = event_is_ready,
    .event_and_then = event_and_then,
    .event_delete = event_delete,
    .allocator_create = allocator_create,
    .allocate_raw = allocate_raw,
    .deallocate_raw = deallocate_raw,
    .allocator_name = allocator_name,
    .allocator_allocates_opaque_handle = allocator_opaque,
    .allocator_delete = allocator_delete,
    .context_create = context_create,
    .context_delete = context_delete,
    .device_to_host = device_to_host,
    .host_to_device = host_to_device,
    .same_device_tensor_copy = same_device_tensor_copy,
    .same_device_buffer_copy = same_device_buffer_copy,
    .xla_shape_to_device_shape = xla_shape_to_device_shape,
    .device_count = device_count,
    .init_device_states = init_device_states,
};

/* Whether TensorFlow's flags (TF_XLA_FLAGS, whitespace-separated) enable its PJRT "device API"
 * for on-demand compilation: --tf_xla_use_device_api (everywhere; jit_compile on CJRT needs
 * this one) or --tf_xla_use_device_api_for_compile_on_demand, bare or =true/=1. */
static bool device_api_on(const char *flags) {
  static const char *const names[] = {"--tf_xla_use_device_api",
                                      "--tf_xla_use_device_api_for_compile_on_demand"};
  for (const char *p = flags; p && *p;) {
    p += strspn(p, " \t\n");
    size_t n = strcspn(p, " \t\n");
    for (size_t k = 0; k < 2; k++) {
      size_t m = strlen(names[k]);
      if (n < m || memcmp(p, names[k], m) != 0) continue;
      const char *v = p + m;
      size_t vn = n - m;
      if (vn == 0 || (vn == 5 && memcmp(v, "=true", 5) == 0) || (vn == 2 && memcmp(v, "=1", 2) == 0))
        return true;
    }
    p += n;
  }
  return false;
}

__attribute__((visibility("default"))) const tfnpd_api *TFNPD_InitPlugin(
    tfnpd_plugin_params *params, TF_Status *status) {
  if (!params) {
    (void)tfnpd_set_status(status, CJ_INVALID_ARGUMENT, "cjrt: TFNPD_InitPlugin: params is NULL");
    return NULL;
  }
  /* TensorFlow 2.21 fills struct_size up to is_pluggable_device; its struct always has
   * use_pjrt_on_demand_compile after it, which it reads. */
  if (params->struct_size < offsetof(tfnpd_plugin_params, is_pluggable_device) + sizeof(bool)) {
    char msg[160];
    snprintf(msg, sizeof msg, "cjrt: TFNPD_InitPlugin: params struct_size %zu is too small",
             params->struct_size);
    (void)tfnpd_set_status(status, CJ_INVALID_ARGUMENT, msg);
    return NULL;
  }
  params->device_type = TFNPD_DEVICE_TYPE;
  params->compilation_device_name = TFNPD_COMPILATION_DEVICE;
  params->priority = TFNPD_PRIORITY;
  params->is_pluggable_device = true;
  /* On-demand compilation registers TensorFlow's XLA device kernels (XlaLaunch, _XlaCompile,
   * _XlaRun and per-op on-demand compilation) for CJRT, which jit_compile=True needs. TensorFlow
   * aborts the process (a CHECK) when it is asked for while its PJRT "device API" is off for
   * on-demand compilation, so it is asked for only when TF_XLA_FLAGS turns that on. */
  params->use_pjrt_on_demand_compile = device_api_on(getenv("TF_XLA_FLAGS"));
  if (!params->use_pjrt_on_demand_compile)
    fprintf(stderr, "cjrt tfnpd: TF_XLA_FLAGS lacks --tf_xla_use_device_api=true: device CJRT is "
                    "registered without XLA kernels (jit_compile will not run on it)\n");
  (void)tfnpd_set_status(status, CJ_OK, "");
  return &api;
}
