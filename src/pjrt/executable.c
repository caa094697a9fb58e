/* cjrt: PJRT_Client_Compile, PJRT_Compile, PJRT_Client_Load, PJRT_Executable_* and
 * PJRT_LoadedExecutable_* (Execute included).
 *
 * Handles: a PJRT_Executable is a cj_executable (refcounted: GetExecutable hands out a new
 * reference each call, Executable_Destroy drops one); a PJRT_LoadedExecutable is a cj_loaded.
 * What the getters return (output types and dimensions, memory kinds, cost values) is derived
 * once when the executable is made and lives as long as it (its "front").
 *
 * Several of these calls abort the framework's process on any error (Name, NumReplicas,
 * NumPartitions, SizeOfGeneratedCodeInBytes, GetExecutable, AddressableDevices,
 * GetDeviceAssignment, Delete, IsDeleted, AddressableDeviceLogicalIds): for valid handles they
 * always succeed, deleted executables included. */
#include <stdlib.h>
#include <string.h>

#include "backends/registry.h"
#include "frontend/frontend.h"
#include "pjrt/internal.h"
#include "runtime/executable.h"

_Static_assert(sizeof(cj_logical_id) == sizeof(PJRT_LogicalDeviceIds) &&
                   offsetof(cj_logical_id, replica) == offsetof(PJRT_LogicalDeviceIds, replica) &&
                   offsetof(cj_logical_id, partition) ==
                       offsetof(PJRT_LogicalDeviceIds, partition),
               "cj_logical_id must match PJRT_LogicalDeviceIds");

#define CJP_EXEC(NAME, var, expr, field) \
  CJP_HANDLE(NAME, cj_executable, cj_executable_check, var, expr, field)
#define CJP_LOADED(NAME, var, expr, field) \
  CJP_HANDLE(NAME, cj_loaded, cj_loaded_check, var, expr, field)
#define CJP_EXEC_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_EXEC(NAME, e, args->executable, "executable"), __VA_ARGS__)
#define CJP_LOADED_SLOT(NAME, last, ...) \
  CJP_SLOT_DEF(NAME, last, CJP_LOADED(NAME, l, args->executable, "executable"), __VA_ARGS__)

static const char kDeviceKind[] = "device";
static const char kMlir[] = "mlir";

/* ------------------------------------------------------------------------------------------ */
/* What the getters hand out, made once per executable                                         */

typedef struct exec_front {
  PJRT_NamedValue cost[3];
  PJRT_Buffer_Type *out_types; /* num_results */
  int64_t *out_dims;           /* all result dims, concatenated */
  size_t *out_ranks;           /* num_results */
  const char **out_kinds;      /* num_results */
  size_t *out_kind_sizes;
  const char **param_kinds;    /* num_args */
  size_t *param_kind_sizes;
} exec_front; /* one allocation: the arrays follow the struct */

/* The next `bytes` of the block at *p. */
static void *carve(char **p, size_t bytes) {
  void *r = *p;
  *p += bytes;
  return r;
}

static void named_float(PJRT_NamedValue *v, const char *name, double x) {
  memset(v, 0, sizeof *v);
  v->struct_size = PJRT_NamedValue_STRUCT_SIZE;
  v->name = name;
  v->name_size = strlen(name);
  v->type = PJRT_NamedValue_kFloat;
  v->float_value = (float)x;
  v->value_size = 1;
}

