/* cjrt: PJRT_Client_*: creation with options, devices and memories, default assignments, and
 * the calls that make buffers (from host data, uninitialized, views, errors). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/registry.h"
#include "pjrt/internal.h"

/* ------------------------------------------------------------------------------------------ */
/* Create options                                                                              */

/* Every option cjrt accepts, with the type it must have. */
typedef enum opt_id { OPT_CPU_DEVICE_COUNT, OPT_NODE_ID, OPT_NUM_NODES, OPT_BACKEND, OPT_COUNT } opt_id;
static const char *const opt_names[OPT_COUNT] = {"cpu_device_count", "node_id", "num_nodes",
                                                 "backend"};
#define OPT_LIST "cpu_device_count, node_id, num_nodes, backend"

const char *cjp_named_value_type_name(PJRT_NamedValue_Type t) {
  switch (t) {
    case PJRT_NamedValue_kString: return "a string";
    case PJRT_NamedValue_kInt64: return "an int64";
    case PJRT_NamedValue_kInt64List: return "an int64 list";
    case PJRT_NamedValue_kFloat: return "a float";
    case PJRT_NamedValue_kBool: return "a bool";
  }
  return "an unknown type";
}

/* An integer option: kInt64, or a kString holding a decimal integer (frameworks that take
 * options as "key:value" text deliver every value as a string). */
cj_status cjp_option_int(const PJRT_NamedValue *v, const char *name, int64_t lo, int64_t hi,
                         int64_t *out) {
  int64_t x;
  if (v->type == PJRT_NamedValue_kInt64) {
    x = v->int64_value;
  } else if (v->type == PJRT_NamedValue_kString) {
    char buf[32];
    size_t n = v->value_size;
    if (!v->string_value || n == 0 || n >= sizeof buf)
      return cj_invalid("create option '%s' must be an integer, got the string \"%.*s\"", name,
                        (int)(n < 64 ? n : 64), v->string_value ? v->string_value : "");
    memcpy(buf, v->string_value, n);
    buf[n] = 0;
    char *end;
    errno = 0;
    long long p = strtoll(buf, &end, 10);
    if (errno || *end || end == buf)
      return cj_invalid("create option '%s' must be an integer, got the string \"%s\"", name, buf);
    x = p;
  } else {
    return cj_invalid("create option '%s' must be an int64, got %s", name,
                      cjp_named_value_type_name(v->type));
  }
  if (x < lo || x > hi)
    return cj_invalid("create option '%s' is %lld, outside [%lld, %lld]", name, (long long)x,
                      (long long)lo, (long long)hi);
  *out = x;
  return NULL;
}

cj_status cjp_option_find(const PJRT_NamedValue *v, size_t i, const char *const *names,
                          int count, bool *seen, const char *kind, const char *accepted,
                          int *id) {
  if (v->struct_size < (size_t)PJRT_STRUCT_SIZE(PJRT_NamedValue, value_size))
    return cj_invalid("create option %zu has struct_size %zu, smaller than PJRT_NamedValue's "
                      "%zu",
                      i, v->struct_size, (size_t)PJRT_NamedValue_STRUCT_SIZE);
  if (!v->name || v->name_size == 0) return cj_invalid("create option %zu has no name", i);
  *id = -1;
  for (int k = 0; k < count; k++)
    if (strlen(names[k]) == v->name_size && memcmp(names[k], v->name, v->name_size) == 0) *id = k;
  if (*id < 0)
    return cj_invalid("unknown %s option '%.*s' (cjrt accepts %s)", kind,
                      (int)(v->name_size < 200 ? v->name_size : 200), v->name, accepted);
  if (seen[*id]) return cj_invalid("create option '%s' is given twice", names[*id]);
  seen[*id] = true;
  return NULL;
}

