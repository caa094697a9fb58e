/* cjrt contract suite: drives the built plugin only through dlopen + GetPjrtApi, the way a
 * framework does, and checks every real slot, including misuse (NULL arguments, small
 * struct_size, deleted buffers, wrong shapes), every element type, several threads at once, and
 * dlopen/dlclose/dlopen. Every object made is destroyed, so LeakSanitizer sees no leak.
 *
 * Usage: test_pjrt_contract <path to pjrt_c_api_cjrt_plugin.so>
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "pjrt_c_api_memory_descriptions_extension.h"
#include "pjrt_test_util.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------------------------ */
/* The table: version, slots, stubs, argument checks                                           */

typedef struct slot_info {
  const char *name;
  int real;
  size_t offset;
} slot_info;

static const slot_info slot_list[] = {
#define SLOT(name, kind) {#name, SLOT_IS_##kind, offsetof(PJRT_Api, name)},
#define SLOT_IS_REAL 1
#define SLOT_IS_STUB 0
#include "pjrt/slots.def"
#undef SLOT
};

typedef PJRT_Error *(*generic_fn)(void *args);

static generic_fn slot_fn(const slot_info *s) {
  generic_fn f;
  memcpy(&f, (const char *)api + s->offset, sizeof f);
  return f;
}

static int is_void_slot(const char *name) {
  return !strcmp(name, "PJRT_Error_Destroy") || !strcmp(name, "PJRT_Error_Message");
}

/* Slots whose all-zero (but full-size) arguments are valid and make something. */
static int makes_object(const char *name) {
  static const char *const list[] = {"PJRT_Client_Create", "PJRT_Event_Create",
                                     "PJRT_ExecuteContext_Create",
                                     "PJRT_TopologyDescription_Create"};
  for (size_t i = 0; i < COUNT(list); i++)
    if (!strcmp(name, list[i])) return 1;
  return 0;
}

/* Slots for which all-zero arguments are fine (NULL objects are allowed, or nothing is read). */
static int zero_args_ok(const char *name) {
  static const char *const list[] = {
      "PJRT_Plugin_Initialize",          "PJRT_Plugin_Attributes",
      "PJRT_Event_Destroy",              "PJRT_Client_Destroy",
      "PJRT_Buffer_Destroy",             "PJRT_ExecuteContext_Destroy",
      "PJRT_CopyToDeviceStream_Destroy", "PJRT_AsyncHostToDeviceTransferManager_Destroy",
      "PJRT_AsyncTrackingEvent_Destroy", "PJRT_Error_ForEachPayload",
      "PJRT_Executable_Destroy",         "PJRT_LoadedExecutable_Destroy",
      "PJRT_TopologyDescription_Destroy"};
  for (size_t i = 0; i < COUNT(list); i++)
    if (!strcmp(name, list[i])) return 1;
  return 0;
}