/* Attaches the front to a new executable; on failure the executable is released. */
static CJ_MUST_USE cj_status attach_front(cj_executable *e) {
  const cj_program_info *in = e->info;
  size_t nres = (size_t)in->num_results, narg = (size_t)in->num_args, ndims = 0;
  for (size_t j = 0; j < nres; j++) ndims += (size_t)in->results[j].rank;
  /* the arrays by decreasing alignment, so that each starts aligned */
  size_t bytes = sizeof(exec_front) + sizeof(int64_t) * ndims +
                 (2 * sizeof(size_t) + sizeof(char *)) * nres +
                 (sizeof(size_t) + sizeof(char *)) * narg + sizeof(PJRT_Buffer_Type) * nres;
  exec_front *f = calloc(1, bytes);
  if (!f) {
    cj_executable_release(e);
    return cj_oom();
  }
  char *p = (char *)(f + 1);
  f->out_dims = carve(&p, sizeof(int64_t) * ndims);
  f->out_ranks = carve(&p, sizeof(size_t) * nres);
  f->out_kinds = carve(&p, sizeof(char *) * nres);
  f->out_kind_sizes = carve(&p, sizeof(size_t) * nres);
  f->param_kinds = carve(&p, sizeof(char *) * narg);
  f->param_kind_sizes = carve(&p, sizeof(size_t) * narg);
  f->out_types = carve(&p, sizeof(PJRT_Buffer_Type) * nres);
  named_float(&f->cost[0], "flops", in->flops);
  named_float(&f->cost[1], "transcendentals", in->transcendentals);
  named_float(&f->cost[2], "bytes accessed", in->bytes_accessed);
  size_t k = 0;
  for (size_t j = 0; j < nres; j++) {
    const cj_shape *s = &in->results[j];
    f->out_types[j] = (PJRT_Buffer_Type)s->dtype;
    f->out_ranks[j] = (size_t)s->rank;
    for (int32_t r = 0; r < s->rank; r++) f->out_dims[k++] = s->dims[r];
    f->out_kinds[j] = kDeviceKind;
    f->out_kind_sizes[j] = sizeof kDeviceKind - 1;
  }
  for (size_t i = 0; i < narg; i++) {
    f->param_kinds[i] = kDeviceKind;
    f->param_kind_sizes[i] = sizeof kDeviceKind - 1;
  }
  cj_executable_set_front(e, f, free);
  return NULL;
}

static exec_front *front_of(const cj_executable *e) { return e->front; }

/* Checks a PJRT_Program for compiling: present, big enough, format "mlir", "hlo" or
 * "hlo_with_config" (*format). */
static CJ_MUST_USE cj_status check_program(const PJRT_Program *p, cj_program_format *format) {
  if (!p) return cj_invalid("program is NULL");
  if (p->struct_size < (size_t)PJRT_STRUCT_SIZE(PJRT_Program, format_size))
    return cj_invalid("program->struct_size %zu is too small (PJRT_Program is %zu bytes)",
                      p->struct_size, (size_t)PJRT_Program_STRUCT_SIZE);
  if (!p->format && p->format_size) return cj_invalid("program->format is NULL");
  size_t n = p->format ? p->format_size : 0;
  if (n == sizeof kMlir - 1 && memcmp(p->format, kMlir, n) == 0)
    *format = CJ_PROGRAM_MLIR;
  else if (n == 3 && memcmp(p->format, "hlo", 3) == 0)
    *format = CJ_PROGRAM_HLO;
  else if (n == 15 && memcmp(p->format, "hlo_with_config", 15) == 0)
    *format = CJ_PROGRAM_HLO_WITH_CONFIG;
  else
    return cj_invalid("Unknown program format '%.*s' (cjrt compiles \"mlir\": MLIR text or "
                      "bytecode, \"hlo\": an xla.HloModuleProto or HLO text, and "
                      "\"hlo_with_config\": an xla.HloModuleProtoWithConfig)",
                      (int)(n < 64 ? n : 64), n ? p->format : "");
  if (!p->code || !p->code_size) return cj_invalid("the program is empty");
  return NULL;
}

