/* cjrt: PJRT_TopologyDescription_*, PJRT_Client_TopologyDescription and
 * PJRT_Client_UpdateGlobalProcessInfo. A PJRT_TopologyDescription is a cj_topology
 * (runtime/topology.h); its device descriptions are cj_device_desc handles, so the
 * PJRT_DeviceDescription_* calls work on them as on a client's.
 *
 * Topologies made by Create or Deserialize belong to the caller (Destroy frees them); a client's
 * topology belongs to the client and Destroy refuses it.
 *
 * Create accepts the names "", "cjrt" and "cpu" and the options
 *   cpu_device_count  devices per process (default: the number of online cores, as a client)
 *   num_nodes         processes (default 1)
 * (the client's option names, with the same types: int64, or a string holding an integer). */
#include <stdlib.h>
#include <string.h>

#include "pjrt/internal.h"

#define CJP_TOPO(NAME, var, expr) \
  CJP_HANDLE(NAME, cj_topology, cj_topology_check, var, expr, "topology")
#define CJP_TOPO_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_TOPO(NAME, t, args->topology), __VA_ARGS__)

/* ---- API data: the topology's attributes ---- */

enum { kNumTopoAttrs = 2 };

void cjp_topology_attach(cj_topology *t) {
  PJRT_NamedValue *a = calloc(kNumTopoAttrs, sizeof *a);
  if (!a) return; /* out of memory: the topology reports no attributes */
  static const char *const names[kNumTopoAttrs] = {"num_processes", "num_devices"};
  int64_t values[kNumTopoAttrs] = {t->process_count, t->ndevices};
  for (int i = 0; i < kNumTopoAttrs; i++) {
    a[i].struct_size = PJRT_NamedValue_STRUCT_SIZE;
    a[i].name = names[i];
    a[i].name_size = strlen(names[i]);
    a[i].type = PJRT_NamedValue_kInt64;
    a[i].int64_value = values[i];
    a[i].value_size = 1;
  }
  cj_topology_set_front(t, a, free);
}

/* ---- Create options ---- */