static void test_table(void) {
  CHECK_EQ_INT(api->struct_size, PJRT_Api_STRUCT_SIZE);
  CHECK_EQ_INT(api->pjrt_api_version.major_version, 0);
  CHECK_EQ_INT(api->pjrt_api_version.minor_version, 114);
  CHECK_EQ_INT(api->pjrt_api_version.struct_size, PJRT_Api_Version_STRUCT_SIZE);
  CHECK_EQ_INT(COUNT(slot_list), 138);
  size_t nreal = 0;
  for (size_t i = 0; i < COUNT(slot_list); i++) {
    const slot_info *s = &slot_list[i];
    CHECK_MSG(slot_fn(s) != NULL, "slot %s is NULL", s->name);
    nreal += (size_t)s->real;
  }
  printf("contract: %zu real slots, %zu stubs\n", nreal, COUNT(slot_list) - nreal);

  /* An args buffer larger than any *_Args, zeroed. */
  _Alignas(16) unsigned char buf[1024];
  for (size_t i = 0; i < COUNT(slot_list); i++) {
    const slot_info *s = &slot_list[i];
    if (!slot_fn(s)) continue;
    if (is_void_slot(s->name)) {
      /* Returns nothing: bad arguments must simply be ignored. */
      void (*f)(void *);
      memcpy(&f, (const char *)api + s->offset, sizeof f);
      f(NULL);
      memset(buf, 0, sizeof buf);
      f(buf); /* struct_size 0 */
      CHECK(1);
      continue;
    }
    char expect[256];
    if (!s->real) {
      /* Stubs: UNIMPLEMENTED naming the function, whatever the arguments. */
      snprintf(expect, sizeof expect, "%s is not implemented by cjrt", s->name);
      memset(buf, 0, sizeof buf);
      *(size_t *)buf = sizeof buf;
      PJRT_Error *e = slot_fn(s)(buf);
      CHECK_MSG(e != NULL, "%s returned no error", s->name);
      if (e) {
        CHECK_MSG(err_code(e) == PJRT_Error_Code_UNIMPLEMENTED, "%s code %d", s->name,
                  (int)err_code(e));
        CHECK_MSG(strcmp(err_msg(e), expect) == 0, "%s message \"%s\"", s->name, err_msg(e));
        err_free(e);
      }
      continue;
    }
    if (!strcmp(s->name, "PJRT_Error_ForEachPayload")) {
      /* Never fails, whatever it is given. */
      CHECK(slot_fn(s)(NULL) == NULL);
      continue;
    }
    /* Real slots: NULL args and a too-small struct_size are INVALID_ARGUMENT naming the slot. */
    check_err_at(slot_fn(s)(NULL), PJRT_Error_Code_INVALID_ARGUMENT, s->name, s->name, __FILE__,
                 __LINE__);
    memset(buf, 0, sizeof buf);
    *(size_t *)buf = 8;
    snprintf(expect, sizeof expect, "%s: struct_size 8 is too small", s->name);
    check_err_at(slot_fn(s)(buf), PJRT_Error_Code_INVALID_ARGUMENT, expect, s->name, __FILE__,
                 __LINE__);
    /* Full-size zeroed args (a newer caller's size): NULL objects are reported, not followed. */
    if (makes_object(s->name)) continue;
    memset(buf, 0, sizeof buf);
    *(size_t *)buf = sizeof buf;
    PJRT_Error *e = slot_fn(s)(buf);
    if (zero_args_ok(s->name)) {
      check_ok_at(e, s->name, __FILE__, __LINE__);
    } else {
      check_err_at(e, PJRT_Error_Code_INVALID_ARGUMENT, s->name, s->name, __FILE__, __LINE__);
    }
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Errors and plugin attributes                                                                */

static int payload_visits;
static void count_payload(const char *k, size_t ks, const char *v, size_t vs, void *arg) {
  (void)k, (void)ks, (void)v, (void)vs, (void)arg;
  payload_visits++;
}

static void test_errors_and_plugin(void) {
  ARGS(PJRT_Plugin_Initialize, init);
  OK(api->PJRT_Plugin_Initialize(&init));
  OK(api->PJRT_Plugin_Initialize(&init)); /* harmless twice */

  ARGS(PJRT_Plugin_Attributes, attrs);
  OK(api->PJRT_Plugin_Attributes(&attrs));
  int found_xla = 0;
  const int64_t *cur = NULL, *min = NULL;
  for (size_t i = 0; i < attrs.num_attributes; i++) {
    const PJRT_NamedValue *v = &attrs.attributes[i];
    if (v->name_size == 11 && !memcmp(v->name, "xla_version", 11)) {
      found_xla = 1;
      CHECK_EQ_INT(v->type, PJRT_NamedValue_kInt64);
      CHECK_EQ_INT(v->int64_value, 2);
    }
    /* The StableHLO pair: kInt64List of exactly 3 each (XLA indexes them unchecked). */
    int is_cur = v->name_size == 25 && !memcmp(v->name, "stablehlo_current_version", 25);
    int is_min = v->name_size == 25 && !memcmp(v->name, "stablehlo_minimum_version", 25);
    if (is_cur || is_min) {
      CHECK_EQ_INT(v->type, PJRT_NamedValue_kInt64List);
      CHECK_EQ_INT(v->value_size, 3);
      if (v->type == PJRT_NamedValue_kInt64List && v->value_size == 3) {
        if (is_cur) cur = v->int64_array_value;
        if (is_min) min = v->int64_array_value;
      }
    }
  }
  CHECK(found_xla);
  CHECK(cur != NULL && min != NULL);
  /* jaxlib <= 0.6 sends the size its header computed up to `attributes` (24 bytes; the struct
   * has num_attributes after it all the same) and aborts on an error here: accepted. */
  PJRT_Plugin_Attributes_Args old = attrs;
  old.struct_size = offsetof(PJRT_Plugin_Attributes_Args, attributes) + sizeof(old.attributes);
  CHECK_EQ_INT(old.struct_size, 24);
  old.attributes = NULL;
  old.num_attributes = 0;
  OK(api->PJRT_Plugin_Attributes(&old));
  CHECK(old.attributes == attrs.attributes && old.num_attributes == attrs.num_attributes);
  old.struct_size = 16; /* no room for the output at all: refused */
  PJRT_Error *too_small = api->PJRT_Plugin_Attributes(&old);
  CHECK(too_small != NULL);
  err_free(too_small);
  if (cur && min) {
    CHECK(cur[0] >= 1); /* 1.x: the versions JAX serializes VHLO for */
    int64_t c3 = (cur[0] << 40) | (cur[1] << 20) | cur[2], m3 = (min[0] << 40) | (min[1] << 20) | min[2];
    CHECK_MSG(m3 <= c3, "minimum %lld.%lld.%lld above current %lld.%lld.%lld", (long long)min[0],
              (long long)min[1], (long long)min[2], (long long)cur[0], (long long)cur[1],
              (long long)cur[2]);
  }

  /* An error through its own function table, as frameworks read it. */
  PJRT_Client *c = client_create_n(2);
  ARGS(PJRT_Client_LookupDevice, look);
  look.client = c;
  look.id = 99;
  PJRT_Error *e = api->PJRT_Client_LookupDevice(&look);
  CHECK(e != NULL);
  if (e) {
    CHECK(e->vtable != NULL);
    CHECK(e->vtable->struct_size >= PJRT_Error_FunctionTable_STRUCT_SIZE);
    CHECK_EQ_INT(e->vtable->get_code(e), PJRT_Error_Code_INVALID_ARGUMENT);
    const char *m = NULL;
    size_t n = 0;
    e->vtable->message(e, &m, &n);
    CHECK(m && n == strlen(m));
    CHECK_CONTAINS(m, "No matching device found for device_id 99");
    payload_visits = 0;
    e->vtable->for_each_payload(e, count_payload, NULL);
    ARGS(PJRT_Error_ForEachPayload, fe);
    fe.error = e;
    fe.visitor = count_payload;
    CHECK(api->PJRT_Error_ForEachPayload(&fe) == NULL);
    CHECK_EQ_INT(payload_visits, 0);
    e->vtable->destroy(e);
  }
  /* GetCode / Message on bad input. */
  ARGS(PJRT_Error_GetCode, gc);
  ERR(api->PJRT_Error_GetCode(&gc), INVALID_ARGUMENT, "error is NULL");
  ARGS(PJRT_Error_Message, em);
  api->PJRT_Error_Message(&em);
  CHECK(em.message && em.message_size == 0);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Clients                                                                                     */

static PJRT_NamedValue opt_int(const char *name, int64_t v) {
  PJRT_NamedValue o;
  memset(&o, 0, sizeof o);
  o.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  o.name = name;
  o.name_size = strlen(name);
  o.type = PJRT_NamedValue_kInt64;
  o.int64_value = v;
  o.value_size = 1;
  return o;
}

static PJRT_Error *kv_get_never(PJRT_KeyValueGetCallback_Args *a) {
  (void)a;
  return NULL;
}
static PJRT_Error *kv_put_never(PJRT_KeyValuePutCallback_Args *a) {
  (void)a;
  return NULL;
}

static int online_cores(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

static void test_client_create(void) {
  /* Defaults: one device per core. Garbage KV callbacks are never touched without num_nodes. */
  ARGS(PJRT_Client_Create, a);
  a.kv_get_callback = (PJRT_KeyValueGetCallback)(uintptr_t)0x10;
  a.kv_put_callback = (PJRT_KeyValuePutCallback)(uintptr_t)0x20;
  a.kv_try_get_callback = (PJRT_KeyValueTryGetCallback)(uintptr_t)0x30;
  if (OK(api->PJRT_Client_Create(&a))) {
    size_t n;
    client_devices(a.client, &n);
    CHECK_EQ_INT(n, online_cores());
    client_free(a.client);
  }

  /* A caller from before 0.61 (no kv_try_get fields). */
  ARGS(PJRT_Client_Create, old);
  old.struct_size = offsetof(PJRT_Client_Create_Args, kv_try_get_callback);
  PJRT_NamedValue one = opt_int("cpu_device_count", 1);
  old.create_options = &one;
  old.num_options = 1;
  if (OK(api->PJRT_Client_Create(&old))) client_free(old.client);

  /* A string value, as "key:value" option strings deliver. */
  PJRT_NamedValue s;
  memset(&s, 0, sizeof s);
  s.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  s.name = "cpu_device_countXX"; /* not NUL-terminated at name_size */
  s.name_size = strlen("cpu_device_count");
  s.type = PJRT_NamedValue_kString;
  s.string_value = "3abc";
  s.value_size = 1;
  ARGS(PJRT_Client_Create, b);
  b.create_options = &s;
  b.num_options = 1;
  if (OK(api->PJRT_Client_Create(&b))) {
    size_t n;
    client_devices(b.client, &n);
    CHECK_EQ_INT(n, 3);
    client_free(b.client);
  }
  s.value_size = 4; /* "3abc" */
  ERR(api->PJRT_Client_Create(&b), INVALID_ARGUMENT, "cpu_device_count");

  /* Misuse: unknown names, wrong types, bad values, duplicates. */
  PJRT_NamedValue bad = opt_int("gpu_count", 2);
  b.create_options = &bad;
  ERR(api->PJRT_Client_Create(&b), INVALID_ARGUMENT, "unknown create option 'gpu_count'");
  bad = opt_int("cpu_device_count", 0);
  ERR(api->PJRT_Client_Create(&b), INVALID_ARGUMENT, "cpu_device_count");
  bad.type = PJRT_NamedValue_kFloat;
  bad.float_value = 2.0f;
  ERR(api->PJRT_Client_Create(&b), INVALID_ARGUMENT, "'cpu_device_count' must be an int64, got a float");
  bad.type = PJRT_NamedValue_kBool;
  ERR(api->PJRT_Client_Create(&b), INVALID_ARGUMENT, "got a bool");
  PJRT_NamedValue two[2] = {opt_int("cpu_device_count", 2), opt_int("cpu_device_count", 3)};
  b.create_options = two;
  b.num_options = 2;
  ERR(api->PJRT_Client_Create(&b), INVALID_ARGUMENT, "given twice");
  b.create_options = NULL;
  ERR(api->PJRT_Client_Create(&b), INVALID_ARGUMENT, "create_options is NULL");

  /* Multi-process options: a single process is fine; several need the KV store. */
  PJRT_NamedValue mp[2] = {opt_int("num_nodes", 1), opt_int("node_id", 0)};
  b.create_options = mp;
  b.num_options = 2;
  if (OK(api->PJRT_Client_Create(&b))) client_free(b.client);
  mp[0] = opt_int("num_nodes", 2);
  ERR(api->PJRT_Client_Create(&b), INVALID_ARGUMENT, "kv_get_callback");
  b.kv_get_callback = kv_get_never;
  b.kv_put_callback = kv_put_never;
  /* (multi-process clients need the MPI module: tests/mp runs them under mpirun; here a missing
   * module must be named) */
  char *saved = getenv("CJRT_MPI_MODULE") ? strdup(getenv("CJRT_MPI_MODULE")) : NULL;
  setenv("CJRT_MPI_MODULE", "/nonexistent/libcjrt_mpi.so", 1);
  ERR(api->PJRT_Client_Create(&b), FAILED_PRECONDITION, "/nonexistent/libcjrt_mpi.so");
  if (saved)
    setenv("CJRT_MPI_MODULE", saved, 1);
  else
    unsetenv("CJRT_MPI_MODULE");
  free(saved);
  mp[1] = opt_int("node_id", 2);
  ERR(api->PJRT_Client_Create(&b), INVALID_ARGUMENT, "node_id");

  /* The backend option (backends/registry.c): a known name picks that backend, which the platform
   * version names; an unknown one lists the known ones. */
  PJRT_NamedValue be;
  memset(&be, 0, sizeof be);
  be.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  be.name = "backend";
  be.name_size = strlen("backend");
  be.type = PJRT_NamedValue_kString;
  be.string_value = "reference";
  be.value_size = strlen("reference");
  ARGS(PJRT_Client_Create, rb);
  rb.create_options = &be;
  rb.num_options = 1;
  if (OK(api->PJRT_Client_Create(&rb))) {
    ARGS(PJRT_Client_PlatformVersion, pv);
    pv.client = rb.client;
    if (OK(api->PJRT_Client_PlatformVersion(&pv)))
      CHECK(memmem(pv.platform_version, pv.platform_version_size, "(reference backend", 18) != NULL);
    client_free(rb.client);
  }
  be.string_value = "tpu";
  be.value_size = 3;
  ERR(api->PJRT_Client_Create(&rb), INVALID_ARGUMENT, "unknown backend 'tpu' (known backends: cpu, reference)");
  be.type = PJRT_NamedValue_kInt64;
  ERR(api->PJRT_Client_Create(&rb), INVALID_ARGUMENT, "create option 'backend' must be a backend name");
}

static void test_client_queries(void) {
  PJRT_Client *c = client_create_n(4);
  if (!c) return;
  /* JAX reports the processes of a distributed run (and aborts when this fails) */
  ARGS(PJRT_Client_UpdateGlobalProcessInfo, gp);
  gp.client = c;
  OK(api->PJRT_Client_UpdateGlobalProcessInfo(&gp));
  gp.num_process_infos = 1;
  ERR(api->PJRT_Client_UpdateGlobalProcessInfo(&gp), INVALID_ARGUMENT, "process_infos");
  ARGS(PJRT_Client_PlatformName, pn);
  pn.client = c;
  OK(api->PJRT_Client_PlatformName(&pn));
  CHECK(pn.platform_name_size == 4 && !memcmp(pn.platform_name, "cjrt", 4));
  ARGS(PJRT_Client_PlatformVersion, pv);
  pv.client = c;
  OK(api->PJRT_Client_PlatformVersion(&pv));
  CHECK(pv.platform_version_size > 0 && pv.platform_version);
  ARGS(PJRT_Client_ProcessIndex, pi);
  pi.client = c;
  pi.process_index = -1;
  OK(api->PJRT_Client_ProcessIndex(&pi));
  CHECK_EQ_INT(pi.process_index, 0);

  size_t n;
  PJRT_Device *const *devs = client_devices(c, &n);
  CHECK_EQ_INT(n, 4);
  ARGS(PJRT_Client_AddressableDevices, ad);
  ad.client = c;
  OK(api->PJRT_Client_AddressableDevices(&ad));
  CHECK_EQ_INT(ad.num_addressable_devices, 4);
  for (size_t i = 0; i < n && devs; i++) {
    CHECK(ad.addressable_devices[i] == devs[i]);
    ARGS(PJRT_Client_LookupDevice, l);
    l.client = c;
    l.id = (int)i;
    OK(api->PJRT_Client_LookupDevice(&l));
    CHECK(l.device == devs[i]);
    ARGS(PJRT_Client_LookupAddressableDevice, la);
    la.client = c;
    la.local_hardware_id = (int)i;
    OK(api->PJRT_Client_LookupAddressableDevice(&la));
    CHECK(la.addressable_device == devs[i]);
  }
  ARGS(PJRT_Client_LookupDevice, l);
  l.client = c;
  l.id = -1;
  ERR(api->PJRT_Client_LookupDevice(&l), INVALID_ARGUMENT, "No matching device found for device_id -1");
  ARGS(PJRT_Client_LookupAddressableDevice, la);
  la.client = c;
  la.local_hardware_id = 4;
  ERR(api->PJRT_Client_LookupAddressableDevice(&la), INVALID_ARGUMENT, "local_hardware_id 4");

  ARGS(PJRT_Client_AddressableMemories, am);
  am.client = c;
  OK(api->PJRT_Client_AddressableMemories(&am));
  CHECK_EQ_INT(am.num_addressable_memories, 12);
  /* Ids are unique within a kind. */
  for (size_t i = 0; i < am.num_addressable_memories; i++)
    for (size_t j = i + 1; j < am.num_addressable_memories; j++) {
      ARGS(PJRT_Memory_Id, x);
      ARGS(PJRT_Memory_Id, y);
      x.memory = am.addressable_memories[i];
      y.memory = am.addressable_memories[j];
      OK(api->PJRT_Memory_Id(&x));
      OK(api->PJRT_Memory_Id(&y));
      char kx[64];
      snprintf(kx, sizeof kx, "%s", memory_kind(x.memory));
      if (!strcmp(kx, memory_kind(y.memory))) CHECK(x.id != y.id);
    }

  /* Default assignment: replica-major into the caller's array. */
  int assign[8];
  memset(assign, 0xff, sizeof assign);
  ARGS(PJRT_Client_DefaultDeviceAssignment, da);
  da.client = c;
  da.num_replicas = 2;
  da.num_partitions = 2;
  da.default_assignment_size = 8;
  da.default_assignment = assign;
  OK(api->PJRT_Client_DefaultDeviceAssignment(&da));
  for (int i = 0; i < 4; i++) CHECK_EQ_INT(assign[i], i);
  CHECK_EQ_INT(assign[4], -1); /* nothing written past r * p */
  da.num_replicas = 4;
  da.default_assignment_size = 7;
  ERR(api->PJRT_Client_DefaultDeviceAssignment(&da), FAILED_PRECONDITION,
      "PJRT_Client_DefaultDeviceAssignment: `default_assignment_size` 7 < `num_replicas * "
      "num_partitions`, 4 * 2 = 8");
  da.default_assignment_size = 8;
  ERR(api->PJRT_Client_DefaultDeviceAssignment(&da), INVALID_ARGUMENT, "only 4");
  da.num_replicas = 0;
  ERR(api->PJRT_Client_DefaultDeviceAssignment(&da), INVALID_ARGUMENT, "must be >= 1");


  /* Wrong handle kinds are caught. */
  ARGS(PJRT_Client_PlatformName, wrong);
  wrong.client = (PJRT_Client *)devs[0];
  ERR(api->PJRT_Client_PlatformName(&wrong), INVALID_ARGUMENT, "not a live cjrt object");
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Devices and memories                                                                        */

static int ud_dtor_calls;
static void ud_dtor(void *p) {
  ud_dtor_calls++;
  free(p);
}

static void test_devices_memories(void) {
  PJRT_Client *c = client_create_n(2);
  if (!c) return;
  size_t n;
  PJRT_Device *const *devs = client_devices(c, &n);
  for (size_t i = 0; i < n; i++) {
    PJRT_Device *d = devs[i];
    ARGS(PJRT_Device_GetDescription, gd);
    gd.device = d;
    OK(api->PJRT_Device_GetDescription(&gd));
    PJRT_DeviceDescription *desc = gd.device_description;
    ARGS(PJRT_DeviceDescription_Id, id);
    id.device_description = desc;
    OK(api->PJRT_DeviceDescription_Id(&id));
    CHECK_EQ_INT(id.id, i);
    ARGS(PJRT_DeviceDescription_ProcessIndex, dpi);
    dpi.device_description = desc;
    dpi.process_index = -1;
    OK(api->PJRT_DeviceDescription_ProcessIndex(&dpi));
    CHECK_EQ_INT(dpi.process_index, 0);
    ARGS(PJRT_DeviceDescription_Attributes, at);
    at.device_description = desc;
    OK(api->PJRT_DeviceDescription_Attributes(&at));
    for (size_t k = 0; k < at.num_attributes; k++) {
      PJRT_NamedValue_Type t = at.attributes[k].type;
      CHECK(t == PJRT_NamedValue_kString || t == PJRT_NamedValue_kInt64 ||
            t == PJRT_NamedValue_kInt64List);
      CHECK(at.attributes[k].name && at.attributes[k].name_size);
    }
    ARGS(PJRT_DeviceDescription_Kind, kind);
    kind.device_description = desc;
    OK(api->PJRT_DeviceDescription_Kind(&kind));
    CHECK(kind.device_kind_size == 3 && !memcmp(kind.device_kind, "cpu", 3));
    ARGS(PJRT_DeviceDescription_DebugString, ds);
    ds.device_description = desc;
    OK(api->PJRT_DeviceDescription_DebugString(&ds));
    CHECK(ds.debug_string_size > 0);
    ARGS(PJRT_DeviceDescription_ToString, ts);
    ts.device_description = desc;
    OK(api->PJRT_DeviceDescription_ToString(&ts));
    char want[64];
    snprintf(want, sizeof want, "CjrtDevice(id=%zu)", i);
    CHECK(ts.to_string_size == strlen(want) && !memcmp(ts.to_string, want, strlen(want)));
    /* A device is not a description. */
    ARGS(PJRT_DeviceDescription_Id, wrong);
    wrong.device_description = (PJRT_DeviceDescription *)d;
    ERR(api->PJRT_DeviceDescription_Id(&wrong), INVALID_ARGUMENT, "device_description");

    ARGS(PJRT_Device_IsAddressable, ia);
    ia.device = d;
    OK(api->PJRT_Device_IsAddressable(&ia));
    CHECK(ia.is_addressable);
    ARGS(PJRT_Device_LocalHardwareId, hw);
    hw.device = d;
    OK(api->PJRT_Device_LocalHardwareId(&hw));
    CHECK_EQ_INT(hw.local_hardware_id, i);
    ARGS(PJRT_Device_GetAttributes, ga);
    ga.device = d;
    OK(api->PJRT_Device_GetAttributes(&ga));
    CHECK_EQ_INT(ga.num_attributes, at.num_attributes);
    CHECK(ga.attributes_deleter != NULL);
    if (ga.attributes_deleter) ga.attributes_deleter(ga.device_attributes);

    /* Memories: one of each kind, the default is "device", each addressable by this device. */
    ARGS(PJRT_Device_AddressableMemories, am);
    am.device = d;
    OK(api->PJRT_Device_AddressableMemories(&am));
    CHECK_EQ_INT(am.num_memories, 3);
    const char *kinds[3] = {"device", "pinned_host", "unpinned_host"};
    for (int k = 0; k < 3; k++) {
      PJRT_Memory *m = device_memory(d, kinds[k]);
      CHECK_MSG(m != NULL, "device %zu has no %s memory", i, kinds[k]);
      if (!m) continue;
      CHECK(m->vtable != NULL && m->vtable->get_user_data && m->vtable->set_user_data);
      CHECK_EQ_INT(m->vtable->instance_struct_size, PJRT_Memory_STRUCT_SIZE);
      ARGS(PJRT_Memory_Kind_Id, ki);
      ki.memory = m;
      OK(api->PJRT_Memory_Kind_Id(&ki));
      CHECK_EQ_INT(ki.kind_id, k);
      ARGS(PJRT_Memory_Id, mid);
      mid.memory = m;
      OK(api->PJRT_Memory_Id(&mid));
      CHECK_EQ_INT(mid.id, 3 * (int)i + k); /* XLA's CPU client numbering */
      ARGS(PJRT_Memory_DebugString, mds);
      mds.memory = m;
      OK(api->PJRT_Memory_DebugString(&mds));
      CHECK(mds.debug_string_size > 0);
      ARGS(PJRT_Memory_ToString, mts);
      mts.memory = m;
      OK(api->PJRT_Memory_ToString(&mts));
      CHECK(mts.to_string_size > 0);
      ARGS(PJRT_Memory_AddressableByDevices, abd);
      abd.memory = m;
      OK(api->PJRT_Memory_AddressableByDevices(&abd));
      CHECK(abd.num_devices == 1 && abd.devices[0] == d);
      int seen = 0;
      for (size_t q = 0; q < am.num_memories; q++) seen += am.memories[q] == m;
      CHECK_EQ_INT(seen, 1);
    }
    ARGS(PJRT_Device_DefaultMemory, dm);
    dm.device = d;
    OK(api->PJRT_Device_DefaultMemory(&dm));
    CHECK_EQ_STR(memory_kind(dm.memory), "device");

    ARGS(PJRT_Device_CreateAsyncTrackingEvent, te);
    te.device = d;
    te.description = "step";
    te.description_size = 4;
    OK(api->PJRT_Device_CreateAsyncTrackingEvent(&te));
    ARGS(PJRT_AsyncTrackingEvent_Destroy, ted);
    ted.event = te.event;
    OK(api->PJRT_AsyncTrackingEvent_Destroy(&ted));
  }

  /* Memory statistics follow allocations; an older caller's struct is not written past. */
  PJRT_Device *d0 = devs[0];
  int64_t before = device_bytes_in_use(d0);
  float data[256] = {0};
  int64_t dims[1] = {256};
  PJRT_Buffer *b = buffer_from_host(c, d0, PJRT_Buffer_Type_F32, dims, 1, data);
  CHECK_EQ_INT(device_bytes_in_use(d0) - before, 1024);
  struct {
    PJRT_Device_MemoryStats_Args a;
    unsigned char guard[64];
  } old;
  memset(&old, 0xab, sizeof old);
  old.a.struct_size = offsetof(PJRT_Device_MemoryStats_Args, peak_allocated_bytes);
  old.a.extension_start = NULL;
  old.a.device = d0;
  OK(api->PJRT_Device_MemoryStats(&old.a));
  CHECK(old.a.peak_bytes_in_use_is_set && old.a.peak_bytes_in_use >= 1024);
  CHECK(old.a.num_allocs_is_set && old.a.num_allocs >= 1);
  CHECK(!old.a.bytes_limit_is_set);
  unsigned char *tail = (unsigned char *)&old.a + old.a.struct_size;
  int untouched = 1;
  for (unsigned char *p = tail; p < (unsigned char *)(&old + 1); p++) untouched &= *p == 0xab;
  CHECK_MSG(untouched, "MemoryStats wrote past the caller's struct_size");
  buffer_free(b);
  CHECK_EQ_INT(device_bytes_in_use(d0), before);
  ARGS(PJRT_Device_ClearMemoryStats, cms);
  cms.device = d0;
  OK(api->PJRT_Device_ClearMemoryStats(&cms));
  ARGS(PJRT_Device_MemoryStats, ms);
  ms.device = d0;
  OK(api->PJRT_Device_MemoryStats(&ms));
  CHECK_EQ_INT(ms.peak_bytes_in_use, ms.bytes_in_use);
  CHECK(ms.peak_allocated_bytes_is_set);

  /* User data on a memory: set, get, replace (old destructor runs), remove. */
  PJRT_Memory *m = device_memory(d0, "device");
  static const char key1, key2;
  ud_dtor_calls = 0;
  if (m) {
    CHECK(m->vtable->get_user_data(m, &key1) == NULL);
    int *v1 = malloc(sizeof *v1), *v2 = malloc(sizeof *v2), *v3 = malloc(sizeof *v3);
    m->vtable->set_user_data(m, &key1, v1, ud_dtor);
    m->vtable->set_user_data(m, &key2, v3, ud_dtor);
    CHECK(m->vtable->get_user_data(m, &key1) == v1);
    m->vtable->set_user_data(m, &key1, v2, ud_dtor);
    CHECK_EQ_INT(ud_dtor_calls, 1);
    CHECK(m->vtable->get_user_data(m, &key1) == v2);
    m->vtable->set_user_data(m, &key1, NULL, NULL);
    CHECK_EQ_INT(ud_dtor_calls, 2);
    CHECK(m->vtable->get_user_data(m, &key1) == NULL);
    CHECK(m->vtable->get_user_data(m, &key2) == v3);
  }
  client_free(c); /* runs the destructor of what is still stored */
  CHECK_EQ_INT(ud_dtor_calls, 3);
}

/* ------------------------------------------------------------------------------------------ */
/* Events                                                                                      */

typedef struct cb_record {
  atomic_int calls;
  PJRT_Error_Code code;
  char msg[128];
} cb_record;

static void record_cb(PJRT_Error *e, void *arg) {
  cb_record *r = arg;
  atomic_fetch_add(&r->calls, 1);
  r->code = e ? err_code(e) : PJRT_Error_Code_OK;
  snprintf(r->msg, sizeof r->msg, "%s", e ? err_msg(e) : "");
  err_free(e); /* the callback owns it */
}

static PJRT_Event *event_new(void) {
  ARGS(PJRT_Event_Create, a);
  if (!OK(api->PJRT_Event_Create(&a))) return NULL;
  return a.event;
}

static void on_ready(PJRT_Event *e, cb_record *r) {
  ARGS(PJRT_Event_OnReady, a);
  a.event = e;
  a.callback = record_cb;
  a.user_arg = r;
  OK(api->PJRT_Event_OnReady(&a));
}

static PJRT_Error *event_set(PJRT_Event *e, PJRT_Error_Code code, const char *msg) {
  ARGS(PJRT_Event_Set, a);
  a.event = e;
  a.error_code = code;
  a.error_message = msg;
  a.error_message_size = msg ? strlen(msg) : 0;
  return api->PJRT_Event_Set(&a);
}

typedef struct setter_arg {
  PJRT_Event *e;
  PJRT_Error *result; /* checked by the main thread (the check counters are not atomic) */
} setter_arg;

static void *setter_thread(void *p) {
  setter_arg *s = p;
  usleep(20000);
  s->result = event_set(s->e, PJRT_Error_Code_OK, NULL);
  return NULL;
}

static void test_events(void) {
  /* Success. */
  PJRT_Event *e = event_new();
  cb_record r1 = {0}, r2 = {0};
  CHECK_EQ_INT(event_ready(e), 0);
  ARGS(PJRT_Event_Error, ee);
  ee.event = e;
  ERR(api->PJRT_Event_Error(&ee), FAILED_PRECONDITION, "not ready");
  on_ready(e, &r1);
  CHECK_EQ_INT(atomic_load(&r1.calls), 0);
  OK(event_set(e, PJRT_Error_Code_OK, NULL));
  CHECK_EQ_INT(atomic_load(&r1.calls), 1);
  CHECK_EQ_INT(r1.code, PJRT_Error_Code_OK);
  CHECK_EQ_INT(event_ready(e), 1);
  OK(api->PJRT_Event_Error(&ee));
  ERR(event_set(e, PJRT_Error_Code_OK, NULL), FAILED_PRECONDITION, "already set");
  on_ready(e, &r2); /* already ready: runs at once */
  CHECK_EQ_INT(atomic_load(&r2.calls), 1);
  CHECK_EQ_INT(atomic_load(&r1.calls), 1);
  OK(event_wait_free(e));

  /* Failure: every reader gets its own error. */
  e = event_new();
  cb_record r3 = {0}, r4 = {0};
  on_ready(e, &r3);
  on_ready(e, &r4);
  OK(event_set(e, PJRT_Error_Code_DATA_LOSS, "disk on fire"));
  CHECK_EQ_INT(atomic_load(&r3.calls), 1);
  CHECK_EQ_INT(atomic_load(&r4.calls), 1);
  CHECK_EQ_INT(r3.code, PJRT_Error_Code_DATA_LOSS);
  CHECK_EQ_STR(r4.msg, "disk on fire");
  ee.event = e;
  PJRT_Error *x1 = api->PJRT_Event_Error(&ee);
  PJRT_Error *x2 = api->PJRT_Event_Error(&ee);
  CHECK(x1 && x2 && x1 != x2);
  ARGS(PJRT_Event_Await, aw);
  aw.event = e;
  PJRT_Error *x3 = api->PJRT_Event_Await(&aw);
  CHECK(x3 && x3 != x1);
  ERR(x1, DATA_LOSS, "disk on fire");
  ERR(x2, DATA_LOSS, "disk on fire");
  ERR(x3, DATA_LOSS, "disk on fire");
  event_free(e);

  /* Destroyed before set: the callback still runs, once. */
  e = event_new();
  cb_record r5 = {0};
  on_ready(e, &r5);
  event_free(e);
  CHECK_EQ_INT(atomic_load(&r5.calls), 1);
  CHECK_EQ_INT(r5.code, PJRT_Error_Code_CANCELLED);

  /* Await blocks until another thread sets the event. */
  e = event_new();
  cb_record r6 = {0};
  on_ready(e, &r6);
  pthread_t t;
  setter_arg sa = {e, NULL};
  pthread_create(&t, NULL, setter_thread, &sa);
  aw.event = e;
  OK(api->PJRT_Event_Await(&aw));
  pthread_join(t, NULL);
  OK(sa.result);
  CHECK_EQ_INT(atomic_load(&r6.calls), 1);
  event_free(e);

  /* Misuse: NULL callback; setting an event the plugin owns. */
  e = event_new();
  ARGS(PJRT_Event_OnReady, bad);
  bad.event = e;
  ERR(api->PJRT_Event_OnReady(&bad), INVALID_ARGUMENT, "callback is NULL");
  OK(event_set(e, PJRT_Error_Code_OK, NULL));
  event_free(e);
  PJRT_Client *c = client_create_n(1);
  float v = 1;
  PJRT_Buffer *b = buffer_from_host(c, device_at(c, 0), PJRT_Buffer_Type_F32, NULL, 0, &v);
  ARGS(PJRT_Buffer_ReadyEvent, re);
  re.buffer = b;
  OK(api->PJRT_Buffer_ReadyEvent(&re));
  ERR(event_set(re.event, PJRT_Error_Code_OK, NULL), INVALID_ARGUMENT, "PJRT_Event_Create");
  event_free(re.event);
  buffer_free(b);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Buffers: every element type, strides, layouts, semantics                                    */

static const struct {
  PJRT_Buffer_Type type;
  const char *name;
  size_t bytes; /* host bytes per element, as upstream defines them */
} types[] = {
    {PJRT_Buffer_Type_PRED, "PRED", 1},          {PJRT_Buffer_Type_S8, "S8", 1},
    {PJRT_Buffer_Type_S16, "S16", 2},            {PJRT_Buffer_Type_S32, "S32", 4},
    {PJRT_Buffer_Type_S64, "S64", 8},            {PJRT_Buffer_Type_U8, "U8", 1},
    {PJRT_Buffer_Type_U16, "U16", 2},            {PJRT_Buffer_Type_U32, "U32", 4},
    {PJRT_Buffer_Type_U64, "U64", 8},            {PJRT_Buffer_Type_F16, "F16", 2},
    {PJRT_Buffer_Type_F32, "F32", 4},            {PJRT_Buffer_Type_F64, "F64", 8},
    {PJRT_Buffer_Type_BF16, "BF16", 2},          {PJRT_Buffer_Type_C64, "C64", 8},
    {PJRT_Buffer_Type_C128, "C128", 16},         {PJRT_Buffer_Type_F8E5M2, "F8E5M2", 1},
    {PJRT_Buffer_Type_F8E4M3FN, "F8E4M3FN", 1},  {PJRT_Buffer_Type_F8E4M3B11FNUZ, "F8E4M3B11FNUZ", 1},
    {PJRT_Buffer_Type_F8E5M2FNUZ, "F8E5M2FNUZ", 1}, {PJRT_Buffer_Type_F8E4M3FNUZ, "F8E4M3FNUZ", 1},
    {PJRT_Buffer_Type_S4, "S4", 1},              {PJRT_Buffer_Type_U4, "U4", 1},
    {PJRT_Buffer_Type_TOKEN, "TOKEN", 0},        {PJRT_Buffer_Type_S2, "S2", 1},
    {PJRT_Buffer_Type_U2, "U2", 1},              {PJRT_Buffer_Type_F8E4M3, "F8E4M3", 1},
    {PJRT_Buffer_Type_F8E3M4, "F8E3M4", 1},      {PJRT_Buffer_Type_F8E8M0FNU, "F8E8M0FNU", 1},
    {PJRT_Buffer_Type_F4E2M1FN, "F4E2M1FN", 1},  {PJRT_Buffer_Type_S1, "S1", 1},
    {PJRT_Buffer_Type_U1, "U1", 1},              {PJRT_Buffer_Type_F6E2M3FN, "F6E2M3FN", 1},
    {PJRT_Buffer_Type_F6E3M2FN, "F6E3M2FN", 1},
};

static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed * 131u + i * 29u + (i >> 3));
}

static void test_every_type(void) {
  PJRT_Client *c = client_create_n(2);
  if (!c) return;
  PJRT_Device *d = device_at(c, 1);
  CHECK_EQ_INT(COUNT(types), 33);
  for (size_t k = 0; k < COUNT(types); k++) {
    size_t elem = types[k].bytes;
    int64_t dims[2] = {3, 5};
    size_t rank = types[k].type == PJRT_Buffer_Type_TOKEN ? 0 : 2;
    size_t nbytes = rank ? 15 * elem : elem;
    unsigned char src[15 * 16], dst[15 * 16 + 8];
    fill_pattern(src, sizeof src, (unsigned)k);
    PJRT_Buffer *b = buffer_from_host(c, d, types[k].type, dims, rank, src);
    if (!b) continue;
    ARGS(PJRT_Buffer_ElementType, et);
    et.buffer = b;
    OK(api->PJRT_Buffer_ElementType(&et));
    CHECK_MSG(et.type == types[k].type, "%s: element type %d", types[k].name, (int)et.type);
    ARGS(PJRT_Buffer_Dimensions, dm);
    dm.buffer = b;
    OK(api->PJRT_Buffer_Dimensions(&dm));
    CHECK(dm.num_dims == rank && (!rank || (dm.dims[0] == 3 && dm.dims[1] == 5)));
    ARGS(PJRT_Buffer_OnDeviceSizeInBytes, sz);
    sz.buffer = b;
    OK(api->PJRT_Buffer_OnDeviceSizeInBytes(&sz));
    CHECK_MSG(sz.on_device_size_in_bytes == nbytes, "%s: on-device size %zu, want %zu",
              types[k].name, sz.on_device_size_in_bytes, nbytes);
    /* Size query, then the copy. */
    ARGS(PJRT_Buffer_ToHostBuffer, q);
    q.src = b;
    OK(api->PJRT_Buffer_ToHostBuffer(&q));
    CHECK_MSG(q.dst_size == nbytes, "%s: size query says %zu", types[k].name, q.dst_size);
    memset(dst, 0xee, sizeof dst);
    OK(buffer_to_host(b, dst, nbytes, NULL));
    CHECK_MSG(memcmp(src, dst, nbytes) == 0, "%s: round trip differs", types[k].name);
    CHECK_MSG(dst[nbytes] == 0xee, "%s: wrote past the array", types[k].name);
    /* And a copy of it on another device. */
    ARGS(PJRT_Buffer_CopyToDevice, cp);
    cp.buffer = b;
    cp.dst_device = device_at(c, 0);
    if (OK(api->PJRT_Buffer_CopyToDevice(&cp))) {
      memset(dst, 0, sizeof dst);
      OK(buffer_to_host(cp.dst_buffer, dst, nbytes, NULL));
      CHECK_MSG(memcmp(src, dst, nbytes) == 0, "%s: copied buffer differs", types[k].name);
      buffer_free(cp.dst_buffer);
    }
    buffer_free(b);
  }
  client_free(c);
}

static void test_strides_and_layouts(void) {
  PJRT_Client *c = client_create_n(1);
  if (!c) return;
  PJRT_Device *d = device_at(c, 0);
  /* A 3x4 f32 matrix m[i][j] = 10 i + j, given column-major (byte strides {4, 12}). */
  float colmajor[12], expect[12], got[12];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) {
      colmajor[j * 3 + i] = (float)(10 * i + j);
      expect[i * 4 + j] = (float)(10 * i + j);
    }
  int64_t dims[2] = {3, 4};
  int64_t cm_strides[2] = {4, 12};
  PJRT_Buffer *b = buffer_from_host_ex(c, d, NULL, PJRT_Buffer_Type_F32, dims, 2, colmajor,
                                       cm_strides,
                                       PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, NULL);
  OK(buffer_to_host(b, got, sizeof got, NULL));
  CHECK(memcmp(got, expect, sizeof got) == 0);

  /* Negative strides: both dimensions reversed, data points at the last element. */
  float rev[12];
  for (int i = 0; i < 12; i++) rev[i] = expect[11 - i];
  int64_t neg[2] = {-16, -4};
  PJRT_Buffer *bn = buffer_from_host_ex(c, d, NULL, PJRT_Buffer_Type_F32, dims, 2, &rev[11], neg,
                                        PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes,
                                        NULL);
  memset(got, 0, sizeof got);
  OK(buffer_to_host(bn, got, sizeof got, NULL));
  CHECK(memcmp(got, expect, sizeof got) == 0);
  buffer_free(bn);

  /* Padded rows (row stride 32 bytes for 4 floats). */
  float padded[3][8];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 8; j++) padded[i][j] = j < 4 ? expect[i * 4 + j] : -1.0f;
  int64_t pad_strides[2] = {32, 4};
  PJRT_Buffer *bp = buffer_from_host_ex(c, d, NULL, PJRT_Buffer_Type_F32, dims, 2, padded,
                                        pad_strides,
                                        PJRT_HostBufferSemantics_kImmutableOnlyDuringCall, NULL);
  memset(got, 0, sizeof got);
  OK(buffer_to_host(bp, got, sizeof got, NULL));
  CHECK(memcmp(got, expect, sizeof got) == 0);
  buffer_free(bp);

  /* Host layout on the way out: minor_to_major {0, 1} is column-major. */
  int64_t m2m_cm[2] = {0, 1}, m2m_rm[2] = {1, 0}, m2m_bad[2] = {1, 1};
  PJRT_Buffer_MemoryLayout lay;
  memset(&lay, 0, sizeof lay);
  lay.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  lay.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  lay.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  lay.tiled.minor_to_major = m2m_cm;
  lay.tiled.minor_to_major_size = 2;
  memset(got, 0, sizeof got);
  OK(buffer_to_host(b, got, sizeof got, &lay));
  CHECK(memcmp(got, colmajor, sizeof got) == 0);
  /* jaxlib sets the layout's struct_size wrong (0.10 leaves it 0, 0.7 writes 8) while passing
   * the whole struct: read as given */
  lay.struct_size = 0;
  lay.tiled.struct_size = 0;
  memset(got, 0, sizeof got);
  OK(buffer_to_host(b, got, sizeof got, &lay));
  CHECK(memcmp(got, colmajor, sizeof got) == 0);
  lay.struct_size = 8;
  memset(got, 0, sizeof got);
  OK(buffer_to_host(b, got, sizeof got, &lay));
  CHECK(memcmp(got, colmajor, sizeof got) == 0);
  lay.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  lay.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  lay.tiled.minor_to_major = m2m_rm; /* what frameworks send for ordinary arrays */
  memset(got, 0, sizeof got);
  OK(buffer_to_host(b, got, sizeof got, &lay));
  CHECK(memcmp(got, expect, sizeof got) == 0);
  lay.tiled.minor_to_major = m2m_bad;
  ERR(buffer_to_host(b, got, sizeof got, &lay), INVALID_ARGUMENT, "not a permutation");
  lay.tiled.minor_to_major = m2m_rm;
  int64_t tile[2] = {8, 128};
  size_t tile_sizes[1] = {2};
  lay.tiled.tile_dims = tile;
  lay.tiled.tile_dim_sizes = tile_sizes;
  lay.tiled.num_tiles = 1;
  ERR(buffer_to_host(b, got, sizeof got, &lay), UNIMPLEMENTED, "tiled layouts");
  lay.tiled.num_tiles = 0;
  /* Strided host layout: every other float. */
  PJRT_Buffer_MemoryLayout sl;
  memset(&sl, 0, sizeof sl);
  sl.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  sl.type = PJRT_Buffer_MemoryLayout_Type_Strides;
  sl.strides.struct_size = PJRT_Buffer_MemoryLayout_Strides_STRUCT_SIZE;
  int64_t wide[2] = {32, 8};
  sl.strides.byte_strides = wide;
  sl.strides.num_byte_strides = 2;
  float spread[3][8];
  memset(spread, 0, sizeof spread);
  ARGS(PJRT_Buffer_ToHostBuffer, q);
  q.src = b;
  q.host_layout = &sl;
  OK(api->PJRT_Buffer_ToHostBuffer(&q));
  CHECK_EQ_INT(q.dst_size, 2 * 32 + 3 * 8 + 4);
  OK(buffer_to_host(b, spread, sizeof spread, &sl));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) CHECK(spread[i][2 * j] == expect[i * 4 + j] && spread[i][2 * j + 1] == 0);
  /* Too small a destination. */
  ERR(buffer_to_host(b, got, sizeof got - 1, NULL), INVALID_ARGUMENT, "smaller than");
  buffer_free(b);

  /* Device layouts: the row-major one is accepted in every spelling; others are refused. */
  PJRT_Buffer_MemoryLayout dl = lay;
  ARGS(PJRT_Client_BufferFromHostBuffer, a);
  a.client = c;
  a.data = expect;
  a.type = PJRT_Buffer_Type_F32;
  a.dims = dims;
  a.num_dims = 2;
  a.device = d;
  a.device_layout = &dl;
  if (OK(api->PJRT_Client_BufferFromHostBuffer(&a))) {
    OK(event_wait_free(a.done_with_host_buffer));
    buffer_free(a.buffer);
  }
  dl.tiled.minor_to_major = m2m_cm;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), UNIMPLEMENTED, "row-major");
  int64_t one_by_four[2] = {1, 4};
  a.dims = one_by_four; /* any order is row-major for a 1x4 array */
  if (OK(api->PJRT_Client_BufferFromHostBuffer(&a))) {
    OK(event_wait_free(a.done_with_host_buffer));
    buffer_free(a.buffer);
  }
  a.dims = dims;
  int64_t dense[2] = {16, 4};
  PJRT_Buffer_MemoryLayout ds = sl;
  ds.strides.byte_strides = dense;
  a.device_layout = &ds;
  if (OK(api->PJRT_Client_BufferFromHostBuffer(&a))) {
    OK(event_wait_free(a.done_with_host_buffer));
    buffer_free(a.buffer);
  }
  a.device_layout = NULL;

  /* Bad shapes and arguments. */
  a.num_byte_strides = 1;
  a.byte_strides = dense;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "num_byte_strides");
  a.num_byte_strides = 0;
  int64_t negdim[2] = {3, -1};
  a.dims = negdim;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "negative size");
  a.dims = NULL;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "dims is NULL");
  a.dims = dims;
  a.type = PJRT_Buffer_Type_INVALID;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "element type 0");
  a.type = (PJRT_Buffer_Type)99;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "element type 99");
  a.type = PJRT_Buffer_Type_F32;
  a.data = NULL;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "data is NULL");
  a.data = expect;
  a.host_buffer_semantics = (PJRT_HostBufferSemantics)7;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "host_buffer_semantics");
  a.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  int64_t big[65];
  for (int i = 0; i < 65; i++) big[i] = 1;
  a.dims = big;
  a.num_dims = 65;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "rank 65");
  int64_t huge[2] = {INT64_MAX / 2, 4};
  a.dims = huge;
  a.num_dims = 2;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), RESOURCE_EXHAUSTED, "does not fit");
  a.dims = dims;
  a.device = NULL;
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "device and memory are both NULL");
  a.struct_size = offsetof(PJRT_Client_BufferFromHostBuffer_Args, buffer);
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "'buffer'");

  /* Empty arrays: a 0-byte destination (non-NULL) is fine, and the size query says 0. */
  int64_t empty[2] = {0, 3};
  PJRT_Buffer *be = buffer_from_host(c, d, PJRT_Buffer_Type_F32, empty, 2, NULL);
  ARGS(PJRT_Buffer_ToHostBuffer, eq);
  eq.src = be;
  OK(api->PJRT_Buffer_ToHostBuffer(&eq));
  CHECK_EQ_INT(eq.dst_size, 0);
  char zero_dst[1];
  OK(buffer_to_host(be, zero_dst, 0, NULL));
  buffer_free(be);
  client_free(c);
}