/* Compiles for `client` (may be NULL: any client may load it later). */
static CJ_MUST_USE cj_status compile(cj_client *client, const PJRT_Program *program, const char *options,
                         size_t options_len, cj_executable **out) {
  *out = NULL;
  cj_program_format format = CJ_PROGRAM_MLIR;
  CJ_RETURN_IF_ERROR(check_program(program, &format));
  if (!options && options_len)
    return cj_invalid("compile_options is NULL but compile_options_size is %zu", options_len);
  /* without a client (PJRT_Compile for a topology): the backend a client of this process would
   * get (backends/registry.h: $CJRT_BACKEND, else cpu), so that the executable loads there */
  cj_backend *b = client ? client->backend : NULL;
  if (!b) CJ_RETURN_IF_ERROR(cj_backend_select(NULL, &b));
  cj_executable *e;
  CJ_RETURN_IF_ERROR(
      cj_executable_compile_format(b, client, format, program->code, program->code_size, options,
                                   options_len, &e));
  CJ_RETURN_IF_ERROR(attach_front(e));
  *out = e;
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Compiling and loading                                                                       */

/* Puts e (whose reference this takes) on client c with its own device assignment. */
static CJ_MUST_USE cj_status load_and_release(cj_client *c, cj_executable *e, cj_loaded **out) {
  cj_status st = cj_loaded_create(c, e, NULL, 0, out);
  cj_executable_release(e);
  return st;
}

PJRT_Error *cjp_PJRT_Client_Compile(PJRT_Client_Compile_Args *args) {
  CJP_ENTER(PJRT_Client_Compile, executable);
  CJP_CLIENT(PJRT_Client_Compile, c, args->client, "client");
  cj_executable *e;
  cj_status st = compile(c, args->program, args->compile_options, args->compile_options_size, &e);
  cj_loaded *l = NULL;
  if (!st) st = load_and_release(c, e, &l);
  CJP_RETURN_OUT(st, executable, PJRT_LoadedExecutable, l);
}

PJRT_Error *cjp_PJRT_Compile(PJRT_Compile_Args *args) {
  CJP_ENTER(PJRT_Compile, executable);
  /* The program is compiled for the topology: its device count and device assignment must fit
   * it (a NULL topology accepts any; PJRT_Client_Load checks against the client then). With a
   * client, the assignment is also checked against the client's devices now. */
  const cj_topology *t = NULL;
  if (args->topology) {
    CJP_HANDLE(PJRT_Compile, const cj_topology, cj_topology_check, tt, args->topology,
               "topology");
    t = tt;
  }
  cj_client *c = NULL;
  if (args->client) {
    CJP_CLIENT(PJRT_Compile, cc, args->client, "client");
    c = cc;
  }
  cj_executable *e;
  cj_status st = compile(c, args->program, args->compile_options, args->compile_options_size, &e);
  if (!st && t) {
    st = cj_topology_check_assignment(t, e->num_replicas, e->num_partitions, e->assignment);
    if (st) cj_executable_release(e);
  }
  CJP_RETURN_OUT(st, executable, PJRT_Executable, e);
}

PJRT_Error *cjp_PJRT_Client_Load(PJRT_Client_Load_Args *args) {
  CJP_ENTER(PJRT_Client_Load, loaded_executable);
  CJP_CLIENT(PJRT_Client_Load, c, args->client, "client");
  CJP_EXEC(PJRT_Client_Load, e, args->executable, "executable");
  if (!args->compile_options && args->compile_options_size)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: compile_options is NULL but its size is %zu", fn,
                      args->compile_options_size);
  cj_loaded *l;
  cj_status st = cj_loaded_create(c, e, args->compile_options_size ? args->compile_options : NULL,
                                  args->compile_options_size, &l);
  CJP_RETURN_OUT(st, loaded_executable, PJRT_LoadedExecutable, l);
}

/* ------------------------------------------------------------------------------------------ */
/* Executables                                                                                 */

CJP_DESTROY_SLOT(PJRT_Executable_Destroy, executable,
                 cj_executable, cj_executable_check, cj_executable_release)

CJP_EXEC_SLOT(PJRT_Executable_Name, executable_name_size,
    const char *name = e->info->name ? e->info->name : "main";
    CJP_SET_STR(args, executable_name, name);)