static CJ_MUST_USE cj_status parse_options(const PJRT_NamedValue *opts, size_t n,
                                           cj_client_options *out, bool *wants_kv,
                                           cj_backend **backend) {
  bool seen[OPT_COUNT] = {false};
  int64_t val[OPT_COUNT] = {0, 0, 1};
  *wants_kv = false;
  if (n && !opts) return cj_invalid("create_options is NULL but num_options is %zu", n);
  for (size_t i = 0; i < n; i++) {
    const PJRT_NamedValue *v = &opts[i];
    int id;
    CJ_RETURN_IF_ERROR(
        cjp_option_find(v, i, opt_names, OPT_COUNT, seen, "create", OPT_LIST, &id));
    switch ((opt_id)id) {
      case OPT_CPU_DEVICE_COUNT:
        CJ_RETURN_IF_ERROR(cjp_option_int(v, opt_names[id], 1, CJ_MAX_DEVICES, &val[id]));
        break;
      case OPT_NODE_ID:
        CJ_RETURN_IF_ERROR(cjp_option_int(v, opt_names[id], 0, INT32_MAX - 1, &val[id]));
        break;
      case OPT_NUM_NODES:
        CJ_RETURN_IF_ERROR(cjp_option_int(v, opt_names[id], 1, INT32_MAX, &val[id]));
        break;
      case OPT_BACKEND: { /* a backend by name (backends/registry.c), else $CJRT_BACKEND */
        char name[64];
        if (v->type != PJRT_NamedValue_kString || !v->string_value || v->value_size == 0 ||
            v->value_size >= sizeof name)
          return cj_invalid("create option 'backend' must be a backend name (%s)", cj_backend_names());
        memcpy(name, v->string_value, v->value_size);
        name[v->value_size] = 0;
        CJ_RETURN_IF_ERROR(cj_backend_select(name, backend));
        break;
      }
      case OPT_COUNT: break;
    }
  }
  if (!seen[OPT_BACKEND]) CJ_RETURN_IF_ERROR(cj_backend_select(NULL, backend));
  if (val[OPT_NODE_ID] >= val[OPT_NUM_NODES])
    return cj_invalid("create option node_id (%lld) must be smaller than num_nodes (%lld)",
                      (long long)val[OPT_NODE_ID], (long long)val[OPT_NUM_NODES]);
  out->device_count = (int)val[OPT_CPU_DEVICE_COUNT];
  out->process_index = (int)val[OPT_NODE_ID];
  out->process_count = (int)val[OPT_NUM_NODES];
  out->kv = NULL;
  *wants_kv = val[OPT_NUM_NODES] > 1;
  return NULL;
}

/* ---- per-client API data: device attributes ---- */

typedef struct client_front {
  char cpu_features[160];
  PJRT_NamedValue device_attrs[2];
  cj_topology *topology; /* PJRT_Client_TopologyDescription's answer, owned */
} client_front;

static void client_front_free(void *p) {
  client_front *f = p;
  if (!f) return;
  cj_topology_free(f->topology);
  free(f);
}

static void cpu_features(char *buf, size_t size) {
  buf[0] = 0;
  size_t len = 0;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  struct {
    const char *name;
    int on;
  } list[] = {
      {"sse4.2", __builtin_cpu_supports("sse4.2")},
      {"avx", __builtin_cpu_supports("avx")},
      {"avx2", __builtin_cpu_supports("avx2")},
      {"fma", __builtin_cpu_supports("fma")},
      {"avx512f", __builtin_cpu_supports("avx512f")},
      {"avx512bw", __builtin_cpu_supports("avx512bw")},
      {"avx512vl", __builtin_cpu_supports("avx512vl")},
  };
  for (size_t i = 0; i < sizeof list / sizeof list[0]; i++) {
    if (!list[i].on) continue;
    int w = snprintf(buf + len, size - len, "%s%s", len ? "," : "", list[i].name);
    if (w < 0 || (size_t)w >= size - len) break;
    len += (size_t)w;
  }
#else
  snprintf(buf, size, "unknown");
#endif
}