static void test_semantics_and_memories(void) {
  PJRT_Client *c = client_create_n(2);
  PJRT_Client *other = client_create_n(1);
  if (!c || !other) return;
  PJRT_Device *d = device_at(c, 0);
  int64_t dims[1] = {16};
  _Alignas(64) float host[16];
  float got[16];
  for (int i = 0; i < 16; i++) host[i] = (float)i * 0.5f;

  /* Copying semantics: the data may change right after the call. */
  for (int sem = 0; sem < 2; sem++) {
    PJRT_Event *done;
    PJRT_Buffer *b = buffer_from_host_ex(c, d, NULL, PJRT_Buffer_Type_F32, dims, 1, host, NULL,
                                         (PJRT_HostBufferSemantics)sem, &done);
    CHECK_EQ_INT(event_ready(done), 1);
    OK(event_wait_free(done));
    float saved = host[3];
    host[3] = 1000;
    OK(buffer_to_host(b, got, sizeof got, NULL));
    CHECK(got[3] == saved);
    host[3] = saved;
    buffer_free(b);
  }
  /* Zero-copy: aligned dense data is used in place; done fires when the buffer goes. */
  for (int sem = 2; sem < 4; sem++) {
    PJRT_Event *done;
    PJRT_Buffer *b = buffer_from_host_ex(c, d, NULL, PJRT_Buffer_Type_F32, dims, 1, host, NULL,
                                         (PJRT_HostBufferSemantics)sem, &done);
    ARGS(PJRT_Buffer_UnsafePointer, up);
    up.buffer = b;
    OK(api->PJRT_Buffer_UnsafePointer(&up));
    CHECK(up.buffer_pointer == (uintptr_t)host);
    CHECK_EQ_INT(event_ready(done), 0);
    OK(buffer_to_host(b, got, sizeof got, NULL));
    CHECK(memcmp(got, host, sizeof got) == 0);
    buffer_free(b);
    CHECK_EQ_INT(event_ready(done), 1);
    OK(event_wait_free(done));
  }
  /* Zero-copy of unaligned data falls back to a copy. */
  {
    PJRT_Event *done;
    int64_t d15[1] = {15};
    PJRT_Buffer *b = buffer_from_host_ex(c, d, NULL, PJRT_Buffer_Type_F32, d15, 1, host + 1, NULL,
                                         PJRT_HostBufferSemantics_kImmutableZeroCopy, &done);
    CHECK_EQ_INT(event_ready(done), 1);
    OK(event_wait_free(done));
    ARGS(PJRT_Buffer_UnsafePointer, up);
    up.buffer = b;
    OK(api->PJRT_Buffer_UnsafePointer(&up));
    CHECK(up.buffer_pointer != (uintptr_t)(host + 1));
    buffer_free(b);
  }

  /* Memories: a buffer can be placed in any kind and copied between them. */
  PJRT_Memory *pinned = device_memory(d, "pinned_host");
  PJRT_Buffer *bp = buffer_from_host_ex(c, NULL, pinned, PJRT_Buffer_Type_F32, dims, 1, host,
                                        NULL, PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
                                        NULL);
  ARGS(PJRT_Buffer_Memory, bm);
  bm.buffer = bp;
  OK(api->PJRT_Buffer_Memory(&bm));
  CHECK(bm.memory == pinned);
  ARGS(PJRT_Buffer_Device, bd);
  bd.buffer = bp;
  OK(api->PJRT_Buffer_Device(&bd));
  CHECK(bd.device == d);
  ARGS(PJRT_Buffer_CopyToMemory, cm);
  cm.buffer = bp;
  cm.dst_memory = device_memory(d, "device");
  OK(api->PJRT_Buffer_CopyToMemory(&cm));
  bm.buffer = cm.dst_buffer;
  OK(api->PJRT_Buffer_Memory(&bm));
  CHECK_EQ_STR(memory_kind(bm.memory), "device");
  memset(got, 0, sizeof got);
  OK(buffer_to_host(cm.dst_buffer, got, sizeof got, NULL));
  CHECK(memcmp(got, host, sizeof got) == 0);
  buffer_free(cm.dst_buffer);
  /* to the memory it is in: a copy (jax.device_put(x, may_alias=False)), a new buffer */
  cm.dst_memory = pinned;
  if (OK(api->PJRT_Buffer_CopyToMemory(&cm))) {
    CHECK(cm.dst_buffer != bp);
    bm.buffer = cm.dst_buffer;
    OK(api->PJRT_Buffer_Memory(&bm));
    CHECK(bm.memory == pinned);
    memset(got, 0, sizeof got);
    OK(buffer_to_host(cm.dst_buffer, got, sizeof got, NULL));
    CHECK(memcmp(got, host, sizeof got) == 0);
    ARGS(PJRT_Buffer_UnsafePointer, p1);
    ARGS(PJRT_Buffer_UnsafePointer, p2);
    p1.buffer = bp;
    p2.buffer = cm.dst_buffer;
    OK(api->PJRT_Buffer_UnsafePointer(&p1));
    OK(api->PJRT_Buffer_UnsafePointer(&p2));
    CHECK(p1.buffer_pointer != p2.buffer_pointer);
    buffer_free(cm.dst_buffer);
  }
  cm.dst_memory = device_memory(device_at(other, 0), "device");
  ERR(api->PJRT_Buffer_CopyToMemory(&cm), INVALID_ARGUMENT, "another client");
  ARGS(PJRT_Buffer_CopyToDevice, cd);
  cd.buffer = bp;
  cd.dst_device = d;
  ERR(api->PJRT_Buffer_CopyToDevice(&cd), INVALID_ARGUMENT, "already on device 0");
  cd.dst_device = device_at(other, 0);
  ERR(api->PJRT_Buffer_CopyToDevice(&cd), INVALID_ARGUMENT, "another client");
  /* A memory of another client is refused at creation too. */
  ARGS(PJRT_Client_BufferFromHostBuffer, a);
  a.client = c;
  a.data = host;
  a.type = PJRT_Buffer_Type_F32;
  a.dims = dims;
  a.num_dims = 1;
  a.memory = device_memory(device_at(other, 0), "device");
  ERR(api->PJRT_Client_BufferFromHostBuffer(&a), INVALID_ARGUMENT, "another client");
  buffer_free(bp);
  client_free(other);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Buffer life cycle: delete vs destroy, references, raw copies, donation, bitcast             */

static int view_deletes;
static void *view_deleted_ptr;
static void on_view_delete(void *ptr, void *arg) {
  view_deletes++;
  view_deleted_ptr = ptr;
  CHECK(arg == &view_deletes);
}

static void raw_future_deliver(PJRT_Buffer_CopyRawToHostFuture_Args *f, void *dst,
                               PJRT_Error_Code code) {
  PJRT_Buffer_CopyRawToHostFuture_Callback_Args cb;
  memset(&cb, 0, sizeof cb);
  cb.struct_size = PJRT_Buffer_CopyRawToHostFuture_Callback_Args_STRUCT_SIZE;
  cb.callback_data = f->callback_data;
  cb.error_code = code;
  cb.error_message = code ? "no destination" : NULL;
  cb.error_message_size = code ? strlen("no destination") : 0;
  cb.dst = dst;
  f->future_ready_callback(&cb);
}

static void test_buffer_lifecycle(void) {
  PJRT_Client *c = client_create_n(2);
  if (!c) return;
  PJRT_Device *d = device_at(c, 0);
  int64_t dims[2] = {2, 3};
  float v[6] = {1, 2, 3, 4, 5, 6}, got[6];

  /* Delete is not Destroy; a ready event taken before Delete keeps its outcome. */
  PJRT_Buffer *b = buffer_from_host(c, d, PJRT_Buffer_Type_F32, dims, 2, v);
  ARGS(PJRT_Buffer_ReadyEvent, re);
  re.buffer = b;
  OK(api->PJRT_Buffer_ReadyEvent(&re));
  PJRT_Event *before = re.event;
  CHECK_EQ_INT(buffer_is_deleted(b), 0);
  ARGS(PJRT_Buffer_Delete, del);
  del.buffer = b;
  OK(api->PJRT_Buffer_Delete(&del));
  OK(api->PJRT_Buffer_Delete(&del)); /* twice is harmless */
  CHECK_EQ_INT(buffer_is_deleted(b), 1);
  OK(event_wait_free(before));
  ERR(buffer_ready_error(b), INVALID_ARGUMENT, "deleted");
  ERR(buffer_to_host(b, got, sizeof got, NULL), INVALID_ARGUMENT, "deleted");
  ARGS(PJRT_Buffer_UnsafePointer, up);
  up.buffer = b;
  ERR(api->PJRT_Buffer_UnsafePointer(&up), INVALID_ARGUMENT, "deleted");
  ARGS(PJRT_Buffer_CopyToDevice, cd);
  cd.buffer = b;
  cd.dst_device = device_at(c, 1);
  ERR(api->PJRT_Buffer_CopyToDevice(&cd), INVALID_ARGUMENT, "deleted");
  ARGS(PJRT_Buffer_ElementType, et); /* properties still answer */
  et.buffer = b;
  OK(api->PJRT_Buffer_ElementType(&et));
  buffer_free(b);

  /* Layout, unpadded and dynamic dimensions. */
  b = buffer_from_host(c, d, PJRT_Buffer_Type_F32, dims, 2, v);
  ARGS(PJRT_Buffer_GetMemoryLayout, ml);
  ml.buffer = b;
  OK(api->PJRT_Buffer_GetMemoryLayout(&ml));
  CHECK_EQ_INT(ml.layout.type, PJRT_Buffer_MemoryLayout_Type_Tiled);
  CHECK(ml.layout.tiled.minor_to_major_size == 2 && ml.layout.tiled.minor_to_major[0] == 1 &&
        ml.layout.tiled.minor_to_major[1] == 0 && ml.layout.tiled.num_tiles == 0);
  ARGS(PJRT_Buffer_UnpaddedDimensions, ud);
  ud.buffer = b;
  OK(api->PJRT_Buffer_UnpaddedDimensions(&ud));
  CHECK(ud.num_dims == 2 && ud.unpadded_dims[1] == 3);
  ARGS(PJRT_Buffer_DynamicDimensionIndices, ddi);
  ddi.buffer = b;
  OK(api->PJRT_Buffer_DynamicDimensionIndices(&ddi));
  CHECK_EQ_INT(ddi.num_dynamic_dims, 0);
  ARGS(PJRT_Buffer_IsOnCpu, oc);
  oc.buffer = b;
  OK(api->PJRT_Buffer_IsOnCpu(&oc));
  CHECK(oc.is_on_cpu);

  /* Raw copies. */
  ARGS(PJRT_Buffer_CopyRawToHost, raw);
  raw.buffer = b;
  raw.dst = got;
  raw.offset = 8;
  raw.transfer_size = 12;
  memset(got, 0, sizeof got);
  OK(api->PJRT_Buffer_CopyRawToHost(&raw));
  CHECK(raw.event != NULL);
  OK(event_wait_free(raw.event));
  CHECK(got[0] == 3 && got[2] == 5 && got[3] == 0);
  raw.offset = 20;
  raw.transfer_size = 8;
  ERR(api->PJRT_Buffer_CopyRawToHost(&raw), INVALID_ARGUMENT, "outside the buffer");
  raw.offset = -1;
  ERR(api->PJRT_Buffer_CopyRawToHost(&raw), INVALID_ARGUMENT, "outside the buffer");
  ARGS(PJRT_Buffer_CopyRawToHostFuture, fut);
  fut.buffer = b;
  fut.offset = 4;
  fut.transfer_size = 8;
  OK(api->PJRT_Buffer_CopyRawToHostFuture(&fut));
  CHECK(fut.event && fut.future_ready_callback && fut.callback_data);
  CHECK_EQ_INT(event_ready(fut.event), 0);
  memset(got, 0, sizeof got);
  raw_future_deliver(&fut, got, PJRT_Error_Code_OK);
  OK(event_wait_free(fut.event));
  CHECK(got[0] == 2 && got[1] == 3);
  OK(api->PJRT_Buffer_CopyRawToHostFuture(&fut));
  raw_future_deliver(&fut, NULL, PJRT_Error_Code_ABORTED);
  ERR(event_wait_free(fut.event), ABORTED, "no destination");

  /* External references pin the memory past Delete. */
  ARGS(PJRT_Buffer_DecreaseExternalReferenceCount, dec);
  dec.buffer = b;
  ERR(api->PJRT_Buffer_DecreaseExternalReferenceCount(&dec), INVALID_ARGUMENT,
      "zero reference count");
  ARGS(PJRT_Buffer_IncreaseExternalReferenceCount, inc);
  inc.buffer = b;
  OK(api->PJRT_Buffer_IncreaseExternalReferenceCount(&inc));
  OK(api->PJRT_Buffer_IncreaseExternalReferenceCount(&inc));
  ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer, op);
  op.buffer = b;
  OK(api->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&op));
  up.buffer = b;
  OK(api->PJRT_Buffer_UnsafePointer(&up));
  CHECK(op.device_memory_ptr && (uintptr_t)op.device_memory_ptr == up.buffer_pointer);
  int64_t in_use = device_bytes_in_use(d);
  del.buffer = b;
  OK(api->PJRT_Buffer_Delete(&del));
  CHECK_EQ_INT(device_bytes_in_use(d), in_use); /* still pinned */
  CHECK(((float *)op.device_memory_ptr)[5] == 6); /* still readable (ASan would object) */
  OK(api->PJRT_Buffer_DecreaseExternalReferenceCount(&dec));
  CHECK_EQ_INT(device_bytes_in_use(d), in_use);
  OK(api->PJRT_Buffer_DecreaseExternalReferenceCount(&dec));
  CHECK_EQ_INT(device_bytes_in_use(d), in_use - 24);
  ERR(api->PJRT_Buffer_IncreaseExternalReferenceCount(&inc), INVALID_ARGUMENT, "deleted");
  buffer_free(b);
  /* Destroy drops what the handle still holds. */
  b = buffer_from_host(c, d, PJRT_Buffer_Type_F32, dims, 2, v);
  inc.buffer = b;
  OK(api->PJRT_Buffer_IncreaseExternalReferenceCount(&inc));
  buffer_free(b);

  /* Uninitialized buffers. */
  ARGS(PJRT_Client_CreateUninitializedBuffer, un);
  un.client = c;
  un.shape_dims = dims;
  un.shape_num_dims = 2;
  un.shape_element_type = PJRT_Buffer_Type_S16;
  un.device = d;
  OK(api->PJRT_Client_CreateUninitializedBuffer(&un));
  OK(buffer_ready_error(un.buffer));
  ARGS(PJRT_Buffer_OnDeviceSizeInBytes, sz);
  sz.buffer = un.buffer;
  OK(api->PJRT_Buffer_OnDeviceSizeInBytes(&sz));
  CHECK_EQ_INT(sz.on_device_size_in_bytes, 12);
  OK(buffer_to_host(un.buffer, got, 12, NULL));
  buffer_free(un.buffer);
  un.shape_element_type = PJRT_Buffer_Type_INVALID;
  ERR(api->PJRT_Client_CreateUninitializedBuffer(&un), INVALID_ARGUMENT, "element type");

  /* Views of someone else's memory: no copy; the callback runs once nobody uses it. */
  float *ext = aligned_alloc(64, 64);
  for (int i = 0; i < 6; i++) ext[i] = (float)(i * i);
  view_deletes = 0;
  ARGS(PJRT_Client_CreateViewOfDeviceBuffer, vw);
  vw.client = c;
  vw.device_buffer_ptr = ext;
  vw.dims = dims;
  vw.num_dims = 2;
  vw.element_type = PJRT_Buffer_Type_F32;
  vw.device = d;
  vw.on_delete_callback = on_view_delete;
  vw.on_delete_callback_arg = &view_deletes;
  OK(api->PJRT_Client_CreateViewOfDeviceBuffer(&vw));
  up.buffer = vw.buffer;
  OK(api->PJRT_Buffer_UnsafePointer(&up));
  CHECK(up.buffer_pointer == (uintptr_t)ext);
  ext[2] = 42; /* visible through the view */
  OK(buffer_to_host(vw.buffer, got, sizeof got, NULL));
  CHECK(got[2] == 42 && got[5] == 25);
  inc.buffer = vw.buffer;
  OK(api->PJRT_Buffer_IncreaseExternalReferenceCount(&inc));
  del.buffer = vw.buffer;
  OK(api->PJRT_Buffer_Delete(&del));
  CHECK_EQ_INT(view_deletes, 0);
  dec.buffer = vw.buffer;
  OK(api->PJRT_Buffer_DecreaseExternalReferenceCount(&dec));
  CHECK_EQ_INT(view_deletes, 1);
  CHECK(view_deleted_ptr == ext);
  buffer_free(vw.buffer);
  CHECK_EQ_INT(view_deletes, 1);
  /* An older caller (before 0.66, no `memory`) and the `stream` argument. */
  vw.struct_size = offsetof(PJRT_Client_CreateViewOfDeviceBuffer_Args, memory);
  OK(api->PJRT_Client_CreateViewOfDeviceBuffer(&vw));
  ARGS(PJRT_Buffer_Device, bd);
  bd.buffer = vw.buffer;
  OK(api->PJRT_Buffer_Device(&bd));
  CHECK(bd.device == d);
  buffer_free(vw.buffer);
  CHECK_EQ_INT(view_deletes, 2);
  vw.struct_size = PJRT_Client_CreateViewOfDeviceBuffer_Args_STRUCT_SIZE;
  vw.stream = 1;
  ERR(api->PJRT_Client_CreateViewOfDeviceBuffer(&vw), UNIMPLEMENTED, "stream");
  free(ext);

  /* Error buffers. */
  ARGS(PJRT_Client_CreateErrorBuffer, eb);
  eb.client = c;
  eb.error_code = PJRT_Error_Code_INTERNAL;
  eb.error_message = "upstream failed";
  eb.error_message_size = strlen(eb.error_message);
  eb.shape_dims = dims;
  eb.shape_num_dims = 2;
  eb.shape_element_type = PJRT_Buffer_Type_F32;
  eb.memory = device_memory(d, "device");
  OK(api->PJRT_Client_CreateErrorBuffer(&eb));
  ERR(buffer_ready_error(eb.buffer), INTERNAL, "upstream failed");
  ERR(buffer_to_host(eb.buffer, got, sizeof got, NULL), INTERNAL, "upstream failed");
  up.buffer = eb.buffer;
  ERR(api->PJRT_Buffer_UnsafePointer(&up), FAILED_PRECONDITION, "error buffer");
  cd.buffer = eb.buffer;
  cd.dst_device = device_at(c, 1);
  if (OK(api->PJRT_Buffer_CopyToDevice(&cd))) {
    ERR(buffer_ready_error(cd.dst_buffer), INTERNAL, "upstream failed");
    buffer_free(cd.dst_buffer);
  }
  CHECK_EQ_INT(buffer_is_deleted(eb.buffer), 0);
  buffer_free(eb.buffer);
  eb.error_code = PJRT_Error_Code_OK;
  ERR(api->PJRT_Client_CreateErrorBuffer(&eb), INVALID_ARGUMENT, "error_code is OK");

  /* Bitcast: the same bytes under another type and shape; the source is consumed. */
  b = buffer_from_host(c, d, PJRT_Buffer_Type_F32, dims, 2, v);
  ARGS(PJRT_Buffer_Bitcast, bc);
  bc.buffer = b;
  bc.element_type = PJRT_Buffer_Type_U32;
  int64_t six[1] = {6};
  bc.dims = six;
  bc.num_dims = 1;
  OK(api->PJRT_Buffer_Bitcast(&bc));
  uint32_t bits[6];
  OK(buffer_to_host(bc.out_buffer, bits, sizeof bits, NULL));
  CHECK(memcmp(bits, v, sizeof bits) == 0);
  CHECK_EQ_INT(buffer_is_deleted(b), 1);
  bc.buffer = bc.out_buffer;
  int64_t seven[1] = {7};
  bc.dims = seven;
  ERR(api->PJRT_Buffer_Bitcast(&bc), INVALID_ARGUMENT, "cannot bitcast");
  buffer_free(bc.buffer);
  buffer_free(b);

  /* Donation with a control dependency: the new buffer is ready once the caller says so. */
  b = buffer_from_host(c, d, PJRT_Buffer_Type_F32, dims, 2, v);
  ARGS(PJRT_Buffer_DonateWithControlDependency, dn);
  dn.buffer = b;
  OK(api->PJRT_Buffer_DonateWithControlDependency(&dn));
  CHECK_EQ_INT(buffer_is_deleted(b), 1);
  ERR(buffer_ready_error(b), INVALID_ARGUMENT, "donated");
  ARGS(PJRT_Buffer_ReadyEvent, dre);
  dre.buffer = dn.out_buffer;
  OK(api->PJRT_Buffer_ReadyEvent(&dre));
  CHECK_EQ_INT(event_ready(dre.event), 0);
  ARGS(PJRT_Buffer_ToHostBuffer, th); /* queued until the dependency */
  th.src = dn.out_buffer;
  th.dst = got;
  th.dst_size = sizeof got;
  memset(got, 0, sizeof got);
  OK(api->PJRT_Buffer_ToHostBuffer(&th));
  CHECK_EQ_INT(event_ready(th.event), 0);
  PJRT_Buffer_DonateWithControlDependency_Callback_Args dcb;
  memset(&dcb, 0, sizeof dcb);
  dcb.struct_size = PJRT_Buffer_DonateWithControlDependency_Callback_Args_STRUCT_SIZE;
  dcb.callback_data = dn.callback_data;
  dcb.error_code = PJRT_Error_Code_OK;
  dn.dependency_ready_callback(&dcb);
  OK(event_wait_free(dre.event));
  OK(event_wait_free(th.event));
  CHECK(memcmp(got, v, sizeof got) == 0);
  buffer_free(b);
  /* A failed dependency fails the new buffer; donating a pinned buffer is refused. */
  b = dn.out_buffer;
  dn.buffer = b;
  OK(api->PJRT_Buffer_DonateWithControlDependency(&dn));
  dcb.callback_data = dn.callback_data;
  dcb.error_code = PJRT_Error_Code_CANCELLED;
  dcb.error_message = "step aborted";
  dcb.error_message_size = strlen(dcb.error_message);
  dn.dependency_ready_callback(&dcb);
  ERR(buffer_ready_error(dn.out_buffer), CANCELLED, "step aborted");
  buffer_free(dn.out_buffer);
  buffer_free(b);
  b = buffer_from_host(c, d, PJRT_Buffer_Type_F32, dims, 2, v);
  inc.buffer = b;
  OK(api->PJRT_Buffer_IncreaseExternalReferenceCount(&inc));
  dn.buffer = b;
  ERR(api->PJRT_Buffer_DonateWithControlDependency(&dn), FAILED_PRECONDITION, "external");
  buffer_free(b);

  /* A handle of the wrong kind. */
  ARGS(PJRT_Buffer_ElementType, wrong);
  wrong.buffer = (PJRT_Buffer *)d;
  ERR(api->PJRT_Buffer_ElementType(&wrong), INVALID_ARGUMENT, "not a live cjrt object");
  client_free(c);
}