CJP_EXEC_SLOT(PJRT_Executable_NumReplicas, num_replicas,
    args->num_replicas = (size_t)e->num_replicas;)

CJP_EXEC_SLOT(PJRT_Executable_NumPartitions, num_partitions,
    args->num_partitions = (size_t)e->num_partitions;)

CJP_EXEC_SLOT(PJRT_Executable_NumOutputs, num_outputs,
    args->num_outputs = (size_t)e->info->num_results;)

CJP_EXEC_SLOT(PJRT_Executable_SizeOfGeneratedCodeInBytes, size_in_bytes,
    args->size_in_bytes = e->info->code_bytes;)

CJP_EXEC_SLOT(PJRT_Executable_Fingerprint, executable_fingerprint_size,
    CJP_SET_STR(args, executable_fingerprint, e->fingerprint);)

CJP_EXEC_SLOT(PJRT_Executable_GetCostAnalysis, properties,
    exec_front *f = front_of(e);
    args->properties = f->cost;
    args->num_properties = sizeof f->cost / sizeof f->cost[0];)

PJRT_Error *cjp_PJRT_Executable_GetCompiledMemoryStats(
    PJRT_Executable_GetCompiledMemoryStats_Args *args) {
  CJP_CHECK_ARGS(PJRT_Executable_GetCompiledMemoryStats, args, temp_size_in_bytes);
  CJP_EXEC(PJRT_Executable_GetCompiledMemoryStats, e, args->executable, "executable");
  const cj_program_info *in = e->info;
  int64_t arg = 0, res = 0, alias = 0;
  for (int32_t i = 0; i < in->num_args; i++) arg += (int64_t)in->args[i].nbytes;
  for (int32_t j = 0; j < in->num_results; j++) {
    res += (int64_t)in->results[j].nbytes;
    if (in->result_donor && in->result_donor[j] >= 0) alias += (int64_t)in->results[j].nbytes;
  }
  /* Device memory is host memory on the CPU backend; the figures are reported as device memory,
   * as XLA's CPU client does, with constants counted in the total. */
  int64_t total = in->code_bytes + arg + res - alias + in->temp_bytes + in->constant_bytes;
  args->generated_code_size_in_bytes = in->code_bytes;
  args->argument_size_in_bytes = arg;
  args->output_size_in_bytes = res;
  args->alias_size_in_bytes = alias;
  args->temp_size_in_bytes = in->temp_bytes;
#define SET(field, value) \
  if (CJP_HAS(PJRT_Executable_GetCompiledMemoryStats, args, field)) args->field = (value)
  SET(host_generated_code_size_in_bytes, 0);
  SET(host_argument_size_in_bytes, 0);
  SET(host_output_size_in_bytes, 0);
  SET(host_alias_size_in_bytes, 0);
  SET(host_temp_size_in_bytes, 0);
  SET(peak_memory_in_bytes, arg + res - alias + in->temp_bytes + in->constant_bytes);
  SET(total_size_in_bytes, total);
  SET(total_allocation_bytes, arg + res - alias + in->temp_bytes + in->constant_bytes);
  SET(indefinite_allocations, in->constant_bytes);
  SET(peak_unpadded_heap_bytes, in->temp_bytes);
#undef SET
  return NULL;
}

CJP_EXEC_SLOT(PJRT_Executable_OutputElementTypes, num_output_types,
    args->output_types = front_of(e)->out_types;
    args->num_output_types = (size_t)e->info->num_results;)

CJP_EXEC_SLOT(PJRT_Executable_OutputDimensions, dim_sizes,
    args->num_outputs = (size_t)e->info->num_results;
    args->dims = front_of(e)->out_dims;
    args->dim_sizes = front_of(e)->out_ranks;)

CJP_EXEC_SLOT(PJRT_Executable_OutputMemoryKinds, memory_kind_sizes,
    args->num_outputs = (size_t)e->info->num_results;
    args->memory_kinds = front_of(e)->out_kinds;
    args->memory_kind_sizes = front_of(e)->out_kind_sizes;)