static CJ_MUST_USE cj_status attach_front(cj_client *c) {
  client_front *f = calloc(1, sizeof *f);
  if (!f) return cj_oom();
  cpu_features(f->cpu_features, sizeof f->cpu_features);
  PJRT_NamedValue *a = f->device_attrs;
  a[0].struct_size = PJRT_NamedValue_STRUCT_SIZE;
  a[0].name = "host_cores";
  a[0].name_size = strlen(a[0].name);
  a[0].type = PJRT_NamedValue_kInt64;
  a[0].int64_value = c->num_cores;
  a[0].value_size = 1;
  a[1].struct_size = PJRT_NamedValue_STRUCT_SIZE;
  a[1].name = "cpu_features";
  a[1].name_size = strlen(a[1].name);
  a[1].type = PJRT_NamedValue_kString;
  a[1].string_value = f->cpu_features;
  a[1].value_size = strlen(f->cpu_features);
  cj_status st = cj_topology_for_client(c, &f->topology);
  if (st) {
    free(f);
    return st;
  }
  cjp_topology_attach(f->topology);
  cj_client_set_front(c, f, client_front_free);
  return NULL;
}

cj_topology *cjp_client_topology(cj_client *c) { return ((client_front *)c->front)->topology; }

void cjp_device_attributes(cj_device *d, const PJRT_NamedValue **out, size_t *n) {
  if (!d->client) { /* a described topology's device: nothing is known about its host */
    *out = NULL;
    *n = 0;
    return;
  }
  client_front *f = d->client->front;
  *out = f->device_attrs;
  *n = sizeof f->device_attrs / sizeof f->device_attrs[0];
}

/* ---- the caller's key-value store, as the runtime's cj_kv ---- */

/* (callback_error is a pointer to the constructor) */
static PJRT_CallbackError kv_error_fn = cjp_callback_error;

typedef struct kv_front {
  PJRT_KeyValueGetCallback get;
  void *get_arg;
  PJRT_KeyValuePutCallback put;
  void *put_arg;
} kv_front;

/* The fields the get and put callbacks' args share (the rest zero). */
#define KV_ARGS(a, T, k, user)               \
  do {                                       \
    memset(&(a), 0, sizeof(a));              \
    (a).struct_size = T##_STRUCT_SIZE;       \
    (a).key = (k);                           \
    (a).key_size = strlen(k);                \
    (a).callback_error = &kv_error_fn;       \
    (a).user_arg = (user);                   \
  } while (0)

static CJ_MUST_USE cj_status kv_get(void *ctx, const char *key, int timeout_ms, char **out, size_t *len) {
  kv_front *f = ctx;
  *out = NULL;
  *len = 0;
  PJRT_KeyValueGetCallback_Args a;
  KV_ARGS(a, PJRT_KeyValueGetCallback_Args, key, f->get_arg);
  a.timeout_in_ms = timeout_ms;
  PJRT_Error *e = f->get(&a);
  if (e) return cjp_error_take(e);
  char *copy = malloc(a.value_size + 1);
  if (copy) {
    if (a.value_size) memcpy(copy, a.value, a.value_size);
    copy[a.value_size] = 0;
  }
  if (a.value && a.value_deleter_callback) a.value_deleter_callback(a.value);
  if (!copy) return cj_oom();
  *out = copy;
  *len = a.value_size;
  return NULL;
}

static CJ_MUST_USE cj_status kv_put(void *ctx, const char *key, const char *value, size_t len) {
  kv_front *f = ctx;
  PJRT_KeyValuePutCallback_Args a;
  KV_ARGS(a, PJRT_KeyValuePutCallback_Args, key, f->put_arg);
  a.value = value;
  a.value_size = len;
  PJRT_Error *e = f->put(&a);
  return e ? cjp_error_take(e) : NULL;
}

/* ------------------------------------------------------------------------------------------ */