/* A copy of a buffer that is not ready yet, whose target is deleted before the source is ready
 * while a reader already holds the target (JAX: device_put of a pending result, the put array
 * passed to a program and dropped at once). The reader must see the copied data: the copy once
 * skipped filling a target that was gone, and the program read uninitialized memory. */
static void test_copy_of_pending_then_deleted(void) {
  PJRT_Client *c = client_create_n(2);
  if (!c) return;
  pending src = pending_f32(c, device_at(c, 0), 4);
  if (!src.buffer) {
    client_free(c);
    return;
  }
  ARGS(PJRT_Buffer_CopyToMemory, cm);
  cm.buffer = src.buffer;
  cm.dst_memory = device_memory(device_at(c, 1), "device");
  OK(api->PJRT_Buffer_CopyToMemory(&cm));
  PJRT_Buffer *dst = cm.dst_buffer;
  float got[4] = {0}, data[4] = {1.5f, -2.5f, 3.25f, 8.0f};
  ARGS(PJRT_Buffer_ToHostBuffer, th);
  th.src = dst;
  th.dst = got;
  th.dst_size = sizeof got;
  OK(api->PJRT_Buffer_ToHostBuffer(&th));
  CHECK_EQ_INT(event_ready(th.event), 0);
  buffer_free(dst); /* destroyed while the copy and the read wait for the source */
  pending_fill(&src, data, 4);
  OK(event_wait_free(th.event));
  CHECK_MSG(memcmp(got, data, sizeof got) == 0, "the read of the deleted copy saw %g %g %g %g",
            got[0], got[1], got[2], got[3]);
  buffer_free(src.buffer);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Asynchronous host-to-device transfers                                                       */

static void test_transfers(void) {
  PJRT_Client *c = client_create_n(2);
  if (!c) return;
  PJRT_Device *d = device_at(c, 1);
  int64_t d0[1] = {4}, d1[2] = {3, 2};
  PJRT_ShapeSpec specs[2];
  memset(specs, 0, sizeof specs);
  specs[0].struct_size = PJRT_ShapeSpec_STRUCT_SIZE;
  specs[0].dims = d0;
  specs[0].num_dims = 1;
  specs[0].element_type = PJRT_Buffer_Type_F32;
  specs[1].struct_size = PJRT_ShapeSpec_STRUCT_SIZE;
  specs[1].dims = d1;
  specs[1].num_dims = 2;
  specs[1].element_type = PJRT_Buffer_Type_S8;
  ARGS(PJRT_Client_CreateBuffersForAsyncHostToDevice, cb);
  cb.client = c;
  cb.shape_specs = specs;
  cb.num_shape_specs = 2;
  cb.memory = device_memory(d, "device");
  if (!OK(api->PJRT_Client_CreateBuffersForAsyncHostToDevice(&cb))) return;
  PJRT_AsyncHostToDeviceTransferManager *tm = cb.transfer_manager;

  ARGS(PJRT_AsyncHostToDeviceTransferManager_BufferCount, cnt);
  cnt.transfer_manager = tm;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_BufferCount(&cnt));
  CHECK_EQ_INT(cnt.buffer_count, 2);
  ARGS(PJRT_AsyncHostToDeviceTransferManager_BufferSize, bs);
  bs.transfer_manager = tm;
  bs.buffer_index = 1;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_BufferSize(&bs));
  CHECK_EQ_INT(bs.buffer_size, 6);
  bs.buffer_index = 2;
  ERR(api->PJRT_AsyncHostToDeviceTransferManager_BufferSize(&bs), INVALID_ARGUMENT,
      "out of range");
  ARGS(PJRT_AsyncHostToDeviceTransferManager_Device, dv);
  dv.transfer_manager = tm;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_Device(&dv));
  CHECK(dv.device_out == d);
  ARGS(PJRT_AsyncHostToDeviceTransferManager_AddMetadata, md);
  md.transfer_manager = tm;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_AddMetadata(&md));

  ARGS(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer, rb);
  rb.transfer_manager = tm;
  rb.buffer_index = 0;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&rb));
  PJRT_Buffer *b0 = rb.buffer_out;
  ERR(api->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&rb), FAILED_PRECONDITION,
      "already retrieved");
  ARGS(PJRT_Buffer_ReadyEvent, re);
  re.buffer = b0;
  OK(api->PJRT_Buffer_ReadyEvent(&re));
  CHECK_EQ_INT(event_ready(re.event), 0);

  /* A read queued before the data lands, and the buffer deleted meanwhile: the read still
   * completes (the memory outlives its in-flight users). */
  float got[4] = {0}, data[4] = {1.5f, 2.5f, 3.5f, 4.5f};
  ARGS(PJRT_Buffer_ToHostBuffer, th);
  th.src = b0;
  th.dst = got;
  th.dst_size = sizeof got;
  OK(api->PJRT_Buffer_ToHostBuffer(&th));
  CHECK_EQ_INT(event_ready(th.event), 0);
  ARGS(PJRT_Buffer_Delete, del);
  del.buffer = b0;
  OK(api->PJRT_Buffer_Delete(&del));

  ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferData, td);
  td.transfer_manager = tm;
  td.buffer_index = 0;
  td.data = data;
  td.offset = 0;
  td.transfer_size = 8;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_TransferData(&td));
  OK(event_wait_free(td.done_with_h2d_transfer));
  CHECK_EQ_INT(event_ready(re.event), 0);
  td.data = data + 2;
  td.offset = 8;
  td.transfer_size = 8;
  td.is_last_transfer = true;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_TransferData(&td));
  OK(event_wait_free(td.done_with_h2d_transfer));
  OK(event_wait_free(re.event));
  OK(event_wait_free(th.event));
  CHECK(memcmp(got, data, sizeof got) == 0);
  ERR(api->PJRT_AsyncHostToDeviceTransferManager_TransferData(&td), FAILED_PRECONDITION,
      "already complete");
  td.buffer_index = 1;
  td.offset = 4;
  td.transfer_size = 4; /* past the 6 bytes */
  td.is_last_transfer = false;
  ERR(api->PJRT_AsyncHostToDeviceTransferManager_TransferData(&td), INVALID_ARGUMENT,
      "outside buffer 1's 6 bytes");
  buffer_free(b0);

  /* A literal with a column-major layout into buffer 1. */
  int8_t lit[6] = {1, 3, 5, 2, 4, 6}; /* 3x2 column-major of {{1,2},{3,4},{5,6}} */
  int64_t m2m[2] = {0, 1};
  PJRT_Buffer_MemoryLayout lay;
  memset(&lay, 0, sizeof lay);
  lay.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  lay.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  lay.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  lay.tiled.minor_to_major = m2m;
  lay.tiled.minor_to_major_size = 2;
  ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral, tl);
  tl.transfer_manager = tm;
  tl.buffer_index = 1;
  tl.data = lit;
  tl.shape_dims = d0; /* wrong shape first */
  tl.shape_num_dims = 1;
  tl.shape_element_type = PJRT_Buffer_Type_S8;
  ERR(api->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&tl), INVALID_ARGUMENT,
      "does not match");
  tl.shape_dims = d1;
  tl.shape_num_dims = 2;
  tl.shape_layout = &lay;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&tl));
  OK(event_wait_free(tl.done_with_h2d_transfer));
  rb.buffer_index = 1;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&rb));
  int8_t g8[6];
  OK(buffer_to_host(rb.buffer_out, g8, sizeof g8, NULL));
  CHECK(g8[0] == 1 && g8[1] == 2 && g8[2] == 3 && g8[5] == 6);
  buffer_free(rb.buffer_out);
  ARGS(PJRT_AsyncHostToDeviceTransferManager_Destroy, tdes);
  tdes.transfer_manager = tm;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_Destroy(&tdes));

  /* Errors: SetBufferError, and destroying a manager with unfinished buffers. */
  OK(api->PJRT_Client_CreateBuffersForAsyncHostToDevice(&cb));
  tm = cb.transfer_manager;
  ARGS(PJRT_AsyncHostToDeviceTransferManager_SetBufferError, se);
  se.transfer_manager = tm;
  se.buffer_index = 0;
  se.error_code = PJRT_Error_Code_UNAVAILABLE;
  se.error_message = "link down";
  se.error_message_size = strlen(se.error_message);
  OK(api->PJRT_AsyncHostToDeviceTransferManager_SetBufferError(&se));
  ERR(api->PJRT_AsyncHostToDeviceTransferManager_SetBufferError(&se), FAILED_PRECONDITION,
      "already complete");
  rb.transfer_manager = tm;
  rb.buffer_index = 0;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&rb));
  ERR(buffer_ready_error(rb.buffer_out), UNAVAILABLE, "link down");
  buffer_free(rb.buffer_out);
  rb.buffer_index = 1;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&rb));
  re.buffer = rb.buffer_out;
  OK(api->PJRT_Buffer_ReadyEvent(&re));
  tdes.transfer_manager = tm;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_Destroy(&tdes));
  ERR(event_wait_free(re.event), CANCELLED, "destroyed before buffer 1");
  buffer_free(rb.buffer_out);

  /* Bad specs. */
  specs[1].element_type = (PJRT_Buffer_Type)77;
  ERR(api->PJRT_Client_CreateBuffersForAsyncHostToDevice(&cb), INVALID_ARGUMENT, "shape_specs[1]");
  specs[1].element_type = PJRT_Buffer_Type_S8;
  cb.memory = NULL;
  ERR(api->PJRT_Client_CreateBuffersForAsyncHostToDevice(&cb), INVALID_ARGUMENT, "memory is NULL");
  client_free(c);
}