CJP_EXEC_SLOT(PJRT_Executable_ParameterMemoryKinds, memory_kind_sizes,
    args->num_parameters = (size_t)e->info->num_args;
    args->memory_kinds = front_of(e)->param_kinds;
    args->memory_kind_sizes = front_of(e)->param_kind_sizes;)

PJRT_Error *cjp_PJRT_Executable_OptimizedProgram(PJRT_Executable_OptimizedProgram_Args *args) {
  CJP_ENTER(PJRT_Executable_OptimizedProgram, program);
  CJP_EXEC(PJRT_Executable_OptimizedProgram, e, args->executable, "executable");
  PJRT_Program *p = args->program;
  if (!p) return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: program is NULL", fn);
  if (p->struct_size < (size_t)PJRT_STRUCT_SIZE(PJRT_Program, format_size))
    return cjp_errorf(CJ_INVALID_ARGUMENT,
                      "%s: program->struct_size %zu is too small (PJRT_Program is %zu bytes)", fn,
                      p->struct_size, (size_t)PJRT_Program_STRUCT_SIZE);
  const char *text = e->info->optimized_text;
  size_t len = text ? e->info->optimized_len : 0;
  p->format = kMlir;
  p->format_size = sizeof kMlir - 1;
  if (!p->code) {
    p->code_size = len;
    return NULL;
  }
  if (p->code_size < len)
    return cjp_errorf(CJ_INVALID_ARGUMENT,
                      "%s: program->code_size is %zu bytes; the program needs %zu (call first "
                      "with code = NULL to learn the size)",
                      fn, p->code_size, len);
  if (len) memcpy(p->code, text, len);
  p->code_size = len;
  return NULL;
}

/* Byte blobs handed out with a deleter: the opaque object is the malloc'ed block itself. */
static void blob_free_exec(PJRT_SerializedExecutable *p) { free(p); }
static void blob_free_options(PJRT_SerializedCompileOptions *p) { free(p); }
static void blob_free_assignment(PJRT_DeviceAssignmentSerialized *p) { free(p); }

PJRT_Error *cjp_PJRT_Executable_Serialize(PJRT_Executable_Serialize_Args *args) {
  CJP_CHECK_ARGS(PJRT_Executable_Serialize, args, serialized_executable_deleter);
  CJP_EXEC(PJRT_Executable_Serialize, e, args->executable, "executable");
  CJP_RETURN_SERIALIZED(PJRT_Executable_Serialize, executable, PJRT_SerializedExecutable,
                        cj_executable_serialize, e, blob_free_exec);
}

PJRT_Error *cjp_PJRT_Executable_GetCompileOptions(PJRT_Executable_GetCompileOptions_Args *args) {
  CJP_CHECK_ARGS(PJRT_Executable_GetCompileOptions, args, serialized_compile_options_deleter);
  CJP_EXEC(PJRT_Executable_GetCompileOptions, e, args->executable, "executable");
  char *copy = malloc(e->options_len ? e->options_len : 1);
  if (!copy) return cjp_error_in("PJRT_Executable_GetCompileOptions", cj_oom());
  if (e->options_len) memcpy(copy, e->options, e->options_len);
  CJP_SET_SERIALIZED(args, compile_options, PJRT_SerializedCompileOptions, copy, e->options_len,
                     blob_free_options);
  return NULL;
}