PJRT_Error *cjp_PJRT_Client_Create(PJRT_Client_Create_Args *args) {
  CJP_CHECK_ARGS(PJRT_Client_Create, args, client);
  cj_client_options o;
  bool wants_kv;
  cj_backend *backend = NULL;
  cj_status st = parse_options(args->create_options, args->num_options, &o, &wants_kv, &backend);
  if (st) return cjp_error_in("PJRT_Client_Create", st);
  /* The key-value callbacks are only read when a multi-process option asks for them: callers
   * in single-process runs may leave them uninitialized. */
  if (wants_kv && (!args->kv_get_callback || !args->kv_put_callback))
    return cjp_errorf(CJ_INVALID_ARGUMENT,
                      "PJRT_Client_Create: num_nodes = %d needs kv_get_callback and "
                      "kv_put_callback",
                      o.process_count);
  kv_front kvf;
  cj_kv kv;
  if (wants_kv) {
    kvf = (kv_front){args->kv_get_callback, args->kv_get_user_arg, args->kv_put_callback,
                     args->kv_put_user_arg};
    kv = (cj_kv){&kvf, kv_get, kv_put};
    o.kv = &kv; /* used during creation only */
  }
  cj_client *c;
  st = cj_client_create(backend, &o, &c);
  if (st) return cjp_error_in("PJRT_Client_Create", st);
  st = attach_front(c);
  if (st) {
    cj_client_release(c);
    return cjp_error_in("PJRT_Client_Create", st);
  }
  cjp_memory_attach(c);
  args->client = (PJRT_Client *)c;
  return NULL;
}

CJP_DESTROY_SLOT(PJRT_Client_Destroy, client, cj_client, cj_client_check, cj_client_release)

CJP_CLIENT_SLOT(PJRT_Client_PlatformName, platform_name_size,
    (void)c;
    args->platform_name = CJ_PLATFORM_NAME;
    args->platform_name_size = sizeof CJ_PLATFORM_NAME - 1;)

CJP_CLIENT_SLOT(PJRT_Client_ProcessIndex, process_index,
    args->process_index = c->opts.process_index;)

CJP_CLIENT_SLOT(PJRT_Client_PlatformVersion, platform_version_size,
    CJP_SET_STR(args, platform_version, c->platform_version);)

CJP_CLIENT_SLOT(PJRT_Client_Devices, num_devices,
    args->devices = (PJRT_Device *const *)c->all_devices;
    args->num_devices = (size_t)c->nall_devices;)

CJP_CLIENT_SLOT(PJRT_Client_AddressableDevices, num_addressable_devices,
    args->addressable_devices = (PJRT_Device *const *)c->devices;
    args->num_addressable_devices = (size_t)c->ndevices;)

PJRT_Error *cjp_PJRT_Client_LookupDevice(PJRT_Client_LookupDevice_Args *args) {
  CJP_CHECK_ARGS(PJRT_Client_LookupDevice, args, device);
  CJP_CLIENT(PJRT_Client_LookupDevice, c, args->client, "client");
  cj_device *d = cj_client_lookup_device(c, args->id);
  CJP_REQUIRE(PJRT_Client_LookupDevice, d, "No matching device found for device_id %d", args->id);
  args->device = (PJRT_Device *)d;
  return NULL;
}

PJRT_Error *cjp_PJRT_Client_LookupAddressableDevice(
    PJRT_Client_LookupAddressableDevice_Args *args) {
  CJP_CHECK_ARGS(PJRT_Client_LookupAddressableDevice, args, addressable_device);
  CJP_CLIENT(PJRT_Client_LookupAddressableDevice, c, args->client, "client");
  cj_device *d = cj_client_lookup_local_device(c, args->local_hardware_id);
  CJP_REQUIRE(PJRT_Client_LookupAddressableDevice, d,
              "No matching addressable device found for local_hardware_id %d",
              args->local_hardware_id);
  args->addressable_device = (PJRT_Device *)d;
  return NULL;
}

CJP_CLIENT_SLOT(PJRT_Client_AddressableMemories, num_addressable_memories,
    args->addressable_memories = (PJRT_Memory *const *)c->memories;
    args->num_addressable_memories = (size_t)c->nmemories;)