static void test_execute_context(void) {
  ARGS(PJRT_ExecuteContext_Create, cc);
  OK(api->PJRT_ExecuteContext_Create(&cc));
  CHECK(cc.context != NULL);
  ARGS(PJRT_ExecuteContext_Destroy, cd);
  cd.context = cc.context;
  OK(api->PJRT_ExecuteContext_Destroy(&cd));
}

/* Newer callers may pass larger structs; the extra bytes are ignored. */
static void test_larger_structs(void) {
  struct {
    PJRT_Client_PlatformName_Args a;
    char future[64];
  } big;
  memset(&big, 0x5a, sizeof big);
  PJRT_Client *c = client_create_n(1);
  big.a.struct_size = sizeof big;
  big.a.extension_start = NULL;
  big.a.client = c;
  OK(api->PJRT_Client_PlatformName(&big.a));
  CHECK(big.a.platform_name_size == 4);
  /* An unknown extension chain on the args is tolerated. */
  PJRT_Extension_Base ext = {sizeof ext, (PJRT_Extension_Type)1, NULL};
  ARGS(PJRT_Client_Devices, dv);
  dv.extension_start = &ext;
  dv.client = c;
  OK(api->PJRT_Client_Devices(&dv));
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Threads                                                                                     */

typedef struct worker {
  PJRT_Client *c;
  PJRT_Buffer *shared;
  PJRT_Memory *mem;
  int index;
  int bad;
} worker;

/* Workers use the API directly and count problems themselves (the CHECK counters are not
 * thread-safe). */
static void *worker_main(void *p) {
  worker *w = p;
  int64_t dims[1] = {64};
  double data[64], got[64];
  static const char key;
  ARGS(PJRT_Client_Devices, dv);
  dv.client = w->c;
  if (api->PJRT_Client_Devices(&dv)) {
    w->bad++;
    return NULL;
  }
  for (int it = 0; it < 40; it++) {
    for (int i = 0; i < 64; i++) data[i] = w->index * 1000 + it + i * 0.25;
    ARGS(PJRT_Client_BufferFromHostBuffer, a);
    a.client = w->c;
    a.data = data;
    a.type = PJRT_Buffer_Type_F64;
    a.dims = dims;
    a.num_dims = 1;
    a.device = dv.devices[(size_t)(w->index + it) % dv.num_devices];
    PJRT_Error *e = api->PJRT_Client_BufferFromHostBuffer(&a);
    if (e) {
      err_free(e);
      w->bad++;
      continue;
    }
    ARGS(PJRT_Event_Await, aw);
    aw.event = a.done_with_host_buffer;
    if ((e = api->PJRT_Event_Await(&aw))) w->bad++, err_free(e);
    ARGS(PJRT_Event_Destroy, ed);
    ed.event = a.done_with_host_buffer;
    if ((e = api->PJRT_Event_Destroy(&ed))) w->bad++, err_free(e);
    if ((e = buffer_to_host(a.buffer, got, sizeof got, NULL)) || memcmp(got, data, sizeof got))
      w->bad++;
    err_free(e);
    /* The shared buffer, read by everyone at once. */
    float s[8];
    e = buffer_to_host(w->shared, s, sizeof s, NULL);
    if (e || s[7] != 7) w->bad++;
    err_free(e);
    /* Events made and completed here while others do the same. */
    ARGS(PJRT_Event_Create, ec);
    if ((e = api->PJRT_Event_Create(&ec))) {
      err_free(e);
      w->bad++;
    } else {
      cb_record r = {0};
      ARGS(PJRT_Event_OnReady, onr);
      onr.event = ec.event;
      onr.callback = record_cb;
      onr.user_arg = &r;
      if ((e = api->PJRT_Event_OnReady(&onr))) w->bad++, err_free(e);
      ARGS(PJRT_Event_Set, es);
      es.event = ec.event;
      if ((e = api->PJRT_Event_Set(&es))) w->bad++, err_free(e);
      if (atomic_load(&r.calls) != 1) w->bad++;
      ed.event = ec.event;
      if ((e = api->PJRT_Event_Destroy(&ed))) w->bad++, err_free(e);
    }
    /* User data under concurrent writers. */
    int *v = malloc(sizeof *v);
    *v = it;
    w->mem->vtable->set_user_data(w->mem, &key, v, free);
    (void)w->mem->vtable->get_user_data(w->mem, &key);
    ARGS(PJRT_Buffer_Destroy, bd);
    bd.buffer = a.buffer;
    if ((e = api->PJRT_Buffer_Destroy(&bd))) w->bad++, err_free(e);
  }
  return NULL;
}

static void test_threads(void) {
  PJRT_Client *c = client_create_n(3);
  if (!c) return;
  float sdata[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  int64_t dims[1] = {8};
  PJRT_Buffer *shared = buffer_from_host(c, device_at(c, 0), PJRT_Buffer_Type_F32, dims, 1, sdata);
  enum { N = 6 };
  worker w[N];
  pthread_t t[N];
  for (int i = 0; i < N; i++) {
    w[i] = (worker){c, shared, device_memory(device_at(c, 0), "device"), i, 0};
    pthread_create(&t[i], NULL, worker_main, &w[i]);
  }
  int bad = 0;
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    bad += w[i].bad;
  }
  CHECK_EQ_INT(bad, 0);
  buffer_free(shared);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Topologies, process infos, DMA registration, alias buffers                                  */

static PJRT_NamedValue int_opt(const char *name, int64_t v) {
  PJRT_NamedValue o;
  memset(&o, 0, sizeof o);
  o.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  o.name = name;
  o.name_size = strlen(name);
  o.type = PJRT_NamedValue_kInt64;
  o.int64_value = v;
  o.value_size = 1;
  return o;
}

static PJRT_Error *topo_create(const char *name, const PJRT_NamedValue *opts, size_t n,
                               PJRT_TopologyDescription **out) {
  ARGS(PJRT_TopologyDescription_Create, a);
  a.topology_name = name;
  a.topology_name_size = name ? strlen(name) : 0;
  a.create_options = opts;
  a.num_options = n;
  *out = NULL;
  PJRT_Error *e = api->PJRT_TopologyDescription_Create(&a);
  if (!e) *out = a.topology;
  return e;
}

static void topo_free(PJRT_TopologyDescription *t) {
  ARGS(PJRT_TopologyDescription_Destroy, a);
  a.topology = t;
  OK(api->PJRT_TopologyDescription_Destroy(&a));
}

/* Serialized bytes (malloc'ed copy). */
static unsigned char *topo_serialize(PJRT_TopologyDescription *t, size_t *len) {
  ARGS(PJRT_TopologyDescription_Serialize, a);
  a.topology = t;
  *len = 0;
  if (!OK(api->PJRT_TopologyDescription_Serialize(&a))) return NULL;
  unsigned char *b = malloc(a.serialized_bytes_size);
  memcpy(b, a.serialized_bytes, a.serialized_bytes_size);
  *len = a.serialized_bytes_size;
  CHECK(a.serialized_topology_deleter != NULL);
  a.serialized_topology_deleter(a.serialized_topology);
  return b;
}

static PJRT_Error *topo_deserialize(const void *b, size_t n, PJRT_TopologyDescription **out) {
  ARGS(PJRT_TopologyDescription_Deserialize, a);
  a.serialized_topology = b;
  a.serialized_topology_size = n;
  *out = NULL;
  PJRT_Error *e = api->PJRT_TopologyDescription_Deserialize(&a);
  if (!e) *out = a.topology;
  return e;
}

static uint64_t topo_fingerprint(PJRT_TopologyDescription *t) {
  ARGS(PJRT_TopologyDescription_Fingerprint, a);
  a.topology = t;
  return OK(api->PJRT_TopologyDescription_Fingerprint(&a)) ? a.fingerprint : 0;
}

static PJRT_DeviceDescription *const *topo_devices(PJRT_TopologyDescription *t, size_t *n) {
  ARGS(PJRT_TopologyDescription_GetDeviceDescriptions, a);
  a.topology = t;
  *n = 0;
  if (!OK(api->PJRT_TopologyDescription_GetDeviceDescriptions(&a))) return NULL;
  *n = a.num_descriptions;
  return a.descriptions;
}

static int desc_id(PJRT_DeviceDescription *d, int *process) {
  ARGS(PJRT_DeviceDescription_Id, a);
  a.device_description = d;
  ARGS(PJRT_DeviceDescription_ProcessIndex, p);
  p.device_description = d;
  if (!OK(api->PJRT_DeviceDescription_Id(&a)) ||
      !OK(api->PJRT_DeviceDescription_ProcessIndex(&p)))
    return -1;
  *process = p.process_index;
  return a.id;
}

static int64_t topo_attr(PJRT_TopologyDescription *t, const char *name) {
  ARGS(PJRT_TopologyDescription_Attributes, a);
  a.topology = t;
  if (!OK(api->PJRT_TopologyDescription_Attributes(&a))) return -1;
  for (size_t i = 0; i < a.num_attributes; i++)
    if (a.attributes[i].name_size == strlen(name) &&
        !memcmp(a.attributes[i].name, name, a.attributes[i].name_size) &&
        a.attributes[i].type == PJRT_NamedValue_kInt64)
      return a.attributes[i].int64_value;
  return -2;
}

static void test_topology(void) {
  /* Names and options. */
  PJRT_TopologyDescription *t = NULL, *t2 = NULL;
  PJRT_NamedValue opts[3] = {int_opt("cpu_device_count", 3), int_opt("num_nodes", 2),
                             int_opt("cpu_device_count", 1)};
  if (!OK(topo_create("cpu", opts, 2, &t))) return;
  ERR(topo_create("tpu_v5", NULL, 0, &t2), INVALID_ARGUMENT, "unknown topology name \"tpu_v5\"");
  ERR(topo_create("cpu", opts, 3, &t2), INVALID_ARGUMENT, "given twice");
  PJRT_NamedValue bad = int_opt("cpu_device_count", 0);
  ERR(topo_create("cpu", &bad, 1, &t2), INVALID_ARGUMENT, "outside [1, 4096]");
  bad = int_opt("gpu_count", 2);
  ERR(topo_create("", &bad, 1, &t2), INVALID_ARGUMENT, "unknown topology option 'gpu_count'");
  bad = int_opt("num_nodes", 1);
  bad.struct_size = 8;
  ERR(topo_create("", &bad, 1, &t2), INVALID_ARGUMENT, "struct_size 8");
  ERR(topo_create("", NULL, 1, &t2), INVALID_ARGUMENT, "create_options is NULL");
  PJRT_NamedValue sopt = int_opt("cpu_device_count", 0);
  sopt.type = PJRT_NamedValue_kString;
  sopt.string_value = "5";
  sopt.value_size = 1;
  if (OK(topo_create("cjrt", &sopt, 1, &t2))) {
    size_t n;
    topo_devices(t2, &n);
    CHECK_EQ_INT(n, 5);
    topo_free(t2);
  }
  if (OK(topo_create(NULL, NULL, 0, &t2))) { /* default: one device per core, one process */
    size_t n;
    topo_devices(t2, &n);
    CHECK(n >= 1);
    CHECK_EQ_INT(topo_attr(t2, "num_processes"), 1);
    topo_free(t2);
  }

  /* Queries: platform, devices (process-major ids), attributes, memory kinds. */
  ARGS(PJRT_TopologyDescription_PlatformName, pn);
  pn.topology = t;
  if (OK(api->PJRT_TopologyDescription_PlatformName(&pn)))
    CHECK(pn.platform_name_size == 4 && !memcmp(pn.platform_name, "cjrt", 4));
  ARGS(PJRT_TopologyDescription_PlatformVersion, pv);
  pv.topology = t;
  if (OK(api->PJRT_TopologyDescription_PlatformVersion(&pv)))
    CHECK(pv.platform_version_size > 0 && !memcmp(pv.platform_version, "cjrt", 4));
  size_t n;
  PJRT_DeviceDescription *const *ds = topo_devices(t, &n);
  CHECK_EQ_INT(n, 6);
  for (size_t i = 0; ds && i < n; i++) {
    int proc = -1;
    CHECK_EQ_INT(desc_id(ds[i], &proc), (int)i);
    CHECK_EQ_INT(proc, (int)i / 3);
    ARGS(PJRT_DeviceDescription_Kind, k);
    k.device_description = ds[i];
    if (OK(api->PJRT_DeviceDescription_Kind(&k)))
      CHECK(k.device_kind_size == 3 && !memcmp(k.device_kind, "cpu", 3));
    ARGS(PJRT_DeviceDescription_DebugString, dbg);
    dbg.device_description = ds[i];
    ARGS(PJRT_DeviceDescription_ToString, ts);
    ts.device_description = ds[i];
    char want[64];
    snprintf(want, sizeof want, "CjrtDevice(id=%zu)", i);
    if (OK(api->PJRT_DeviceDescription_DebugString(&dbg)) &&
        OK(api->PJRT_DeviceDescription_ToString(&ts))) {
      CHECK(dbg.debug_string_size > 0 && memchr(dbg.debug_string, ':', dbg.debug_string_size));
      CHECK(ts.to_string_size == strlen(want) && !memcmp(ts.to_string, want, strlen(want)));
    }
    ARGS(PJRT_DeviceDescription_Attributes, at);
    at.device_description = ds[i];
    OK(api->PJRT_DeviceDescription_Attributes(&at));
  }
  CHECK_EQ_INT(topo_attr(t, "num_processes"), 2);
  CHECK_EQ_INT(topo_attr(t, "num_devices"), 6);
  ARGS(PJRT_TopologyDescription_GetMemorySpaceKindIds, mk);
  mk.topology = t;
  if (OK(api->PJRT_TopologyDescription_GetMemorySpaceKindIds(&mk)))
    CHECK(mk.num_memory_space_kind_ids == 3 && mk.memory_space_kind_ids[0] == 0 &&
          mk.memory_space_kind_ids[2] == 2);

  /* The canonical shape: an xla.ShapeProto of F32[2,3] with layout {1,0}. */
  int64_t dims[2] = {2, 3};
  ARGS(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, cs);
  cs.topology = t;
  cs.memory_space_kind_id = 0;
  cs.dims = dims;
  cs.num_dims = 2;
  cs.element_type = PJRT_Buffer_Type_F32;
  if (OK(api->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&cs))) {
    static const unsigned char want[] = {0x10, 11,   0x1a, 2, 2, 3, 0x2a, 4,
                                         0x0a, 2,    1,    0, 0x32, 2, 0, 0};
    CHECK(cs.serialized_shape_size == sizeof want &&
          !memcmp(cs.serialized_shape, want, sizeof want));
    cs.serialized_shape_deleter(cs.serialized_shape);
  }
  cs.memory_space_kind_id = 7;
  ERR(api->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&cs), INVALID_ARGUMENT,
      "memory space kind id 7");
  cs.memory_space_kind_id = 1;
  cs.element_type = (PJRT_Buffer_Type)999;
  ERR(api->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&cs), INVALID_ARGUMENT,
      NULL);

  /* Serialize / Deserialize: the same devices, fingerprint and bytes back. */
  size_t len;
  unsigned char *bytes = topo_serialize(t, &len);
  CHECK(bytes != NULL && len > 16);
  if (bytes && OK(topo_deserialize(bytes, len, &t2))) {
    CHECK(topo_fingerprint(t2) == topo_fingerprint(t));
    size_t n2;
    PJRT_DeviceDescription *const *ds2 = topo_devices(t2, &n2);
    CHECK_EQ_INT(n2, 6);
    int proc = -1;
    if (ds2 && n2 == 6) CHECK(desc_id(ds2[4], &proc) == 4 && proc == 1);
    size_t len2;
    unsigned char *again = topo_serialize(t2, &len2);
    CHECK(again && len2 == len && !memcmp(again, bytes, len));
    free(again);
    topo_free(t2);
  }
  /* ... and bytes that are not a topology are refused cleanly: every flip, truncation, junk. */
  int accepted = 0;
  for (size_t i = 0; bytes && i < len; i++) {
    bytes[i] ^= 0x21;
    PJRT_Error *e = topo_deserialize(bytes, len, &t2);
    if (!e) {
      accepted++;
      topo_free(t2);
    } else {
      if (err_code(e) != PJRT_Error_Code_INVALID_ARGUMENT) accepted++;
      err_free(e);
    }
    bytes[i] ^= 0x21;
  }
  CHECK_EQ_INT(accepted, 0);
  for (size_t k = 0; bytes && k < len; k++)
    ERR(topo_deserialize(bytes, k, &t2), INVALID_ARGUMENT, "PJRT_TopologyDescription_Deserialize");
  ERR(topo_deserialize("definitely not a topology", 25, &t2), INVALID_ARGUMENT, "bad magic");
  ERR(topo_deserialize(NULL, 12, &t2), INVALID_ARGUMENT, "NULL");
  ERR(topo_deserialize(NULL, 0, &t2), INVALID_ARGUMENT, NULL);
  free(bytes);

  /* Fingerprints differ for different topologies. */
  PJRT_NamedValue o4 = int_opt("cpu_device_count", 4);
  if (OK(topo_create("cpu", &o4, 1, &t2))) {
    CHECK(topo_fingerprint(t2) != topo_fingerprint(t));
    topo_free(t2);
  }

  /* Misuse: NULL and wrong handles. */
  ARGS(PJRT_TopologyDescription_Fingerprint, fp);
  ERR(api->PJRT_TopologyDescription_Fingerprint(&fp), INVALID_ARGUMENT, "topology is NULL");
  PJRT_Client *c = client_create_n(2);
  fp.topology = (PJRT_TopologyDescription *)c;
  ERR(api->PJRT_TopologyDescription_Fingerprint(&fp), INVALID_ARGUMENT, "not a live cjrt object");
  ARGS(PJRT_TopologyDescription_Destroy, dd);
  dd.topology = (PJRT_TopologyDescription *)c;
  ERR(api->PJRT_TopologyDescription_Destroy(&dd), INVALID_ARGUMENT, "not a live cjrt object");
  topo_free(t);

  /* The client's topology: its own devices' descriptions, owned by the client. */
  ARGS(PJRT_Client_TopologyDescription, ct);
  ct.client = c;
  if (OK(api->PJRT_Client_TopologyDescription(&ct))) {
    ds = topo_devices(ct.topology, &n);
    CHECK_EQ_INT(n, 2);
    ARGS(PJRT_Device_GetDescription, gd);
    gd.device = device_at(c, 1);
    if (ds && n == 2 && OK(api->PJRT_Device_GetDescription(&gd)))
      CHECK(ds[1] == gd.device_description);
    CHECK_EQ_INT(topo_attr(ct.topology, "num_devices"), 2);
    ARGS(PJRT_Client_TopologyDescription, ct2);
    ct2.client = c;
    if (OK(api->PJRT_Client_TopologyDescription(&ct2))) CHECK(ct2.topology == ct.topology);
    /* It serializes like a described one of the same shape. */
    PJRT_NamedValue o2 = int_opt("cpu_device_count", 2);
    if (OK(topo_create("", &o2, 1, &t2))) {
      CHECK(topo_fingerprint(t2) == topo_fingerprint(ct.topology));
      topo_free(t2);
    }
    dd.topology = ct.topology;
    ERR(api->PJRT_TopologyDescription_Destroy(&dd), INVALID_ARGUMENT, "belongs to its client");
  }
  ct.client = NULL;
  ERR(api->PJRT_Client_TopologyDescription(&ct), INVALID_ARGUMENT, "client is NULL");
  client_free(c);
}