PJRT_Error *cjp_PJRT_Executable_DeserializeAndLoad(PJRT_Executable_DeserializeAndLoad_Args *args) {
  CJP_ENTER(PJRT_Executable_DeserializeAndLoad, loaded_executable);
  CJP_CLIENT(PJRT_Executable_DeserializeAndLoad, c, args->client, "client");
  if (!args->serialized_executable && args->serialized_executable_size)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: serialized_executable is NULL", fn);
  const char *ov = CJP_FIELD(PJRT_Executable_DeserializeAndLoad, args,
                             overridden_serialized_compile_options);
  size_t ov_len = CJP_FIELD(PJRT_Executable_DeserializeAndLoad, args,
                            overridden_serialized_compile_options_size);
  if (!ov && ov_len)
    return cjp_errorf(CJ_INVALID_ARGUMENT,
                      "%s: overridden_serialized_compile_options is NULL but its size is %zu", fn,
                      ov_len);
  /* load_options (computation_origin, multi-slice configuration) concern multi-host TPU
   * systems; a single-process CPU client has nothing to apply them to. */
  cj_executable *e;
  cj_status st = cj_executable_deserialize(c->backend, args->serialized_executable,
                                           args->serialized_executable_size, ov, ov_len, &e);
  if (!st) st = attach_front(e);
  cj_loaded *l = NULL;
  if (!st) st = load_and_release(c, e, &l);
  CJP_RETURN_OUT(st, loaded_executable, PJRT_LoadedExecutable, l);
}

/* ------------------------------------------------------------------------------------------ */
/* Loaded executables                                                                          */

CJP_DESTROY_SLOT(PJRT_LoadedExecutable_Destroy, executable,
                 cj_loaded, cj_loaded_check, cj_loaded_destroy)

PJRT_Error *cjp_PJRT_LoadedExecutable_GetExecutable(
    PJRT_LoadedExecutable_GetExecutable_Args *args) {
  CJP_CHECK_ARGS(PJRT_LoadedExecutable_GetExecutable, args, executable);
  CJP_LOADED(PJRT_LoadedExecutable_GetExecutable, l, args->loaded_executable,
             "loaded_executable");
  cj_executable_retain(l->exec);
  args->executable = (PJRT_Executable *)l->exec;
  return NULL;
}

CJP_LOADED_SLOT(PJRT_LoadedExecutable_AddressableDevices, num_addressable_devices,
    args->addressable_devices = (PJRT_Device *const *)l->devices;
    args->num_addressable_devices = (size_t)l->ndevices;)

PJRT_Error *cjp_PJRT_LoadedExecutable_AddressableDeviceLogicalIds(
    PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args *args) {
  CJP_CHECK_ARGS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds, args,
                 num_addressable_device_logical_ids);
  CJP_LOADED(PJRT_LoadedExecutable_AddressableDeviceLogicalIds, l, args->executable,
             "executable");
  args->addressable_device_logical_ids = (PJRT_LogicalDeviceIds *)l->logical;
  args->num_addressable_device_logical_ids = (size_t)l->ndevices;
  return NULL;
}

PJRT_Error *cjp_PJRT_LoadedExecutable_GetDeviceAssignment(
    PJRT_LoadedExecutable_GetDeviceAssignment_Args *args) {
  CJP_CHECK_ARGS(PJRT_LoadedExecutable_GetDeviceAssignment, args,
                 serialized_device_assignment_deleter);
  CJP_LOADED(PJRT_LoadedExecutable_GetDeviceAssignment, l, args->executable, "executable");
  size_t n = l->assignment_proto_len;
  char *copy = malloc(n ? n : 1);
  if (!copy) return cjp_error_in("PJRT_LoadedExecutable_GetDeviceAssignment", cj_oom());
  if (n) memcpy(copy, l->assignment_proto, n);
  CJP_SET_SERIALIZED(args, device_assignment, PJRT_DeviceAssignmentSerialized, copy, n,
                     blob_free_assignment);
  return NULL;
}

CJP_LOADED_SLOT(PJRT_LoadedExecutable_Delete, executable,
    cj_loaded_delete(l);)

CJP_LOADED_SLOT(PJRT_LoadedExecutable_IsDeleted, is_deleted,
    args->is_deleted = cj_loaded_is_deleted(l);)

CJP_LOADED_SLOT(PJRT_LoadedExecutable_Fingerprint, executable_fingerprint_size,
    CJP_SET_STR(args, executable_fingerprint, l->exec->fingerprint);)