PJRT_Error *cjp_PJRT_Client_DefaultDeviceAssignment(
    PJRT_Client_DefaultDeviceAssignment_Args *args) {
  CJP_CHECK_ARGS(PJRT_Client_DefaultDeviceAssignment, args, default_assignment);
  CJP_CLIENT(PJRT_Client_DefaultDeviceAssignment, c, args->client, "client");
  int r = args->num_replicas, p = args->num_partitions;
  CJP_REQUIRE(PJRT_Client_DefaultDeviceAssignment, r >= 1 && p >= 1,
              "num_replicas (%d) and num_partitions (%d) must be >= 1", r, p);
  long long need = (long long)r * p;
  if (args->default_assignment_size < (size_t)need)
    return cjp_errorf(CJ_FAILED_PRECONDITION,
                      "PJRT_Client_DefaultDeviceAssignment: `default_assignment_size` %zu < "
                      "`num_replicas * num_partitions`, %d * %d = %lld",
                      args->default_assignment_size, r, p, need);
  CJP_REQUIRE(PJRT_Client_DefaultDeviceAssignment, args->default_assignment,
              "default_assignment is NULL");
  return cjp_error_in("PJRT_Client_DefaultDeviceAssignment",
                      cj_client_default_assignment(c, r, p, args->default_assignment));
}

/* ------------------------------------------------------------------------------------------ */
/* Making buffers                                                                              */

cj_status cjp_pick_memory(PJRT_Device *device, PJRT_Memory *memory, cj_memory **out) {
  *out = NULL;
  if (memory) {
    if (!cj_memory_check(memory)) return cj_invalid("memory is not a live cjrt memory");
    *out = (cj_memory *)memory;
    if (device && (cj_device *)device != (*out)->device && cj_device_check(device)) {
      /* Upstream ignores `device` when `memory` is given; so do we. */
    }
    return NULL;
  }
  if (!device) return cj_invalid("device and memory are both NULL");
  if (!cj_device_check(device)) return cj_invalid("device is not a live cjrt device");
  cj_device *d = (cj_device *)device;
  if (!cj_device_is_local(d))
    return cj_unimplemented("device %d belongs to process %d, not this one (%d): buffers live only "
                            "on this process's devices",
                            d->id, d->process_index, d->client->opts.process_index);
  *out = d->memories[CJ_MEMORY_DEVICE];
  return NULL;
}

/* Checks that a memory belongs to the client passed alongside it. */
static CJ_MUST_USE cj_status same_client(cj_client *c, cj_memory *m) {
  if (m->client != c) return cj_invalid("the memory belongs to another client");
  return NULL;
}

/* cjp_pick_memory, refusing a memory of another client than c. */
static CJ_MUST_USE cj_status client_memory(cj_client *c, PJRT_Device *device, PJRT_Memory *memory,
                                           cj_memory **out) {
  CJ_RETURN_IF_ERROR(cjp_pick_memory(device, memory, out));
  return same_client(c, *out);
}

PJRT_Error *cjp_PJRT_Client_BufferFromHostBuffer(PJRT_Client_BufferFromHostBuffer_Args *args) {
  CJP_ENTER(PJRT_Client_BufferFromHostBuffer, buffer);
  CJP_CLIENT(PJRT_Client_BufferFromHostBuffer, c, args->client, "client");
  cj_dtype dt;
  cj_status st = cjp_dtype(args->type, &dt);
  if (!st) st = cjp_shape(dt, args->dims, args->num_dims);
  if (st) return cjp_error_in(fn, st);
  int rank = (int)args->num_dims;
  if (args->num_byte_strides && args->num_byte_strides != args->num_dims)
    return cjp_errorf(CJ_INVALID_ARGUMENT,
                      "%s: num_byte_strides is %zu; it must be 0 (dense) or num_dims (%zu)", fn,
                      args->num_byte_strides, args->num_dims);
  const int64_t *strides = args->num_byte_strides ? args->byte_strides : NULL;
  if (args->num_byte_strides && !strides)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: byte_strides is NULL", fn);
  unsigned sem = (unsigned)args->host_buffer_semantics;
  if (sem > PJRT_HostBufferSemantics_kMutableZeroCopy)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: host_buffer_semantics %u is not a valid value", fn,
                      sem);
  cj_memory *mem;
  st = client_memory(c, args->device, args->memory, &mem);
  if (!st) st = cjp_check_device_layout(args->device_layout, dt, args->dims, args->num_dims);
  if (st) return cjp_error_in(fn, st);
  cj_event *done = NULL;
  cj_buffer *b = NULL;
  st = cj_buffer_from_host(mem, dt, args->dims, rank, args->data, strides, (cj_host_semantics)sem,
                           &done, &b);
  if (st) return cjp_error_in(fn, st);
  args->done_with_host_buffer = (PJRT_Event *)done;
  args->buffer = (PJRT_Buffer *)b;
  return NULL;
}