/* The memory-descriptions extension: the same three kinds for a described topology's devices
 * and a client's, with the kind ids of the client's memories. */
static void test_memory_descriptions(void) {
  const PJRT_MemoryDescriptions_Extension *ext = NULL;
  for (const PJRT_Extension_Base *b = api->extension_start; b; b = b->next)
    if (b->type == PJRT_Extension_Type_MemoryDescriptions)
      ext = (const PJRT_MemoryDescriptions_Extension *)b;
  CHECK(ext != NULL);
  if (!ext) return;
  CHECK(ext->base.struct_size >= PJRT_MemoryDescriptions_Extension_STRUCT_SIZE);
  PJRT_TopologyDescription *t;
  PJRT_NamedValue o = int_opt("cpu_device_count", 2);
  if (!OK(topo_create("cpu", &o, 1, &t))) return;
  PJRT_Client *c = client_create_n(1);
  size_t n;
  PJRT_DeviceDescription *const *ds = topo_devices(t, &n);
  ARGS(PJRT_Device_GetDescription, gd);
  gd.device = device_at(c, 0);
  OK(api->PJRT_Device_GetDescription(&gd));
  PJRT_DeviceDescription *which[2] = {ds ? ds[1] : NULL, gd.device_description};
  static const char *const kinds[3] = {"device", "pinned_host", "unpinned_host"};
  for (int w = 0; w < 2; w++) {
    ARGS(PJRT_DeviceDescription_MemoryDescriptions, md);
    md.device_description = which[w];
    if (!OK(ext->PJRT_DeviceDescription_MemoryDescriptions(&md))) continue;
    CHECK_EQ_INT(md.num_memory_descriptions, 3);
    CHECK_EQ_INT(md.default_memory_index, 0);
    for (size_t i = 0; i < md.num_memory_descriptions && i < 3; i++) {
      ARGS(PJRT_MemoryDescription_Kind, k);
      k.memory_description = md.memory_descriptions[i];
      if (OK(ext->PJRT_MemoryDescription_Kind(&k))) {
        CHECK(k.kind_size == strlen(kinds[i]) && !memcmp(k.kind, kinds[i], k.kind_size));
        CHECK_EQ_INT(k.kind_id, (int)i);
      }
    }
  }
  /* The client's memory of kind "pinned_host" has the kind id the description reports. */
  ARGS(PJRT_Memory_Kind_Id, ki);
  ki.memory = device_memory(device_at(c, 0), "pinned_host");
  if (OK(api->PJRT_Memory_Kind_Id(&ki))) CHECK_EQ_INT(ki.kind_id, 1);
  ARGS(PJRT_DeviceDescription_MemoryDescriptions, bad);
  ERR(ext->PJRT_DeviceDescription_MemoryDescriptions(&bad), INVALID_ARGUMENT,
      "device_description is NULL");
  bad.device_description = (PJRT_DeviceDescription *)c;
  ERR(ext->PJRT_DeviceDescription_MemoryDescriptions(&bad), INVALID_ARGUMENT,
      "not a live cjrt object");
  bad.struct_size = 8;
  ERR(ext->PJRT_DeviceDescription_MemoryDescriptions(&bad), INVALID_ARGUMENT,
      "struct_size 8 is too small");
  ARGS(PJRT_MemoryDescription_Kind, bk);
  bk.memory_description = (const PJRT_MemoryDescription *)c;
  ERR(ext->PJRT_MemoryDescription_Kind(&bk), INVALID_ARGUMENT, "not a live cjrt object");
  ERR(ext->PJRT_MemoryDescription_Kind(NULL), INVALID_ARGUMENT, "args is NULL");
  client_free(c);
  topo_free(t);
}