PJRT_Error *cjp_PJRT_LoadedExecutable_Execute(PJRT_LoadedExecutable_Execute_Args *args) {
  CJP_ENTER(PJRT_LoadedExecutable_Execute, output_lists);
  CJP_LOADED(PJRT_LoadedExecutable_Execute, l, args->executable, "executable");
  PJRT_Event **events = CJP_FIELD(PJRT_LoadedExecutable_Execute, args, device_complete_events);
  PJRT_Device *exec_device = CJP_FIELD(PJRT_LoadedExecutable_Execute, args, execute_device);
  size_t ndev = args->num_devices, nargs = args->num_args;
  size_t nout = (size_t)l->exec->info->num_results;

  /* Options: the non-donatable indices, and launch_id (it pairs the per-device calls of one
   * launch: execute_device). Send/recv callbacks are never needed: programs with host send/recv
   * do not compile (the compiler names the op). The profiler extension chain is not read. */
  cj_execute_options eo = {NULL, 0, NULL, 0};
  const PJRT_ExecuteOptions *o = args->options;
  if (o && o->struct_size >= (size_t)PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, launch_id))
    eo.launch_id = o->launch_id;
  if (o) {
    if (o->struct_size >= (size_t)PJRT_STRUCT_SIZE(PJRT_ExecuteOptions,
                                                   num_non_donatable_input_indices)) {
      eo.non_donatable = o->non_donatable_input_indices;
      eo.num_non_donatable = o->num_non_donatable_input_indices;
      if (eo.num_non_donatable && !eo.non_donatable)
        return cjp_errorf(CJ_INVALID_ARGUMENT,
                          "%s: options->non_donatable_input_indices is NULL but "
                          "num_non_donatable_input_indices is %zu",
                          fn, eo.num_non_donatable);
    }
  }
  /* The execute context: FFI user data for the program's FFI handlers (ext_ffi.c). */
  if (o && o->struct_size >= (size_t)PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, context) &&
      o->context) {
    if (!cj_exec_context_check(o->context))
      return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: options->context is not an execute context", fn);
    eo.user_data = cj_exec_context_user_data((const cj_exec_context *)o->context);
  }
  /* The counts first: the lists are only read once they are known to fit. */
  cj_status cs = cj_loaded_check_call(l, (cj_device *)exec_device, ndev, nargs);
  if (cs) return cjp_error_in(fn, cs);
  if (nargs && !args->argument_lists)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: argument_lists is NULL", fn);
  if (nout && !args->output_lists)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: output_lists is NULL", fn);
  for (size_t d = 0; d < ndev; d++) {
    if (nargs && !args->argument_lists[d])
      return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: argument_lists[%zu] is NULL", fn, d);
    if (nout && !args->output_lists[d])
      return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: output_lists[%zu] is NULL", fn, d);
  }

  /* Flat copies of the caller's lists for the runtime. */
  size_t nin = ndev * nargs, nres = ndev * nout;
  void *block = malloc(sizeof(cj_buffer *) * (nin + nres) + sizeof(cj_event *) * ndev + 1);
  if (!block) return cjp_error_in(fn, cj_oom());
  cj_buffer **in = block;
  cj_buffer **outs = in + nin;
  cj_event **done = (cj_event **)(outs + nres);
  for (size_t d = 0; d < ndev; d++)
    for (size_t i = 0; i < nargs; i++) in[d * nargs + i] = (cj_buffer *)args->argument_lists[d][i];
  cj_status st = cj_loaded_execute(l, (cj_device *)exec_device, in, ndev, nargs, &eo, outs,
                                   events ? done : NULL);
  if (st) {
    free(block);
    return cjp_error_in(fn, st);
  }
  for (size_t d = 0; d < ndev; d++) {
    for (size_t j = 0; j < nout; j++) args->output_lists[d][j] = (PJRT_Buffer *)outs[d * nout + j];
    if (events) events[d] = (PJRT_Event *)done[d];
  }
  free(block);
  return NULL;
}