static CJ_MUST_USE cj_status parse_options(const PJRT_NamedValue *opts, size_t n, int *devices,
                               int *processes) {
  static const char *const names[2] = {"cpu_device_count", "num_nodes"};
  int64_t val[2] = {0, 1};
  bool seen[2] = {false, false};
  if (n && !opts) return cj_invalid("create_options is NULL but num_options is %zu", n);
  for (size_t i = 0; i < n; i++) {
    const PJRT_NamedValue *v = &opts[i];
    int id;
    CJ_RETURN_IF_ERROR(cjp_option_find(v, i, names, 2, seen, "topology",
                                       "cpu_device_count, num_nodes", &id));
    CJ_RETURN_IF_ERROR(cjp_option_int(v, names[id], 1, CJ_MAX_DEVICES, &val[id]));
  }
  *devices = (int)val[0];
  *processes = (int)val[1];
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */

PJRT_Error *cjp_PJRT_TopologyDescription_Create(PJRT_TopologyDescription_Create_Args *args) {
  CJP_ENTER(PJRT_TopologyDescription_Create, topology);
  int devices = 0, processes = 1;
  cj_status st = parse_options(args->create_options, args->num_options, &devices, &processes);
  cj_topology *t = NULL;
  if (!st)
    st = cj_topology_create(args->topology_name, args->topology_name_size, devices, processes,
                            &t);
  if (st) return cjp_error_in(fn, st);
  cjp_topology_attach(t);
  args->topology = (PJRT_TopologyDescription *)t;
  return NULL;
}

PJRT_Error *cjp_PJRT_TopologyDescription_Destroy(PJRT_TopologyDescription_Destroy_Args *args) {
  CJP_CHECK_ARGS(PJRT_TopologyDescription_Destroy, args, topology);
  if (!args->topology) return NULL;
  CJP_TOPO(PJRT_TopologyDescription_Destroy, t, args->topology);
  if (t->client)
    return cjp_errorf(CJ_INVALID_ARGUMENT,
                      "PJRT_TopologyDescription_Destroy: this topology belongs to its client "
                      "(PJRT_Client_TopologyDescription) and goes with it");
  cj_topology_free(t);
  return NULL;
}

CJP_TOPO_SLOT(PJRT_TopologyDescription_PlatformName, platform_name_size,
    (void)t;
    args->platform_name = CJ_PLATFORM_NAME;
    args->platform_name_size = sizeof CJ_PLATFORM_NAME - 1;)

CJP_TOPO_SLOT(PJRT_TopologyDescription_PlatformVersion, platform_version_size,
    CJP_SET_STR(args, platform_version, t->platform_version);)

CJP_TOPO_SLOT(PJRT_TopologyDescription_GetDeviceDescriptions, num_descriptions,
    args->descriptions = (PJRT_DeviceDescription *const *)t->descs;
    args->num_descriptions = (size_t)t->ndevices;)

static void serialized_free(PJRT_SerializedTopology *s) { free(s); }

PJRT_Error *cjp_PJRT_TopologyDescription_Serialize(
    PJRT_TopologyDescription_Serialize_Args *args) {
  CJP_CHECK_ARGS(PJRT_TopologyDescription_Serialize, args, serialized_topology_deleter);
  CJP_TOPO(PJRT_TopologyDescription_Serialize, t, args->topology);
  CJP_RETURN_SERIALIZED(PJRT_TopologyDescription_Serialize, topology, PJRT_SerializedTopology,
                        cj_topology_serialize, t, serialized_free);
}

PJRT_Error *cjp_PJRT_TopologyDescription_Deserialize(
    PJRT_TopologyDescription_Deserialize_Args *args) {
  CJP_ENTER(PJRT_TopologyDescription_Deserialize, topology);
  cj_topology *t;
  cj_status st =
      cj_topology_deserialize(args->serialized_topology, args->serialized_topology_size, &t);
  if (st) return cjp_error_in(fn, st);
  cjp_topology_attach(t);
  args->topology = (PJRT_TopologyDescription *)t;
  return NULL;
}

CJP_TOPO_SLOT(PJRT_TopologyDescription_Attributes, num_attributes,
    args->attributes = t->front;
    args->num_attributes = t->front ? kNumTopoAttrs : 0;)

CJP_TOPO_SLOT(PJRT_TopologyDescription_Fingerprint, fingerprint,
    args->fingerprint = cj_topology_fingerprint(t);)

PJRT_Error *cjp_PJRT_TopologyDescription_GetMemorySpaceKindIds(
    PJRT_TopologyDescription_GetMemorySpaceKindIds_Args *args) {
  CJP_CHECK_ARGS(PJRT_TopologyDescription_GetMemorySpaceKindIds, args,
                 num_memory_space_kind_ids);
  CJP_TOPO(PJRT_TopologyDescription_GetMemorySpaceKindIds, t, args->topology);
  (void)t;
  args->memory_space_kind_ids = cj_topology_memory_kind_ids(&args->num_memory_space_kind_ids);
  return NULL;
}

static void shape_free(const char *p) { free((void *)p); }

PJRT_Error *cjp_PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(
    PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args *args) {
  CJP_ENTER(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, serialized_shape_deleter);
  CJP_TOPO(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, t, args->topology);
  cj_dtype dt;
  cj_status st =
      cjp_device_array(args->element_type, args->dims, args->num_dims, args->layout, &dt);
  void *bytes = NULL;
  size_t len = 0;
  if (!st)
    st = cj_topology_canonical_shape(t, args->memory_space_kind_id, dt, args->dims,
                                     args->num_dims, &bytes, &len);
  if (st) return cjp_error_in(fn, st);
  args->serialized_shape = bytes;
  args->serialized_shape_size = len;
  args->serialized_shape_deleter = shape_free;
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* The client's topology and process table                                                     */

CJP_CLIENT_SLOT(PJRT_Client_TopologyDescription, topology,
    args->topology = (PJRT_TopologyDescription *)cjp_client_topology(c);)

/* The most process infos one update may carry (a sanity bound far above any real run). */
enum { kMaxProcessInfos = 1 << 20 };

PJRT_Error *cjp_PJRT_Client_UpdateGlobalProcessInfo(
    PJRT_Client_UpdateGlobalProcessInfo_Args *args) {
  CJP_ENTER(PJRT_Client_UpdateGlobalProcessInfo, num_process_infos);
  CJP_CLIENT(PJRT_Client_UpdateGlobalProcessInfo, c, args->client, "client");
  size_t n = args->num_process_infos;
  if (n && !args->process_infos)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: process_infos is NULL but num_process_infos is %zu",
                      fn, n);
  if (n > kMaxProcessInfos)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: %zu process infos is more than cjrt accepts (%d)",
                      fn, n, kMaxProcessInfos);
  cj_process_info *infos = calloc(n ? n : 1, sizeof *infos);
  if (!infos) return cjp_error_in(fn, cj_oom());
  cj_status st = NULL;
  for (size_t i = 0; i < n && !st; i++) {
    const PJRT_ProcessInfo *p = &args->process_infos[i];
    if (p->struct_size < (size_t)PJRT_STRUCT_SIZE(PJRT_ProcessInfo, error_message_size)) {
      st = cj_invalid("process_infos[%zu].struct_size %zu is too small (PJRT_ProcessInfo is %zu "
                      "bytes)",
                      i, p->struct_size, (size_t)PJRT_ProcessInfo_STRUCT_SIZE);
      break;
    }
    if (!p->error_message && p->error_message_size) {
      st = cj_invalid("process_infos[%zu].error_message is NULL but its size is %zu", i,
                      p->error_message_size);
      break;
    }
    infos[i].task_id = p->task_id;
    infos[i].incarnation_id = p->incarnation_id;
    infos[i].state = (int)p->state;
    infos[i].error_code = p->error_code;
    infos[i].error_message = (char *)p->error_message;
    infos[i].error_message_size = p->error_message ? p->error_message_size : 0;
  }
  if (!st) st = cj_topology_set_processes(cjp_client_topology(c), infos, n);
  free(infos);
  if (st) return cjp_error_in(fn, st);
  return NULL;
}