static void test_process_info_and_dma(void) {
  PJRT_Client *c = client_create_n(1);
  if (!c) return;
  PJRT_ProcessInfo p[2];
  memset(p, 0, sizeof p);
  for (int i = 0; i < 2; i++) {
    p[i].struct_size = PJRT_ProcessInfo_STRUCT_SIZE;
    p[i].task_id = i;
    p[i].incarnation_id = 100 + (uint64_t)i;
    p[i].state = PJRT_ProcessState_kConnected;
  }
  p[1].state = PJRT_ProcessState_kError;
  p[1].error_code = PJRT_Error_Code_UNAVAILABLE;
  p[1].error_message = "task 1 went away";
  p[1].error_message_size = strlen(p[1].error_message);
  ARGS(PJRT_Client_UpdateGlobalProcessInfo, u);
  u.client = c;
  u.process_infos = p;
  u.num_process_infos = 2;
  OK(api->PJRT_Client_UpdateGlobalProcessInfo(&u));
  u.num_process_infos = 0;
  OK(api->PJRT_Client_UpdateGlobalProcessInfo(&u)); /* an empty table is fine */
  u.num_process_infos = 2;
  p[1].task_id = 0;
  ERR(api->PJRT_Client_UpdateGlobalProcessInfo(&u), INVALID_ARGUMENT, "both describe task 0");
  p[1].task_id = 1;
  p[1].state = (PJRT_ProcessState)9;
  ERR(api->PJRT_Client_UpdateGlobalProcessInfo(&u), INVALID_ARGUMENT, "state 9");
  p[1].state = PJRT_ProcessState_kError;
  p[0].struct_size = 8;
  ERR(api->PJRT_Client_UpdateGlobalProcessInfo(&u), INVALID_ARGUMENT,
      "process_infos[0].struct_size 8 is too small");
  p[0].struct_size = PJRT_ProcessInfo_STRUCT_SIZE;
  p[1].error_message = NULL;
  ERR(api->PJRT_Client_UpdateGlobalProcessInfo(&u), INVALID_ARGUMENT, "error_message is NULL");
  u.process_infos = NULL;
  ERR(api->PJRT_Client_UpdateGlobalProcessInfo(&u), INVALID_ARGUMENT, "process_infos is NULL");
  u.client = NULL;
  ERR(api->PJRT_Client_UpdateGlobalProcessInfo(&u), INVALID_ARGUMENT, "client is NULL");

  static char region[8192];
  ARGS(PJRT_Client_DmaMap, dm);
  dm.client = c;
  dm.data = region;
  dm.size = sizeof region;
  OK(api->PJRT_Client_DmaMap(&dm));
  ARGS(PJRT_Client_DmaUnmap, du);
  du.client = c;
  du.data = region;
  OK(api->PJRT_Client_DmaUnmap(&du));
  dm.size = 0;
  ERR(api->PJRT_Client_DmaMap(&dm), INVALID_ARGUMENT, "size is 0");
  dm.size = 16;
  dm.data = NULL;
  ERR(api->PJRT_Client_DmaMap(&dm), INVALID_ARGUMENT, "data is NULL");
  dm.data = (void *)(uintptr_t)-8;
  ERR(api->PJRT_Client_DmaMap(&dm), INVALID_ARGUMENT, "wraps around");
  du.data = NULL;
  ERR(api->PJRT_Client_DmaUnmap(&du), INVALID_ARGUMENT, "data is NULL");
  du.data = region;
  du.client = (PJRT_Client *)region;
  ERR(api->PJRT_Client_DmaUnmap(&du), INVALID_ARGUMENT, "not a live cjrt object");
  client_free(c);
}