PJRT_Error *cjp_PJRT_Client_CreateUninitializedBuffer(
    PJRT_Client_CreateUninitializedBuffer_Args *args) {
  CJP_ENTER(PJRT_Client_CreateUninitializedBuffer, buffer);
  CJP_CLIENT(PJRT_Client_CreateUninitializedBuffer, c, args->client, "client");
  cj_dtype dt;
  cj_memory *mem;
  cj_status st = cjp_device_array(args->shape_element_type, args->shape_dims, args->shape_num_dims,
                                  args->shape_layout, &dt);
  if (!st) st = client_memory(c, args->device, args->memory, &mem);
  cj_buffer *b = NULL;
  if (!st)
    st = cj_buffer_create_uninitialized(mem, dt, args->shape_dims, (int)args->shape_num_dims, &b);
  CJP_RETURN_OUT(st, buffer, PJRT_Buffer, b);
}

PJRT_Error *cjp_PJRT_Client_CreateViewOfDeviceBuffer(
    PJRT_Client_CreateViewOfDeviceBuffer_Args *args) {
  CJP_ENTER(PJRT_Client_CreateViewOfDeviceBuffer, buffer);
  CJP_CLIENT(PJRT_Client_CreateViewOfDeviceBuffer, c, args->client, "client");
  PJRT_Memory *memory = CJP_FIELD(PJRT_Client_CreateViewOfDeviceBuffer, args, memory);
  if (args->stream)
    return cjp_errorf(CJ_UNIMPLEMENTED, "%s: a `stream` is not supported by cjrt (CPU has none)",
                      fn);
  cj_dtype dt;
  cj_memory *mem;
  cj_status st =
      cjp_device_array(args->element_type, args->dims, args->num_dims, args->layout, &dt);
  if (!st) st = client_memory(c, args->device, memory, &mem);
  cj_buffer *b = NULL;
  if (!st)
    st = cj_buffer_create_view(mem, dt, args->dims, (int)args->num_dims, args->device_buffer_ptr,
                               args->on_delete_callback, args->on_delete_callback_arg, &b);
  CJP_RETURN_OUT(st, buffer, PJRT_Buffer, b);
}

PJRT_Error *cjp_PJRT_Client_CreateErrorBuffer(PJRT_Client_CreateErrorBuffer_Args *args) {
  CJP_ENTER(PJRT_Client_CreateErrorBuffer, buffer);
  CJP_CLIENT(PJRT_Client_CreateErrorBuffer, c, args->client, "client");
  if (args->error_code == PJRT_Error_Code_OK)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: error_code is OK; an error buffer needs an error",
                      fn);
  CJP_MEMORY(PJRT_Client_CreateErrorBuffer, mem, args->memory, "memory");
  /* Payloads (0.103) are accepted and not kept: cjrt errors carry none. */
  cj_dtype dt;
  cj_status st = cjp_device_array(args->shape_element_type, args->shape_dims, args->shape_num_dims,
                                  args->shape_layout, &dt);
  if (!st) st = same_client(c, mem);
  if (st) return cjp_error_in(fn, st);
  cj_status err = cjp_status_from_code(args->error_code, args->error_message,
                                       args->error_message_size, "error buffer");
  cj_buffer *b = NULL;
  st = cj_buffer_create_error(mem, dt, args->shape_dims, (int)args->shape_num_dims, err, &b);
  CJP_RETURN_OUT(st, buffer, PJRT_Buffer, b);
}