static PJRT_Error *alias_create(PJRT_Client *c, PJRT_Memory *m, const int64_t *dims, size_t rank,
                                PJRT_Buffer **out, PJRT_FulfillAliasBufferCallback **cb) {
  ARGS(PJRT_Client_CreateAliasBuffer, a);
  a.client = c;
  a.memory = m;
  a.shape_dims = dims;
  a.shape_num_dims = rank;
  a.shape_element_type = PJRT_Buffer_Type_F32;
  PJRT_Error *e = api->PJRT_Client_CreateAliasBuffer(&a);
  *out = e ? NULL : a.alias_buffer;
  *cb = e ? NULL : a.fulfill_alias_buffer_cb;
  return e;
}

static PJRT_Error *alias_fulfill(PJRT_Client *c, PJRT_FulfillAliasBufferCallback *cb,
                                 PJRT_Buffer *b, PJRT_Error_Code code, const char *msg) {
  ARGS(PJRT_Client_FulfillAliasBuffer, f);
  f.client = c;
  f.buffer = b;
  f.status_code = code;
  f.error_message = msg;
  f.error_message_size = msg ? strlen(msg) : 0;
  f.fulfill_alias_buffer_cb = cb;
  return api->PJRT_Client_FulfillAliasBuffer(&f);
}

static void test_alias_buffers(void) {
  PJRT_Client *c = client_create_n(2);
  if (!c) return;
  PJRT_Memory *m = device_memory(device_at(c, 0), "device");
  int64_t dims[1] = {4};
  float v[4] = {1, 2, 3, 4}, got[4];
  PJRT_Buffer *src = buffer_from_host(c, device_at(c, 0), PJRT_Buffer_Type_F32, dims, 1, v);

  /* Pending until fulfilled: a read queued meanwhile completes with the data. */
  PJRT_Buffer *al;
  PJRT_FulfillAliasBufferCallback *cb;
  if (OK(alias_create(c, m, dims, 1, &al, &cb))) {
    ARGS(PJRT_Buffer_ToHostBuffer, th);
    th.src = al;
    th.dst = got;
    th.dst_size = sizeof got;
    memset(got, 0, sizeof got);
    if (OK(api->PJRT_Buffer_ToHostBuffer(&th))) {
      CHECK_EQ_INT(event_ready(th.event), 0);
      OK(alias_fulfill(c, cb, src, PJRT_Error_Code_OK, NULL));
      OK(event_wait_free(th.event));
      CHECK(memcmp(got, v, sizeof v) == 0);
    }
    /* (The promise is used up: passing it again is a use after free, like any destroyed
     * handle.) */
    memset(got, 0, sizeof got);
    OK(buffer_to_host(al, got, sizeof got, NULL));
    CHECK(memcmp(got, v, sizeof v) == 0);
    buffer_free(al);
  }
  /* Fulfilled before anything reads it: shares the source's storage. */
  if (OK(alias_create(c, m, dims, 1, &al, &cb))) {
    OK(alias_fulfill(c, cb, src, PJRT_Error_Code_OK, NULL));
    OK(buffer_ready_error(al));
    memset(got, 0, sizeof got);
    OK(buffer_to_host(al, got, sizeof got, NULL));
    CHECK(memcmp(got, v, sizeof v) == 0);
    buffer_free(al);
  }
  /* Fulfilled with an error: the alias is an error buffer. A refused fulfillment (wrong shape,
   * wrong client, NULL buffer) leaves the promise usable. */
  int64_t dims5[1] = {5};
  float w[5] = {0};
  PJRT_Buffer *src5 = buffer_from_host(c, device_at(c, 0), PJRT_Buffer_Type_F32, dims5, 1, w);
  PJRT_Client *c2 = client_create_n(1);
  if (OK(alias_create(c, m, dims, 1, &al, &cb))) {
    ERR(alias_fulfill(c, cb, src5, PJRT_Error_Code_OK, NULL), INVALID_ARGUMENT,
        "differs from the alias buffer's");
    ERR(alias_fulfill(c, cb, NULL, PJRT_Error_Code_OK, NULL), INVALID_ARGUMENT,
        "buffer is NULL");
    ERR(alias_fulfill(c2, cb, src, PJRT_Error_Code_OK, NULL), INVALID_ARGUMENT, "another client");
    OK(alias_fulfill(c, cb, NULL, PJRT_Error_Code_UNAVAILABLE, "the producer went away"));
    ERR(buffer_ready_error(al), UNAVAILABLE, "the producer went away");
    ERR(buffer_to_host(al, got, sizeof got, NULL), UNAVAILABLE, "the producer went away");
    buffer_free(al);
  }
  /* A destroyed alias may still be fulfilled (nothing reads it any more). */
  if (OK(alias_create(c, m, dims, 1, &al, &cb))) {
    buffer_free(al);
    OK(alias_fulfill(c, cb, src, PJRT_Error_Code_OK, NULL));
  }
  /* Creation misuse. */
  ERR(alias_create(c, NULL, dims, 1, &al, &cb), INVALID_ARGUMENT, "memory is NULL");
  ERR(alias_create(c2, m, dims, 1, &al, &cb), INVALID_ARGUMENT, "another client");
  ERR(alias_create(c, m, NULL, 1, &al, &cb), INVALID_ARGUMENT, "dims is NULL");
  ERR(alias_fulfill(c, NULL, src, PJRT_Error_Code_OK, NULL), INVALID_ARGUMENT,
      "fulfill_alias_buffer_cb is NULL");
  ERR(alias_fulfill(c, (PJRT_FulfillAliasBufferCallback *)src, src, PJRT_Error_Code_OK, NULL),
      INVALID_ARGUMENT, "not a live cjrt object");
  client_free(c2);
  buffer_free(src5);
  buffer_free(src);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */

static void run_all(void) {
  test_table();
  test_errors_and_plugin();
  test_client_create();
  test_client_queries();
  test_devices_memories();
  test_events();
  test_every_type();
  test_strides_and_layouts();
  test_semantics_and_memories();
  test_buffer_lifecycle();
  test_transfers();
  test_copy_of_pending_then_deleted();
  test_execute_context();
  test_larger_structs();
  test_threads();
  test_topology();
  test_memory_descriptions();
  test_process_info_and_dma();
  test_alias_buffers();
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <plugin.so>\n", argv[0]);
    return 2;
  }
  void *h = plugin_open(argv[1]);
  CHECK(h != NULL);
  if (!h) return check_report("pjrt_contract");
  run_all();
  /* dlclose, then load again: nothing of the first load may linger or break the second. */
  CHECK(dlclose(h) == 0);
  h = plugin_open(argv[1]);
  CHECK(h != NULL);
  if (h) {
    PJRT_Client *c = client_create_n(2);
    float v[3] = {1, 2, 3}, got[3];
    int64_t dims[1] = {3};
    PJRT_Buffer *b = buffer_from_host(c, device_at(c, 1), PJRT_Buffer_Type_F32, dims, 1, v);
    OK(buffer_to_host(b, got, sizeof got, NULL));
    CHECK(memcmp(got, v, sizeof got) == 0);
    buffer_free(b);
    client_free(c);
    test_events();
    CHECK(dlclose(h) == 0);
  }
  return check_report("pjrt_contract");
}
