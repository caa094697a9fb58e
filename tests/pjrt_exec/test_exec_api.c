/* cjrt executable suite: compiles and executes through the built plugin only (dlopen +
 * GetPjrtApi): every executable slot, compile errors (format, options, program, assignment),
 * execute errors (argument count, shape, type, placement, deleted and error-buffer arguments),
 * asynchronous execution (pending arguments, events, OnReady, the in-flight bound), donation
 * (deleted after, zero copy, refused when forbidden, shared or pinned, chained through pending
 * executions), multi-device executions over 2..8 partitions and 2 replicas with
 * partition_id / replica_id, one failing device, execute_device shares of multi-device
 * executables (each on its own, or meeting at an all_reduce across calls, a missing peer), Serialize/DeserializeAndLoad round trips and
 * corrupted bytes, PJRT_Compile + PJRT_Client_Load, concurrent executions from several threads,
 * executions outliving their client, and dlopen/dlclose/dlopen.
 *
 * Usage: test_pjrt_exec <plugin.so>            run the suite
 *        test_pjrt_exec <plugin.so> fingerprint print the fingerprint of a fixed program (used
 *                                               by the suite to compare across processes)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "exec_util.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *plugin_path;

static const char kAdd[] =
    "func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n"
    "}\n";

/* Two results of different types and shapes, named module. */
static const char kTwo[] =
    "module @two_results {\n"
    "  func.func @main(%a: tensor<2x3xf32>, %b: tensor<i32>) -> (tensor<2x3xf32>, tensor<i32>) {\n"
    "    %0 = stablehlo.multiply %a, %a : tensor<2x3xf32>\n"
    "    %1 = stablehlo.add %b, %b : tensor<i32>\n"
    "    return %0, %1 : tensor<2x3xf32>, tensor<i32>\n"
    "  }\n"
    "}\n";

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* Compile: formats, options, programs, assignments                                            */

static void test_compile_errors(void) {
  PJRT_Client *c = client_create_n(2);
  PJRT_LoadedExecutable *le;

  /* format */
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = (char *)kAdd;
  prog.code_size = strlen(kAdd);
  prog.format = "hlo"; /* MLIR text sent as an HLO proto: the HLO reader says what is wrong */
  prog.format_size = 3;
  ARGS(PJRT_Client_Compile, a);
  a.client = c;
  a.program = &prog;
  ERR(api->PJRT_Client_Compile(&a), INVALID_ARGUMENT, "hlo proto: HloModuleProto");
  prog.format = "hlox";
  prog.format_size = 4;
  ERR(api->PJRT_Client_Compile(&a), INVALID_ARGUMENT, "Unknown program format 'hlox'");
  prog.format = "mlirx";
  prog.format_size = 5;
  ERR(api->PJRT_Client_Compile(&a), INVALID_ARGUMENT, "Unknown program format 'mlirx'");
  a.program = NULL;
  ERR(api->PJRT_Client_Compile(&a), INVALID_ARGUMENT, "program is NULL");
  prog.format = "mlir";
  prog.format_size = 4;
  prog.code_size = 0;
  a.program = &prog;
  ERR(api->PJRT_Client_Compile(&a), INVALID_ARGUMENT, "empty");
  prog.struct_size = 8;
  prog.code_size = strlen(kAdd);
  ERR(api->PJRT_Client_Compile(&a), INVALID_ARGUMENT, "struct_size");

  /* options: garbage, truncated */
  static const unsigned char garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  ERR(compile_err(c, kAdd, garbage, sizeof garbage, &le), INVALID_ARGUMENT, "compile options");
  pb o;
  compile_options(&o, 1, 1, NULL);
  ERR(compile_err(c, kAdd, o.b, o.n - 1, &le), INVALID_ARGUMENT, "compile options");
  ERR(compile_err(c, kAdd, NULL, 5, &le), INVALID_ARGUMENT, "compile_options is NULL");

  /* programs: syntax, verification, unknown op */
  ERR(compile_err(c, "func.func @main( {", NULL, 0, &le), INVALID_ARGUMENT, "program");
  ERR(compile_err(c,
                  "func.func @main(%a: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {\n"
                  "  %0 = stablehlo.add %a, %b : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>\n"
                  "  return %0 : tensor<4xf32>\n}\n",
                  NULL, 0, &le),
      INVALID_ARGUMENT, "stablehlo.add");
  ERR(compile_err(c, "garbage bytes that are no module", NULL, 0, &le), INVALID_ARGUMENT, NULL);
  /* bytecode magic followed by garbage */
  ERR(compile_err(c, "ML\xEFR\x06garbage", NULL, 0, &le), INVALID_ARGUMENT, NULL);

  /* Host transfers (send/recv with host callbacks, JAX's Python callbacks) are refused at
   * compile time, naming the op, so Execute never meets a program that needs callbacks. */
  ERR(compile_err(c,
                  "func.func @main(%a: tensor<f32>, %t: !stablehlo.token) -> !stablehlo.token {\n"
                  "  %0 = \"stablehlo.send\"(%a, %t) {\n"
                  "    channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>,\n"
                  "    is_host_transfer = true\n"
                  "  } : (tensor<f32>, !stablehlo.token) -> !stablehlo.token\n"
                  "  return %0 : !stablehlo.token\n}\n",
                  NULL, 0, &le),
      UNIMPLEMENTED, "stablehlo.send");
  ERR(compile_err(c,
                  "func.func @main(%t: !stablehlo.token) -> (tensor<f32>, !stablehlo.token) {\n"
                  "  %0:2 = \"stablehlo.recv\"(%t) {\n"
                  "    channel_handle = #stablehlo.channel_handle<handle = 1, type = 3>,\n"
                  "    is_host_transfer = true\n"
                  "  } : (!stablehlo.token) -> (tensor<f32>, !stablehlo.token)\n"
                  "  return %0#0, %0#1 : tensor<f32>, !stablehlo.token\n}\n",
                  NULL, 0, &le),
      UNIMPLEMENTED, "stablehlo.recv");
  ERR(compile_err(c,
                  "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
                  "  %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%a) "
                  "{api_version = 4 : i32, backend_config = {index = 0 : ui64}} : (tensor<f32>) -> tensor<f32>\n"
                  "  return %0 : tensor<f32>\n}\n",
                  NULL, 0, &le),
      UNIMPLEMENTED, "xla_ffi_python_cpu_callback");

  /* assignments: more devices than the client has, unknown and repeated ids */
  compile_options(&o, 1, 3, NULL);
  ERR(compile_err(c, kAdd, o.b, o.n, &le), INVALID_ARGUMENT, "has only 2");
  compile_options(&o, 2, 2, NULL);
  ERR(compile_err(c, kAdd, o.b, o.n, &le), INVALID_ARGUMENT, "has only 2");
  int64_t bad_id[2] = {0, 7};
  compile_options(&o, 1, 2, bad_id);
  ERR(compile_err(c, kAdd, o.b, o.n, &le), INVALID_ARGUMENT, "device 7");
  int64_t twice[2] = {1, 1};
  compile_options(&o, 1, 2, twice);
  ERR(compile_err(c, kAdd, o.b, o.n, &le), INVALID_ARGUMENT, "twice");
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Executable slots                                                                            */

static void test_executable_slots(void) {
  PJRT_Client *c = client_create_n(2);
  pb o;
  compile_options(&o, 1, 1, NULL);
  PJRT_LoadedExecutable *le = compile_ok(c, kTwo, o.b, o.n);
  if (!le) {
    client_free(c);
    return;
  }
  PJRT_Executable *e = get_executable(le);
  PJRT_Executable *e2 = get_executable(le); /* a new reference each call */
  CHECK(e != NULL && e2 != NULL);

  ARGS(PJRT_Executable_Name, nm);
  nm.executable = e;
  if (OK(api->PJRT_Executable_Name(&nm)))
    CHECK(nm.executable_name_size == 11 && !memcmp(nm.executable_name, "two_results", 11));

  ARGS(PJRT_Executable_NumReplicas, nr);
  nr.executable = e;
  if (OK(api->PJRT_Executable_NumReplicas(&nr))) CHECK_EQ_INT(nr.num_replicas, 1);
  ARGS(PJRT_Executable_NumPartitions, np);
  np.executable = e;
  if (OK(api->PJRT_Executable_NumPartitions(&np))) CHECK_EQ_INT(np.num_partitions, 1);
  ARGS(PJRT_Executable_NumOutputs, no);
  no.executable = e;
  if (OK(api->PJRT_Executable_NumOutputs(&no))) CHECK_EQ_INT(no.num_outputs, 2);

  ARGS(PJRT_Executable_OutputElementTypes, ot);
  ot.executable = e;
  if (OK(api->PJRT_Executable_OutputElementTypes(&ot))) {
    CHECK_EQ_INT(ot.num_output_types, 2);
    CHECK_EQ_INT(ot.output_types[0], PJRT_Buffer_Type_F32);
    CHECK_EQ_INT(ot.output_types[1], PJRT_Buffer_Type_S32);
  }
  ARGS(PJRT_Executable_OutputDimensions, od);
  od.executable = e;
  if (OK(api->PJRT_Executable_OutputDimensions(&od))) {
    CHECK_EQ_INT(od.num_outputs, 2);
    CHECK_EQ_INT(od.dim_sizes[0], 2);
    CHECK_EQ_INT(od.dim_sizes[1], 0);
    CHECK_EQ_INT(od.dims[0], 2);
    CHECK_EQ_INT(od.dims[1], 3);
  }
  ARGS(PJRT_Executable_OutputMemoryKinds, ok);
  ok.executable = e;
  if (OK(api->PJRT_Executable_OutputMemoryKinds(&ok))) {
    CHECK_EQ_INT(ok.num_outputs, 2);
    for (size_t i = 0; i < ok.num_outputs; i++)
      CHECK(ok.memory_kind_sizes[i] == 6 && !memcmp(ok.memory_kinds[i], "device", 6));
  }
  ARGS(PJRT_Executable_ParameterMemoryKinds, pk);
  pk.executable = e;
  if (OK(api->PJRT_Executable_ParameterMemoryKinds(&pk))) {
    CHECK_EQ_INT(pk.num_parameters, 2);
    for (size_t i = 0; i < pk.num_parameters; i++)
      CHECK(pk.memory_kind_sizes[i] == 6 && !memcmp(pk.memory_kinds[i], "device", 6));
  }
  ARGS(PJRT_Executable_SizeOfGeneratedCodeInBytes, sz);
  sz.executable = e;
  if (OK(api->PJRT_Executable_SizeOfGeneratedCodeInBytes(&sz))) CHECK(sz.size_in_bytes >= 0);

  /* Fingerprint: 32 hex digits, the same for the same program and options, different for a
   * different program; the deprecated loaded slot agrees. */
  ARGS(PJRT_Executable_Fingerprint, fp);
  fp.executable = e;
  char fp1[64] = {0};
  if (OK(api->PJRT_Executable_Fingerprint(&fp))) {
    CHECK_EQ_INT(fp.executable_fingerprint_size, 32);
    memcpy(fp1, fp.executable_fingerprint, fp.executable_fingerprint_size < 63 ? fp.executable_fingerprint_size : 63);
  }
  ARGS(PJRT_LoadedExecutable_Fingerprint, lfp);
  lfp.executable = le;
  if (OK(api->PJRT_LoadedExecutable_Fingerprint(&lfp)))
    CHECK(lfp.executable_fingerprint_size == 32 && !memcmp(lfp.executable_fingerprint, fp1, 32));
  PJRT_LoadedExecutable *same = compile_ok(c, kTwo, o.b, o.n);
  PJRT_LoadedExecutable *other = compile_ok(c, kAdd, o.b, o.n);
  ARGS(PJRT_LoadedExecutable_Fingerprint, f2);
  f2.executable = same;
  if (same && OK(api->PJRT_LoadedExecutable_Fingerprint(&f2)))
    CHECK(f2.executable_fingerprint_size == 32 && !memcmp(f2.executable_fingerprint, fp1, 32));
  f2.executable = other;
  if (other && OK(api->PJRT_LoadedExecutable_Fingerprint(&f2)))
    CHECK(f2.executable_fingerprint_size == 32 && memcmp(f2.executable_fingerprint, fp1, 32) != 0);
  loaded_free(same);
  loaded_free(other);

  /* OptimizedProgram: size query, then the text; a short buffer is refused. */
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  ARGS(PJRT_Executable_OptimizedProgram, op);
  op.executable = e;
  op.program = &prog;
  if (OK(api->PJRT_Executable_OptimizedProgram(&op))) {
    CHECK(prog.format_size == 4 && !memcmp(prog.format, "mlir", 4));
    CHECK(prog.code_size > 0);
    size_t n = prog.code_size;
    char *text = malloc(n + 1);
    prog.code = text;
    prog.code_size = n - 1;
    ERR(api->PJRT_Executable_OptimizedProgram(&op), INVALID_ARGUMENT, "code_size");
    prog.code_size = n;
    if (OK(api->PJRT_Executable_OptimizedProgram(&op))) {
      text[n] = 0;
      CHECK_EQ_INT(prog.code_size, n);
      CHECK_CONTAINS(text, "stablehlo.multiply");
      /* the optimized text compiles again and gives the same program */
      PJRT_LoadedExecutable *again = compile_ok(c, text, o.b, o.n);
      loaded_free(again);
    }
    free(text);
  }
  op.program = NULL;
  ERR(api->PJRT_Executable_OptimizedProgram(&op), INVALID_ARGUMENT, "program is NULL");

  /* Cost analysis: named float values owned by the executable. */
  ARGS(PJRT_Executable_GetCostAnalysis, ca);
  ca.executable = e;
  if (OK(api->PJRT_Executable_GetCostAnalysis(&ca))) {
    int seen = 0;
    for (size_t i = 0; i < ca.num_properties; i++) {
      const PJRT_NamedValue *v = &ca.properties[i];
      CHECK_EQ_INT(v->type, PJRT_NamedValue_kFloat);
      if (v->name_size == 5 && !memcmp(v->name, "flops", 5)) {
        seen |= 1;
        CHECK_MSG(v->float_value >= 7, "flops %g for 6 multiplies and 1 add", v->float_value);
      }
      if (v->name_size == 14 && !memcmp(v->name, "bytes accessed", 14)) {
        seen |= 2;
        CHECK(v->float_value > 0);
      }
      if (v->name_size == 15 && !memcmp(v->name, "transcendentals", 15)) seen |= 4;
    }
    CHECK_EQ_INT(seen, 7);
  }

  ARGS(PJRT_Executable_GetCompiledMemoryStats, ms);
  ms.executable = e;
  if (OK(api->PJRT_Executable_GetCompiledMemoryStats(&ms))) {
    CHECK_EQ_INT(ms.argument_size_in_bytes, 2 * 3 * 4 + 4);
    CHECK_EQ_INT(ms.output_size_in_bytes, 2 * 3 * 4 + 4);
    CHECK_EQ_INT(ms.alias_size_in_bytes, 0);
    CHECK(ms.temp_size_in_bytes >= 0);
    CHECK(ms.total_size_in_bytes >= ms.argument_size_in_bytes + ms.output_size_in_bytes);
  }
  /* An older caller's smaller struct: only the fields it has are written. */
  union {
    PJRT_Executable_GetCompiledMemoryStats_Args a;
    unsigned char bytes[sizeof(PJRT_Executable_GetCompiledMemoryStats_Args) + 16];
  } smallu;
  unsigned char *small = smallu.bytes;
  memset(small, 0xab, sizeof smallu.bytes);
  PJRT_Executable_GetCompiledMemoryStats_Args *sm = &smallu.a;
  sm->struct_size = PJRT_STRUCT_SIZE(PJRT_Executable_GetCompiledMemoryStats_Args, temp_size_in_bytes);
  sm->extension_start = NULL;
  sm->executable = e;
  if (OK(api->PJRT_Executable_GetCompiledMemoryStats(sm))) {
    for (size_t i = sm->struct_size; i < sizeof smallu.bytes; i++) CHECK(small[i] == 0xab);
  }

  /* GetCompileOptions: the bytes exactly as given. */
  ARGS(PJRT_Executable_GetCompileOptions, gc);
  gc.executable = e;
  if (OK(api->PJRT_Executable_GetCompileOptions(&gc))) {
    CHECK_EQ_INT(gc.serialized_bytes_size, o.n);
    CHECK(!memcmp(gc.serialized_bytes, o.b, o.n));
    CHECK(gc.serialized_compile_options_deleter != NULL);
    gc.serialized_compile_options_deleter(gc.serialized_compile_options);
  }

  /* Loaded: devices, logical ids, assignment, delete. */
  ARGS(PJRT_LoadedExecutable_AddressableDevices, ad);
  ad.executable = le;
  if (OK(api->PJRT_LoadedExecutable_AddressableDevices(&ad))) {
    CHECK_EQ_INT(ad.num_addressable_devices, 1);
    CHECK(ad.addressable_devices[0] == device_at(c, 0));
  }
  ARGS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds, li);
  li.executable = le;
  if (OK(api->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&li))) {
    CHECK_EQ_INT(li.num_addressable_device_logical_ids, 1);
    CHECK(li.addressable_device_logical_ids[0].replica == 0 &&
          li.addressable_device_logical_ids[0].partition == 0);
  }
  ARGS(PJRT_LoadedExecutable_GetDeviceAssignment, ga);
  ga.executable = le;
  if (OK(api->PJRT_LoadedExecutable_GetDeviceAssignment(&ga))) {
    /* DeviceAssignmentProto{replica_count=1, computation_count=1, computation_devices{[0]}} */
    static const unsigned char want[] = {0x08, 1, 0x10, 1, 0x1a, 3, 0x0a, 1, 0};
    CHECK_EQ_INT(ga.serialized_bytes_size, sizeof want);
    CHECK(!memcmp(ga.serialized_bytes, want, sizeof want));
    ga.serialized_device_assignment_deleter(ga.serialized_device_assignment);
  }
  ARGS(PJRT_LoadedExecutable_IsDeleted, del);
  del.executable = le;
  if (OK(api->PJRT_LoadedExecutable_IsDeleted(&del))) CHECK(!del.is_deleted);
  ARGS(PJRT_LoadedExecutable_Delete, dl);
  dl.executable = le;
  OK(api->PJRT_LoadedExecutable_Delete(&dl));
  OK(api->PJRT_LoadedExecutable_Delete(&dl)); /* twice is harmless */
  if (OK(api->PJRT_LoadedExecutable_IsDeleted(&del))) CHECK(del.is_deleted);
  /* still answers the getters the framework treats as fatal */
  OK(api->PJRT_LoadedExecutable_AddressableDevices(&ad));
  OK(api->PJRT_LoadedExecutable_GetDeviceAssignment(&ga));
  if (ga.serialized_device_assignment_deleter)
    ga.serialized_device_assignment_deleter(ga.serialized_device_assignment);
  PJRT_Executable *e3 = get_executable(le);
  executable_free(e3);
  /* executing a deleted executable fails */
  int64_t dims[2] = {2, 3};
  float x[6] = {1, 2, 3, 4, 5, 6};
  int32_t y = 5;
  PJRT_Buffer *args[2] = {f32_buffer(c, device_at(c, 0), dims, 2, x),
                          buffer_from_host(c, device_at(c, 0), PJRT_Buffer_Type_S32, NULL, 0, &y)};
  PJRT_Buffer *outs[2] = {NULL, NULL};
  ERR(execute_raw(le, args, 1, 2, outs, 2, NULL, NULL), FAILED_PRECONDITION, "deleted");
  loaded_free(le);
  /* the unloaded executables outlive the loaded one */
  if (OK(api->PJRT_Executable_Name(&nm))) CHECK_EQ_INT(nm.executable_name_size, 11);
  nm.executable = e2;
  OK(api->PJRT_Executable_Name(&nm));
  executable_free(e);
  executable_free(e2);

  /* Handles of the wrong kind are refused, not followed. */
  ARGS(PJRT_Executable_NumOutputs, bad);
  bad.executable = (PJRT_Executable *)args[0];
  ERR(api->PJRT_Executable_NumOutputs(&bad), INVALID_ARGUMENT, "executable");
  buffer_free(args[0]);
  buffer_free(args[1]);
  client_free(c);
}

/* The fingerprint of kTwo in this process, or in a child process (the `fingerprint` mode). */
static int print_fingerprint(void) {
  PJRT_Client *c = client_create_n(1);
  PJRT_LoadedExecutable *le = compile_ok(c, kTwo, NULL, 0);
  ARGS(PJRT_LoadedExecutable_Fingerprint, f);
  f.executable = le;
  if (le && OK(api->PJRT_LoadedExecutable_Fingerprint(&f)))
    printf("%.*s\n", (int)f.executable_fingerprint_size, f.executable_fingerprint);
  loaded_free(le);
  client_free(c);
  return check_failures ? 1 : 0;
}

static void test_fingerprint_across_processes(void) {
  PJRT_Client *c = client_create_n(1);
  PJRT_LoadedExecutable *le = compile_ok(c, kTwo, NULL, 0);
  ARGS(PJRT_LoadedExecutable_Fingerprint, f);
  f.executable = le;
  char mine[64] = {0};
  if (le && OK(api->PJRT_LoadedExecutable_Fingerprint(&f)))
    snprintf(mine, sizeof mine, "%.*s", (int)f.executable_fingerprint_size,
             f.executable_fingerprint);
  loaded_free(le);
  client_free(c);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  CHECK(n > 0);
  if (n <= 0) return;
  self[n] = 0;
  char cmd[9000];
  snprintf(cmd, sizeof cmd, "'%s' '%s' fingerprint", self, plugin_path);
  FILE *p = popen(cmd, "r");
  CHECK(p != NULL);
  if (!p) return;
  char theirs[128] = {0};
  if (!fgets(theirs, sizeof theirs, p)) theirs[0] = 0;
  CHECK_EQ_INT(pclose(p), 0);
  theirs[strcspn(theirs, "\n")] = 0;
  CHECK_MSG(strlen(mine) == 32 && strcmp(mine, theirs) == 0, "fingerprint here %s, in a child %s",
            mine, theirs);
}

/* ------------------------------------------------------------------------------------------ */
/* Execute: results, events, argument checks                                                   */

/* Views of foreign memory at any address run: the executor gets 64-byte aligned arguments (an
 * unaligned view is copied into an aligned temporary per execution), and the view still aliases
 * the caller's memory (a change made between executions is seen by the next one). Offsets 1 and
 * 2 are not even aligned to the element size. */
static void test_unaligned_views(void) {
  PJRT_Client *c = client_create_n(1);
  PJRT_LoadedExecutable *le = compile_ok(c, kAdd, NULL, 0);
  PJRT_Device *d0 = device_at(c, 0);
  unsigned char *block = aligned_alloc(64, 256);
  static const size_t offsets[] = {0, 1, 2, 4, 8, 36};
  for (size_t k = 0; le && k < COUNT(offsets); k++) {
    float x[4] = {1.5f, -2, 3, 4.25f}, y[4] = {10, 20, 30, 40}, got[4], want[4];
    unsigned char *p = block + offsets[k];
    memcpy(p, x, sizeof x);
    int64_t dims[1] = {4};
    ARGS(PJRT_Client_CreateViewOfDeviceBuffer, vw);
    vw.client = c;
    vw.device_buffer_ptr = p;
    vw.dims = dims;
    vw.num_dims = 1;
    vw.element_type = PJRT_Buffer_Type_F32;
    vw.device = d0;
    if (!OK(api->PJRT_Client_CreateViewOfDeviceBuffer(&vw))) continue;
    PJRT_Buffer *args[2] = {vw.buffer, f32_vec(c, d0, 4, y)};
    for (int round = 0; round < 2; round++) {
      if (round == 1) { /* the view aliases the memory: write through it from outside */
        x[0] = 100;
        memcpy(p, x, sizeof x);
      }
      for (int i = 0; i < 4; i++) want[i] = x[i] + y[i];
      PJRT_Buffer *outs[1] = {NULL};
      PJRT_Event *ev[1] = {NULL};
      exec_opts eo = {NULL, 0, NULL, 1};
      if (OK(execute_raw(le, args, 1, 2, outs, 1, ev, &eo))) {
        OK(event_wait_free(ev[0]));
        memset(got, 0, sizeof got);
        OK(read_f32(outs[0], got, 4));
        CHECK_MSG(floats_equal(got, want, 4), "view at offset %zu, round %d", offsets[k], round);
        CHECK(buffer_pointer(outs[0]) % 64 == 0);
        buffer_free(outs[0]);
      }
    }
    CHECK(buffer_pointer(vw.buffer) == (uintptr_t)p); /* still a view, no copy */
    buffer_free(args[0]);
    buffer_free(args[1]);
  }
  free(block);
  loaded_free(le);
  client_free(c);
}

static void test_execute_basic(void) {
  PJRT_Client *c = client_create_n(2);
  PJRT_LoadedExecutable *le = compile_ok(c, kAdd, NULL, 0);
  if (!le) {
    client_free(c);
    return;
  }
  CHECK_EQ_INT(num_outputs(le), 1);
  PJRT_Device *d0 = device_at(c, 0), *d1 = device_at(c, 1);
  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, want[4] = {11, 22, 33, 44}, got[4];
  PJRT_Buffer *args[2] = {f32_vec(c, d0, 4, x), f32_vec(c, d0, 4, y)};
  PJRT_Buffer *outs[1] = {NULL};
  PJRT_Event *ev[1] = {NULL};
  exec_opts eo = {NULL, 0, NULL, 1};
  if (OK(execute_raw(le, args, 1, 2, outs, 1, ev, &eo))) {
    CHECK(ev[0] != NULL);
    OK(event_wait_free(ev[0]));
    memset(got, 0, sizeof got);
    OK(read_f32(outs[0], got, 4));
    CHECK(floats_equal(got, want, 4));
    /* the output lives on the executing device's default memory */
    ARGS(PJRT_Buffer_Device, bd);
    bd.buffer = outs[0];
    if (OK(api->PJRT_Buffer_Device(&bd))) CHECK(bd.device == d0);
    CHECK_EQ_STR(memory_kind(device_memory(d0, "device")), "device");
    /* the arguments are untouched */
    OK(read_f32(args[0], got, 4));
    CHECK(floats_equal(got, x, 4));
    buffer_free(outs[0]);
  }
  /* Without the events array; options NULL. */
  outs[0] = NULL;
  {
    PJRT_Buffer *const *lists[1] = {args};
    PJRT_Buffer **olists[1] = {outs};
    ARGS(PJRT_LoadedExecutable_Execute, a);
    a.executable = le;
    a.argument_lists = lists;
    a.num_devices = 1;
    a.num_args = 2;
    a.output_lists = olists;
    if (OK(api->PJRT_LoadedExecutable_Execute(&a))) {
      OK(read_f32(outs[0], got, 4));
      CHECK(floats_equal(got, want, 4));
      buffer_free(outs[0]);
    }
    /* A newer caller's bigger struct and an older one without execute_device. */
    unsigned char big[sizeof a + 64];
    memset(big, 0, sizeof big);
    memcpy(big, &a, sizeof a);
    ((PJRT_LoadedExecutable_Execute_Args *)big)->struct_size = sizeof big;
    if (OK(api->PJRT_LoadedExecutable_Execute((void *)big))) {
      OK(read_f32(outs[0], got, 4));
      buffer_free(outs[0]);
    }
    a.struct_size = PJRT_STRUCT_SIZE(PJRT_LoadedExecutable_Execute_Args, output_lists);
    a.device_complete_events = (PJRT_Event **)(uintptr_t)1; /* beyond its size: never read */
    a.execute_device = (PJRT_Device *)(uintptr_t)1;
    if (OK(api->PJRT_LoadedExecutable_Execute(&a))) {
      OK(read_f32(outs[0], got, 4));
      CHECK(floats_equal(got, want, 4));
      buffer_free(outs[0]);
    }
    a.struct_size = PJRT_STRUCT_SIZE(PJRT_LoadedExecutable_Execute_Args, num_args);
    ERR(api->PJRT_LoadedExecutable_Execute(&a), INVALID_ARGUMENT, "struct_size");
  }

  /* Extension chains on Compile and Execute args (a profiler extension) are tolerated. */
  {
    PJRT_Extension_Base prof = {sizeof prof, PJRT_Extension_Type_Profiler, NULL};
    PJRT_Extension_Base other = {sizeof other, (PJRT_Extension_Type)999, &prof};
    PJRT_Program prog;
    memset(&prog, 0, sizeof prog);
    prog.struct_size = PJRT_Program_STRUCT_SIZE;
    prog.code = (char *)kAdd;
    prog.code_size = strlen(kAdd);
    prog.format = "mlir";
    prog.format_size = 4;
    ARGS(PJRT_Client_Compile, cc);
    cc.extension_start = &other;
    cc.client = c;
    cc.program = &prog;
    if (OK(api->PJRT_Client_Compile(&cc))) {
      PJRT_Buffer *const *lists[1] = {args};
      PJRT_Buffer **olists[1] = {outs};
      PJRT_ExecuteOptions o;
      memset(&o, 0, sizeof o);
      o.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
      o.extension_start = &prof;
      ARGS(PJRT_LoadedExecutable_Execute, a);
      a.extension_start = &other;
      a.executable = cc.executable;
      a.options = &o;
      a.argument_lists = lists;
      a.num_devices = 1;
      a.num_args = 2;
      a.output_lists = olists;
      if (OK(api->PJRT_LoadedExecutable_Execute(&a))) {
        OK(read_f32(outs[0], got, 4));
        CHECK(floats_equal(got, want, 4));
        buffer_free(outs[0]);
      }
      loaded_free(cc.executable);
    }
  }

  /* execute_device: a single-device executable runs on any device of the client. */
  PJRT_Buffer *args1[2] = {f32_vec(c, d1, 4, x), f32_vec(c, d1, 4, y)};
  eo.execute_device = d1;
  if (OK(execute_raw(le, args1, 1, 2, outs, 1, ev, &eo))) {
    OK(event_wait_free(ev[0]));
    OK(read_f32(outs[0], got, 4));
    CHECK(floats_equal(got, want, 4));
    ARGS(PJRT_Buffer_Device, bd);
    bd.buffer = outs[0];
    if (OK(api->PJRT_Buffer_Device(&bd))) CHECK(bd.device == d1);
    buffer_free(outs[0]);
  }
  /* ... but its arguments must be there */
  ERR(execute_raw(le, args, 1, 2, outs, 1, ev, &eo), INVALID_ARGUMENT,
      "argument 0 is on device 0 but must be on device 1");
  eo.execute_device = (PJRT_Device *)args[0];
  ERR(execute_raw(le, args, 1, 2, outs, 1, ev, &eo), INVALID_ARGUMENT, "execute_device");
  eo.execute_device = d1;
  ERR(execute_raw(le, args1, 2, 1, outs, 1, ev, &eo), INVALID_ARGUMENT, "num_devices must be 1");
  eo.execute_device = NULL;

  /* Argument errors name the argument and what differs; nothing is produced. */
  outs[0] = NULL;
  ERR(execute_raw(le, args, 1, 1, outs, 1, ev, &eo), INVALID_ARGUMENT,
      "num_args is 1 but the program takes 2 arguments");
  ERR(execute_raw(le, args, 2, 2, outs, 1, ev, &eo), INVALID_ARGUMENT,
      "num_devices is 2 but the executable runs on 1 device");
  float x3[3] = {1, 2, 3};
  int32_t xi[4] = {1, 2, 3, 4};
  int64_t d4 = 4, d22[2] = {2, 2};
  PJRT_Buffer *short_vec = f32_vec(c, d0, 3, x3);
  PJRT_Buffer *ints = buffer_from_host(c, d0, PJRT_Buffer_Type_S32, &d4, 1, xi);
  PJRT_Buffer *matrix = f32_buffer(c, d0, d22, 2, x);
  PJRT_Buffer *bad[2] = {args[0], short_vec};
  ERR(execute_raw(le, bad, 1, 2, outs, 1, ev, &eo), INVALID_ARGUMENT,
      "argument 1 is tensor<3xf32> but the program expects tensor<4xf32>");
  bad[1] = ints;
  ERR(execute_raw(le, bad, 1, 2, outs, 1, ev, &eo), INVALID_ARGUMENT,
      "argument 1 is tensor<4xi32> but the program expects tensor<4xf32>");
  bad[0] = matrix;
  bad[1] = args[1];
  ERR(execute_raw(le, bad, 1, 2, outs, 1, ev, &eo), INVALID_ARGUMENT,
      "argument 0 is tensor<2x2xf32> but the program expects tensor<4xf32>");
  bad[0] = args1[0];
  ERR(execute_raw(le, bad, 1, 2, outs, 1, ev, &eo), INVALID_ARGUMENT,
      "argument 0 is on device 1 but must be on device 0");
  bad[0] = NULL;
  ERR(execute_raw(le, bad, 1, 2, outs, 1, ev, &eo), INVALID_ARGUMENT, "argument 0 is NULL");
  bad[0] = (PJRT_Buffer *)le;
  ERR(execute_raw(le, bad, 1, 2, outs, 1, ev, &eo), INVALID_ARGUMENT,
      "argument 0 is not a live cjrt buffer");
  PJRT_Buffer *gone = f32_vec(c, d0, 4, x);
  ARGS(PJRT_Buffer_Delete, del);
  del.buffer = gone;
  OK(api->PJRT_Buffer_Delete(&del));
  bad[0] = args[0];
  bad[1] = gone;
  ERR(execute_raw(le, bad, 1, 2, outs, 1, ev, &eo), INVALID_ARGUMENT,
      "argument 1 was deleted or donated");
  CHECK(outs[0] == NULL);
  /* A buffer of another client. */
  PJRT_Client *c2 = client_create_n(1);
  PJRT_Buffer *foreign = f32_vec(c2, device_at(c2, 0), 4, x);
  bad[1] = foreign;
  ERR(execute_raw(le, bad, 1, 2, outs, 1, ev, &eo), INVALID_ARGUMENT, "another client");
  buffer_free(foreign);
  client_free(c2);
  /* NULL lists. */
  {
    PJRT_Buffer *const *lists[1] = {args};
    PJRT_Buffer **olists[1] = {outs};
    ARGS(PJRT_LoadedExecutable_Execute, a);
    a.executable = le;
    a.argument_lists = lists;
    a.num_devices = 1;
    a.num_args = 2;
    ERR(api->PJRT_LoadedExecutable_Execute(&a), INVALID_ARGUMENT, "output_lists is NULL");
    a.output_lists = olists;
    a.argument_lists = NULL;
    ERR(api->PJRT_LoadedExecutable_Execute(&a), INVALID_ARGUMENT, "argument_lists is NULL");
    a.argument_lists = lists;
    olists[0] = NULL;
    ERR(api->PJRT_LoadedExecutable_Execute(&a), INVALID_ARGUMENT, "output_lists[0] is NULL");
    a.executable = NULL;
    ERR(api->PJRT_LoadedExecutable_Execute(&a), INVALID_ARGUMENT, "executable is NULL");
  }
  buffer_free(gone);
  buffer_free(short_vec);
  buffer_free(ints);
  buffer_free(matrix);
  buffer_free(args[0]);
  buffer_free(args[1]);
  buffer_free(args1[0]);
  buffer_free(args1[1]);
  /* every output and argument is gone: so is their memory */
  CHECK_EQ_INT(device_bytes_in_use(d0), 0);
  CHECK_EQ_INT(device_bytes_in_use(d1), 0);
  loaded_free(le);
  client_free(c);
}

/* Programs without arguments, with scalar and empty results, and every element type through
 * an identity. */
static void test_execute_shapes(void) {
  PJRT_Client *c = client_create_n(1);
  PJRT_Device *d0 = device_at(c, 0);
  PJRT_LoadedExecutable *le = compile_ok(
      c,
      "func.func @main() -> (tensor<f32>, tensor<0xf32>, tensor<2x0x3xi8>) {\n"
      "  %0 = stablehlo.constant dense<2.5> : tensor<f32>\n"
      "  %1 = stablehlo.constant dense<> : tensor<0xf32>\n"
      "  %2 = stablehlo.constant dense<> : tensor<2x0x3xi8>\n"
      "  return %0, %1, %2 : tensor<f32>, tensor<0xf32>, tensor<2x0x3xi8>\n}\n",
      NULL, 0);
  if (le) {
    PJRT_Buffer *outs[3] = {NULL, NULL, NULL};
    if (OK(execute_raw(le, NULL, 1, 0, outs, 3, NULL, NULL))) {
      float v = 0;
      OK(read_f32(outs[0], &v, 1));
      CHECK(v == 2.5f);
      char z;
      OK(buffer_to_host(outs[1], &z, 0, NULL));
      OK(buffer_to_host(outs[2], &z, 0, NULL));
      for (int j = 0; j < 3; j++) buffer_free(outs[j]);
    }
    loaded_free(le);
  }
  static const struct {
    const char *mlir;
    PJRT_Buffer_Type t;
    size_t bytes;
  } types[] = {
      {"i1", PJRT_Buffer_Type_PRED, 1},  {"i8", PJRT_Buffer_Type_S8, 1},
      {"i16", PJRT_Buffer_Type_S16, 2},  {"i32", PJRT_Buffer_Type_S32, 4},
      {"i64", PJRT_Buffer_Type_S64, 8},  {"ui8", PJRT_Buffer_Type_U8, 1},
      {"ui16", PJRT_Buffer_Type_U16, 2}, {"ui32", PJRT_Buffer_Type_U32, 4},
      {"ui64", PJRT_Buffer_Type_U64, 8}, {"f16", PJRT_Buffer_Type_F16, 2},
      {"bf16", PJRT_Buffer_Type_BF16, 2}, {"f32", PJRT_Buffer_Type_F32, 4},
      {"f64", PJRT_Buffer_Type_F64, 8},  {"complex<f32>", PJRT_Buffer_Type_C64, 8},
      {"complex<f64>", PJRT_Buffer_Type_C128, 16}, {"f8E4M3FN", PJRT_Buffer_Type_F8E4M3FN, 1},
      {"f8E5M2", PJRT_Buffer_Type_F8E5M2, 1}, {"i4", PJRT_Buffer_Type_S4, 1},
      {"ui4", PJRT_Buffer_Type_U4, 1},
  };
  for (size_t t = 0; t < COUNT(types); t++) {
    char text[512];
    snprintf(text, sizeof text,
             "func.func @main(%%a: tensor<3x%s>) -> (tensor<3x%s>, tensor<3x%s>) {\n"
             "  return %%a, %%a : tensor<3x%s>, tensor<3x%s>\n}\n",
             types[t].mlir, types[t].mlir, types[t].mlir, types[t].mlir, types[t].mlir);
    PJRT_LoadedExecutable *id;
    PJRT_Error *err = compile_err(c, text, NULL, 0, &id);
    CHECK_MSG(err == NULL, "identity over %s: %s", types[t].mlir, err ? err_msg(err) : "");
    err_free(err);
    if (!id) continue;
    PJRT_Executable *e = get_executable(id);
    ARGS(PJRT_Executable_OutputElementTypes, ot);
    ot.executable = e;
    if (OK(api->PJRT_Executable_OutputElementTypes(&ot))) {
      CHECK_EQ_INT(ot.num_output_types, 2);
      CHECK_MSG(ot.output_types[0] == types[t].t, "%s: type %d", types[t].mlir, (int)ot.output_types[0]);
    }
    executable_free(e);
    unsigned char in[48], got[48];
    for (size_t i = 0; i < sizeof in; i++) in[i] = (unsigned char)(i * 7 + 1);
    if (types[t].t == PJRT_Buffer_Type_PRED)
      for (size_t i = 0; i < 3; i++) in[i] &= 1;
    if (types[t].t == PJRT_Buffer_Type_S4 || types[t].t == PJRT_Buffer_Type_U4)
      for (size_t i = 0; i < 3; i++) in[i] &= 0xf;
    int64_t d3 = 3;
    PJRT_Buffer *arg = buffer_from_host(c, d0, types[t].t, &d3, 1, in);
    PJRT_Buffer *outs[2] = {NULL, NULL};
    if (OK(execute_raw(id, &arg, 1, 1, outs, 2, NULL, NULL))) {
      memset(got, 0, sizeof got);
      OK(buffer_to_host(outs[1], got, 3 * types[t].bytes, NULL));
      CHECK_MSG(!memcmp(got, in, 3 * types[t].bytes), "identity over %s", types[t].mlir);
      buffer_free(outs[0]);
      buffer_free(outs[1]);
    }
    buffer_free(arg);
    loaded_free(id);
  }
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Asynchrony: pending arguments, events, OnReady, poisoned executions                          */

typedef struct cb_state {
  atomic_int calls;
  atomic_int errors;
  char msg[256];
} cb_state;

static void on_ready_cb(PJRT_Error *e, void *arg) {
  cb_state *s = arg;
  if (e) {
    snprintf(s->msg, sizeof s->msg, "%s", err_msg(e));
    atomic_fetch_add(&s->errors, 1);
    err_free(e);
  }
  atomic_fetch_add(&s->calls, 1);
}

static void on_ready(PJRT_Event *ev, cb_state *s) {
  ARGS(PJRT_Event_OnReady, a);
  a.event = ev;
  a.callback = on_ready_cb;
  a.user_arg = s;
  OK(api->PJRT_Event_OnReady(&a));
}

static void test_async(void) {
  PJRT_Client *c = client_create_n(2);
  PJRT_Device *d0 = device_at(c, 0);
  PJRT_LoadedExecutable *le = compile_ok(c, kAdd, NULL, 0);
  if (!le) {
    client_free(c);
    return;
  }
  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, want[4] = {11, 22, 33, 44}, got[4];

  /* An argument that is not ready: Execute returns at once, the outputs wait for it. */
  pending p = pending_f32(c, d0, 4);
  PJRT_Buffer *b = f32_vec(c, d0, 4, y);
  PJRT_Buffer *args[2] = {p.buffer, b};
  PJRT_Buffer *outs[1] = {NULL};
  PJRT_Event *ev[1] = {NULL};
  exec_opts eo = {NULL, 0, NULL, 1};
  cb_state s1 = {0}, s2 = {0};
  if (OK(execute_raw(le, args, 1, 2, outs, 1, ev, &eo))) {
    PJRT_Event *rd = ready_event(outs[0]);
    CHECK_EQ_INT(event_ready(ev[0]), 0);
    CHECK_EQ_INT(event_ready(rd), 0);
    on_ready(ev[0], &s1);
    on_ready(rd, &s2);
    /* The caller may drop its handles meanwhile: the execution keeps what it needs. */
    buffer_free(b);
    b = NULL;
    sleep_ms(20);
    CHECK_EQ_INT(atomic_load(&s1.calls), 0);
    CHECK_EQ_INT(event_ready(rd), 0);
    pending_fill(&p, x, 4);
    OK(event_wait_free(ev[0]));
    OK(event_wait_free(rd));
    /* the callbacks ran exactly once, without error */
    for (int i = 0; i < 200 && atomic_load(&s2.calls) == 0; i++) sleep_ms(5);
    CHECK_EQ_INT(atomic_load(&s1.calls), 1);
    CHECK_EQ_INT(atomic_load(&s2.calls), 1);
    CHECK_EQ_INT(atomic_load(&s1.errors) + atomic_load(&s2.errors), 0);
    OK(read_f32(outs[0], got, 4));
    CHECK(floats_equal(got, want, 4));
    buffer_free(outs[0]);
  }
  buffer_free(p.buffer);
  buffer_free(b);

  /* An argument whose transfer fails poisons the execution: the outputs are error buffers with
   * the message, the device event carries it too. */
  p = pending_f32(c, d0, 4);
  b = f32_vec(c, d0, 4, y);
  args[0] = b;
  args[1] = p.buffer;
  if (OK(execute_raw(le, args, 1, 2, outs, 1, ev, &eo))) {
    CHECK_EQ_INT(event_ready(ev[0]), 0);
    pending_fail(&p, "the disk caught fire");
    ERR(event_wait_free(ev[0]), DATA_LOSS, "argument 1 is an error buffer: the disk caught fire");
    ERR(read_f32(outs[0], got, 4), DATA_LOSS, "the disk caught fire");
    ERR(buffer_ready_error(outs[0]), DATA_LOSS, "the disk caught fire");
    /* an error output fed to another execution poisons that one too */
    PJRT_Buffer *args2[2] = {outs[0], b};
    PJRT_Buffer *outs2[1] = {NULL};
    if (OK(execute_raw(le, args2, 1, 2, outs2, 1, ev, &eo))) {
      ERR(event_wait_free(ev[0]), DATA_LOSS, "the disk caught fire");
      ERR(read_f32(outs2[0], got, 4), DATA_LOSS, "argument 0 is an error buffer");
      buffer_free(outs2[0]);
    }
    buffer_free(outs[0]);
  }
  buffer_free(p.buffer);

  /* CreateErrorBuffer as an argument. */
  ARGS(PJRT_Client_CreateErrorBuffer, ce);
  int64_t d4 = 4;
  ce.client = c;
  ce.error_code = PJRT_Error_Code_ABORTED;
  ce.error_message = "made to fail";
  ce.error_message_size = strlen(ce.error_message);
  ce.shape_dims = &d4;
  ce.shape_num_dims = 1;
  ce.shape_element_type = PJRT_Buffer_Type_F32;
  ce.memory = device_memory(d0, "device");
  if (OK(api->PJRT_Client_CreateErrorBuffer(&ce))) {
    args[0] = b;
    args[1] = ce.buffer;
    if (OK(execute_raw(le, args, 1, 2, outs, 1, ev, &eo))) {
      ERR(event_wait_free(ev[0]), ABORTED, "made to fail");
      ERR(read_f32(outs[0], got, 4), ABORTED, "argument 1 is an error buffer: made to fail");
      buffer_free(outs[0]);
    }
    buffer_free(ce.buffer);
  }

  /* A failing program (a check that does not hold) marks its outputs with the message. */
  PJRT_LoadedExecutable *chk = compile_ok(
      c,
      "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0, 5.0]> : tensor<4xf32>\n"
      "  check.expect_eq %a, %c : tensor<4xf32>\n"
      "  return %a : tensor<4xf32>\n}\n",
      NULL, 0);
  if (chk) {
    PJRT_Buffer *xa = f32_vec(c, d0, 4, x);
    if (OK(execute_raw(chk, &xa, 1, 1, outs, 1, ev, &eo))) {
      PJRT_Error *e = event_wait_free(ev[0]);
      CHECK(e != NULL);
      if (e) {
        CHECK_CONTAINS(err_msg(e), "check.expect_eq");
        err_free(e);
      }
      PJRT_Error *r = read_f32(outs[0], got, 4);
      CHECK(r != NULL);
      err_free(r);
      buffer_free(outs[0]);
    }
    buffer_free(xa);
    loaded_free(chk);
  }
  buffer_free(b);
  loaded_free(le);
  client_free(c);
}

/* A program with a loop always runs on the client's pool: Execute returns before it is done,
 * even with every argument ready. */
static const char kLoop[] =
    "func.func @main(%n: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %half = stablehlo.constant dense<0.5> : tensor<4xf32>\n"
    "  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<4xf32>\n"
    "    cond {\n"
    "      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %lt : tensor<i1>\n"
    "    } do {\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %a1 = stablehlo.add %acc, %acc : tensor<4xf32>\n"
    "      %a2 = stablehlo.multiply %a1, %half : tensor<4xf32>\n"
    "      stablehlo.return %i1, %a2 : tensor<i32>, tensor<4xf32>\n"
    "    }\n"
    "  return %r#1 : tensor<4xf32>\n}\n";

static void test_async_loop(void) {
  PJRT_Client *c = client_create_n(1);
  PJRT_Device *d0 = device_at(c, 0);
  PJRT_LoadedExecutable *le = compile_ok(c, kLoop, NULL, 0);
  if (!le) {
    client_free(c);
    return;
  }
  float x[4] = {1, 2, 3, 4}, got[4];
  int32_t iters = 300000;
  PJRT_Buffer *args[2] = {buffer_from_host(c, d0, PJRT_Buffer_Type_S32, NULL, 0, &iters),
                          f32_vec(c, d0, 4, x)};
  PJRT_Buffer *out = NULL;
  PJRT_Event *ev = NULL;
  exec_opts eo = {NULL, 0, NULL, 1};
  struct timespec t0, t1, t2;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (OK(execute_raw(le, args, 1, 2, &out, 1, &ev, &eo))) {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int ready_at_return = event_ready(ev);
    OK(event_wait_free(ev));
    clock_gettime(CLOCK_MONOTONIC, &t2);
    double call = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    double total = (double)(t2.tv_sec - t0.tv_sec) * 1e3 + (double)(t2.tv_nsec - t0.tv_nsec) / 1e6;
    /* Only meaningful when the work takes clearly longer than a call. */
    if (total > 20 * call + 5) CHECK_MSG(ready_at_return == 0, "Execute returned after the work (%.2f of %.2f ms)", call, total);
    OK(read_f32(out, got, 4));
    CHECK(floats_equal(got, x, 4));
    buffer_free(out);
  }
  /* Zero iterations: the same path, the input back. */
  iters = 0;
  PJRT_Buffer *n0 = buffer_from_host(c, d0, PJRT_Buffer_Type_S32, NULL, 0, &iters);
  PJRT_Buffer *args0[2] = {n0, args[1]};
  if (OK(execute_raw(le, args0, 1, 2, &out, 1, NULL, NULL))) {
    OK(read_f32(out, got, 4));
    CHECK(floats_equal(got, x, 4));
    buffer_free(out);
  }
  buffer_free(n0);
  buffer_free(args[0]);
  buffer_free(args[1]);
  loaded_free(le);
  client_free(c);
}

/* Executions are bounded in flight: with arguments that never become ready, the submitting
 * thread blocks once the bound is reached, and resumes when they do. */
typedef struct flood {
  PJRT_LoadedExecutable *le;
  PJRT_Buffer *args[2];
  int total;
  atomic_int submitted;
  PJRT_Buffer **outs;
  int failures;
} flood;

static void *flood_main(void *arg) {
  flood *f = arg;
  for (int i = 0; i < f->total; i++) {
    PJRT_Error *e = execute_raw(f->le, f->args, 1, 2, &f->outs[i], 1, NULL, NULL);
    if (e) {
      f->failures++;
      err_free(e);
    }
    atomic_fetch_add(&f->submitted, 1);
  }
  return NULL;
}

static void test_inflight_bound(void) {
  PJRT_Client *c = client_create_n(1);
  PJRT_Device *d0 = device_at(c, 0);
  PJRT_LoadedExecutable *le = compile_ok(c, kAdd, NULL, 0);
  if (!le) {
    client_free(c);
    return;
  }
  float x[4] = {1, 2, 3, 4}, got[4];
  pending p = pending_f32(c, d0, 4);
  flood f;
  memset(&f, 0, sizeof f);
  f.le = le;
  f.args[0] = p.buffer;
  f.args[1] = p.buffer;
  f.total = 100;
  f.outs = calloc((size_t)f.total, sizeof *f.outs);
  atomic_init(&f.submitted, 0);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, flood_main, &f) == 0);
  for (int i = 0; i < 1000 && atomic_load(&f.submitted) < 64; i++) sleep_ms(2);
  sleep_ms(50);
  int n = atomic_load(&f.submitted);
  CHECK_MSG(n == 64, "%d executions were accepted while their argument was pending (bound 64)", n);
  pending_fill(&p, x, 4);
  pthread_join(t, NULL);
  CHECK_EQ_INT(f.failures, 0);
  CHECK_EQ_INT(atomic_load(&f.submitted), f.total);
  int bad = 0;
  for (int i = 0; i < f.total; i++) {
    if (!f.outs[i]) {
      bad++;
      continue;
    }
    PJRT_Error *e = read_f32(f.outs[i], got, 4);
    if (e || got[0] != 2 || got[3] != 8) bad++;
    err_free(e);
    buffer_free(f.outs[i]);
  }
  CHECK_EQ_INT(bad, 0);
  free(f.outs);
  buffer_free(p.buffer);
  loaded_free(le);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Donation                                                                                    */

static const char kDonate[] =
    "func.func @main(%a: tensor<4xf32> {tf.aliasing_output = 0 : i32}, %b: tensor<4xf32>)"
    " -> tensor<4xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n";

static const char kDonor[] =
    "func.func @main(%a: tensor<4xf32> {jax.buffer_donor = true}, %b: tensor<4xf32>)"
    " -> (tensor<4xf32>, tensor<4xf32>) {\n"
    "  %0 = stablehlo.multiply %a, %b : tensor<4xf32>\n"
    "  %1 = stablehlo.subtract %a, %b : tensor<4xf32>\n"
    "  return %0, %1 : tensor<4xf32>, tensor<4xf32>\n}\n";

static void test_donation(void) {
  PJRT_Client *c = client_create_n(1);
  PJRT_Device *d0 = device_at(c, 0);
  PJRT_LoadedExecutable *le = compile_ok(c, kDonate, NULL, 0);
  if (!le) {
    client_free(c);
    return;
  }
  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, want[4] = {11, 22, 33, 44}, got[4];
  PJRT_Buffer *outs[2] = {NULL, NULL};

  PJRT_Executable *ex = get_executable(le);
  ARGS(PJRT_Executable_GetCompiledMemoryStats, ms);
  ms.executable = ex;
  if (OK(api->PJRT_Executable_GetCompiledMemoryStats(&ms))) CHECK_EQ_INT(ms.alias_size_in_bytes, 16);
  executable_free(ex);

  /* Donated: the input reads as deleted, the output reuses its memory and is right. */
  PJRT_Buffer *a = f32_vec(c, d0, 4, x), *b = f32_vec(c, d0, 4, y);
  uintptr_t pa = buffer_pointer(a);
  PJRT_Buffer *args[2] = {a, b};
  if (OK(execute_raw(le, args, 1, 2, outs, 1, NULL, NULL))) {
    CHECK_EQ_INT(buffer_is_deleted(a), 1);
    ERR(buffer_ready_error(a), INVALID_ARGUMENT, "donated");
    CHECK_EQ_INT(buffer_is_deleted(b), 0);
    OK(read_f32(outs[0], got, 4));
    CHECK(floats_equal(got, want, 4));
    CHECK(buffer_pointer(outs[0]) == pa);
    /* using the donated buffer again is refused */
    ERR(execute_raw(le, args, 1, 2, &outs[1], 1, NULL, NULL), INVALID_ARGUMENT,
        "argument 0 was deleted or donated");
    buffer_free(outs[0]);
  }
  buffer_free(a);

  /* non_donatable_input_indices: a copy instead. */
  a = f32_vec(c, d0, 4, x);
  args[0] = a;
  int64_t keep[1] = {0};
  exec_opts eo = {keep, 1, NULL, 0};
  if (OK(execute_raw(le, args, 1, 2, outs, 1, NULL, &eo))) {
    CHECK_EQ_INT(buffer_is_deleted(a), 0);
    OK(read_f32(outs[0], got, 4));
    CHECK(floats_equal(got, want, 4));
    CHECK(buffer_pointer(outs[0]) != buffer_pointer(a));
    OK(read_f32(a, got, 4));
    CHECK(floats_equal(got, x, 4));
    buffer_free(outs[0]);
  }
  /* The same buffer twice with one of them donated: an error, as in XLA, and nothing is lost. */
  PJRT_Buffer *twice[2] = {a, a};
  ERR(execute_raw(le, twice, 1, 2, outs, 1, NULL, NULL), INVALID_ARGUMENT,
      "also passed as argument 1");
  CHECK_EQ_INT(buffer_is_deleted(a), 0);
  /* ... and fine when that argument is kept from donation. */
  if (OK(execute_raw(le, twice, 1, 2, outs, 1, NULL, &eo))) {
    CHECK_EQ_INT(buffer_is_deleted(a), 0);
    OK(read_f32(outs[0], got, 4));
    CHECK(got[0] == 2 && got[3] == 8);
    buffer_free(outs[0]);
  }
  /* An external reference (a NumPy/DLPack view) pins it: not donated. */
  ARGS(PJRT_Buffer_IncreaseExternalReferenceCount, inc);
  inc.buffer = a;
  OK(api->PJRT_Buffer_IncreaseExternalReferenceCount(&inc));
  if (OK(execute_raw(le, args, 1, 2, outs, 1, NULL, NULL))) {
    CHECK_EQ_INT(buffer_is_deleted(a), 0);
    OK(read_f32(outs[0], got, 4));
    CHECK(floats_equal(got, want, 4));
    buffer_free(outs[0]);
  }
  ARGS(PJRT_Buffer_DecreaseExternalReferenceCount, dec);
  dec.buffer = a;
  OK(api->PJRT_Buffer_DecreaseExternalReferenceCount(&dec));
  /* A pending read of it (a copy to host not yet done) forbids donation too. */
  pending p = pending_f32(c, d0, 4);
  {
    PJRT_Buffer *pargs[2] = {p.buffer, b};
    float early[4];
    ARGS(PJRT_Buffer_ToHostBuffer, th);
    th.src = p.buffer;
    th.dst = early;
    th.dst_size = sizeof early;
    OK(api->PJRT_Buffer_ToHostBuffer(&th));
    if (OK(execute_raw(le, pargs, 1, 2, outs, 1, NULL, NULL))) {
      CHECK_EQ_INT(buffer_is_deleted(p.buffer), 0);
      pending_fill(&p, x, 4);
      OK(event_wait_free(th.event));
      CHECK(floats_equal(early, x, 4));
      OK(read_f32(outs[0], got, 4));
      CHECK(floats_equal(got, want, 4));
      buffer_free(outs[0]);
    } else {
      pending_fill(&p, x, 4);
      OK(event_wait_free(th.event));
    }
  }
  buffer_free(p.buffer);
  /* Zero-copy host memory is consumed, never written: the donated buffer reads as deleted (as
   * the caller asked), the result gets fresh memory, the host data stays as it was and is let go
   * (done_with_host_buffer) once the execution no longer reads it. */
  float *host = aligned_alloc(64, 64);
  memcpy(host, x, sizeof x);
  int64_t d4 = 4;
  PJRT_Event *hd = NULL;
  PJRT_Buffer *zc = buffer_from_host_ex(c, d0, NULL, PJRT_Buffer_Type_F32, &d4, 1, host, NULL,
                                        PJRT_HostBufferSemantics_kImmutableZeroCopy, &hd);
  args[0] = zc;
  if (zc && OK(execute_raw(le, args, 1, 2, outs, 1, NULL, NULL))) {
    CHECK_EQ_INT(buffer_is_deleted(zc), 1);
    OK(read_f32(outs[0], got, 4));
    CHECK(floats_equal(got, want, 4));
    CHECK(floats_equal(host, x, 4));
    CHECK(buffer_pointer(outs[0]) != (uintptr_t)host);
    OK(event_wait_free(hd));
    hd = NULL;
    buffer_free(outs[0]);
  }
  buffer_free(zc); /* a donated buffer's handle is still the caller's to destroy */
  /* ... unless the caller forbids it */
  PJRT_Event *hd2 = NULL;
  zc = buffer_from_host_ex(c, d0, NULL, PJRT_Buffer_Type_F32, &d4, 1, host, NULL,
                           PJRT_HostBufferSemantics_kImmutableZeroCopy, &hd2);
  args[0] = zc;
  {
    int64_t nd[1] = {0};
    exec_opts keep = {nd, 1, NULL, 0};
    if (zc && OK(execute_raw(le, args, 1, 2, outs, 1, NULL, &keep))) {
      CHECK_EQ_INT(buffer_is_deleted(zc), 0);
      OK(read_f32(outs[0], got, 4));
      CHECK(floats_equal(got, want, 4));
      buffer_free(outs[0]);
    }
  }
  buffer_free(zc);
  if (hd) OK(event_wait_free(hd));
  if (hd2) OK(event_wait_free(hd2));
  free(host);

  /* Chained through pending executions (a training loop): step k donates the output of step
   * k-1 before it is computed; all wait for the first argument. */
  p = pending_f32(c, d0, 4);
  PJRT_Buffer *cur = p.buffer;
  PJRT_Buffer *chain[8];
  int chained_ok = 1;
  for (int k = 0; k < 8; k++) {
    PJRT_Buffer *cargs[2] = {cur, b};
    chain[k] = NULL;
    if (!OK(execute_raw(le, cargs, 1, 2, &chain[k], 1, NULL, NULL))) {
      chained_ok = 0;
      break;
    }
    if (k > 0) CHECK_MSG(buffer_is_deleted(cur) == 1, "step %d did not donate its input", k);
    cur = chain[k];
  }
  CHECK_EQ_INT(buffer_is_deleted(p.buffer), 1); /* a pending buffer may be donated too */
  pending_fill(&p, x, 4);
  if (chained_ok) {
    OK(read_f32(chain[7], got, 4));
    for (int i = 0; i < 4; i++) CHECK(got[i] == x[i] + 8 * y[i]);
    for (int k = 0; k < 7; k++) ERR(buffer_ready_error(chain[k]), INVALID_ARGUMENT, "donated");
  }
  for (int k = 0; k < 8; k++)
    if (chained_ok || chain[k]) buffer_free(chain[k]);
  buffer_free(p.buffer);

  /* jax.buffer_donor: the first result of the same type takes it. */
  buffer_free(a);
  PJRT_LoadedExecutable *le2 = compile_ok(c, kDonor, NULL, 0);
  if (le2) {
    PJRT_Buffer *a2 = f32_vec(c, d0, 4, x);
    args[0] = a2;
    uintptr_t p2 = buffer_pointer(a2);
    if (OK(execute_raw(le2, args, 1, 2, outs, 2, NULL, NULL))) {
      CHECK_EQ_INT(buffer_is_deleted(a2), 1);
      CHECK(buffer_pointer(outs[0]) == p2 || buffer_pointer(outs[1]) == p2);
      OK(read_f32(outs[0], got, 4));
      for (int i = 0; i < 4; i++) CHECK(got[i] == x[i] * y[i]);
      OK(read_f32(outs[1], got, 4));
      for (int i = 0; i < 4; i++) CHECK(got[i] == x[i] - y[i]);
      buffer_free(outs[0]);
      buffer_free(outs[1]);
    }
    buffer_free(a2);
    loaded_free(le2);
  }
  buffer_free(b);
  loaded_free(le);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Multi-device                                                                                */

static const char kPartitionAdd[] =
    "func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<ui32>) {\n"
    "  %p = stablehlo.partition_id : tensor<ui32>\n"
    "  %f = stablehlo.convert %p : (tensor<ui32>) -> tensor<f32>\n"
    "  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  return %0, %p : tensor<4xf32>, tensor<ui32>\n}\n";

static const char kReplicaAdd[] =
    "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %r = stablehlo.replica_id : tensor<ui32>\n"
    "  %p = stablehlo.partition_id : tensor<ui32>\n"
    "  %c = stablehlo.constant dense<10> : tensor<ui32>\n"
    "  %rr = stablehlo.multiply %r, %c : tensor<ui32>\n"
    "  %s = stablehlo.add %rr, %p : tensor<ui32>\n"
    "  %f = stablehlo.convert %s : (tensor<ui32>) -> tensor<f32>\n"
    "  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>\n"
    "  %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n";

/* Decodes a DeviceAssignmentProto into ids[replica * np + partition]; returns the count. */
static int decode_assignment(const unsigned char *p, size_t n, int np, int64_t *ids, int max) {
  size_t k = 0;
  int comp = 0, count = 0;
  while (k < n) {
    unsigned key = p[k++];
    if ((key & 7) == 0) {
      while (k < n && (p[k] & 0x80)) k++;
      k++;
    } else if ((key & 7) == 2) {
      size_t len = p[k++];
      size_t end = k + len;
      if ((key >> 3) == 3) {
        /* ComputationDevice{1: packed ids} */
        k++; /* key 0x0a */
        size_t plen = p[k++];
        size_t pend = k + plen;
        int r = 0;
        while (k < pend) {
          uint64_t v = 0;
          int sh = 0;
          while (p[k] & 0x80) v |= (uint64_t)(p[k++] & 0x7f) << sh, sh += 7;
          v |= (uint64_t)p[k++] << sh;
          if (r * np + comp < max) ids[r * np + comp] = (int64_t)v;
          r++;
          count++;
        }
        comp++;
      }
      k = end;
    } else {
      return -1;
    }
  }
  return count;
}

static void run_partitioned(PJRT_Client *c, int np, int reversed) {
  int64_t ids[8];
  for (int i = 0; i < np; i++) ids[i] = reversed ? np - 1 - i : i;
  pb o;
  compile_options(&o, 1, np, ids);
  PJRT_LoadedExecutable *le = compile_ok(c, kPartitionAdd, o.b, o.n);
  if (!le) return;
  ARGS(PJRT_LoadedExecutable_AddressableDevices, ad);
  ad.executable = le;
  PJRT_Device *devs[8] = {0};
  if (OK(api->PJRT_LoadedExecutable_AddressableDevices(&ad))) {
    CHECK_EQ_INT(ad.num_addressable_devices, np);
    for (int i = 0; i < np && i < (int)ad.num_addressable_devices; i++) {
      devs[i] = ad.addressable_devices[i];
      CHECK(devs[i] == device_at(c, (size_t)ids[i]));
    }
  }
  ARGS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds, li);
  li.executable = le;
  if (OK(api->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&li)))
    for (int i = 0; i < np; i++)
      CHECK(li.addressable_device_logical_ids[i].replica == 0 &&
            li.addressable_device_logical_ids[i].partition == i);
  ARGS(PJRT_LoadedExecutable_GetDeviceAssignment, ga);
  ga.executable = le;
  if (OK(api->PJRT_LoadedExecutable_GetDeviceAssignment(&ga))) {
    int64_t got_ids[8] = {0};
    CHECK_EQ_INT(decode_assignment((const unsigned char *)ga.serialized_bytes,
                                   ga.serialized_bytes_size, np, got_ids, 8),
                 np);
    for (int i = 0; i < np; i++) CHECK_EQ_INT(got_ids[i], ids[i]);
    ga.serialized_device_assignment_deleter(ga.serialized_device_assignment);
  }
  PJRT_Executable *ex = get_executable(le);
  ARGS(PJRT_Executable_NumPartitions, npa);
  npa.executable = ex;
  if (OK(api->PJRT_Executable_NumPartitions(&npa))) CHECK_EQ_INT(npa.num_partitions, np);
  executable_free(ex);

  PJRT_Buffer *args[8], *outs[16] = {0};
  PJRT_Event *ev[8] = {0};
  float x[8][4];
  for (int d = 0; d < np; d++) {
    for (int i = 0; i < 4; i++) x[d][i] = (float)(100 * d + i);
    args[d] = f32_vec(c, devs[d] ? devs[d] : device_at(c, 0), 4, x[d]);
  }
  exec_opts eo = {NULL, 0, NULL, 1};
  if (OK(execute_raw(le, args, (size_t)np, 1, outs, 2, ev, &eo))) {
    for (int d = 0; d < np; d++) {
      CHECK(ev[d] != NULL);
      OK(event_wait_free(ev[d]));
      float got[4];
      uint32_t pid = 99;
      OK(read_f32(outs[2 * d], got, 4));
      OK(buffer_to_host(outs[2 * d + 1], &pid, 4, NULL));
      CHECK_MSG(pid == (uint32_t)d, "%d partitions: device list %d ran as partition %u", np, d, pid);
      for (int i = 0; i < 4; i++) CHECK(got[i] == x[d][i] + (float)d);
      ARGS(PJRT_Buffer_Device, bd);
      bd.buffer = outs[2 * d];
      if (OK(api->PJRT_Buffer_Device(&bd))) CHECK(bd.device == devs[d]);
      buffer_free(outs[2 * d]);
      buffer_free(outs[2 * d + 1]);
    }
  }
  /* A list on the wrong device is refused, naming it. */
  if (np >= 2) {
    PJRT_Buffer *swapped[8];
    memcpy(swapped, args, sizeof(PJRT_Buffer *) * (size_t)np);
    swapped[0] = args[1];
    swapped[1] = args[0];
    ERR(execute_raw(le, swapped, (size_t)np, 1, outs, 2, ev, &eo), INVALID_ARGUMENT,
        "argument 0 of device list 0 is on device");
  }
  for (int d = 0; d < np; d++) buffer_free(args[d]);
  loaded_free(le);
}

static void test_multi_device(void) {
  PJRT_Client *c = client_create_n(8);
  for (int np = 2; np <= 8; np++) run_partitioned(c, np, np % 2);

  /* No explicit assignment: the client's default (replica-major over the first devices). */
  pb o;
  compile_options(&o, 2, 2, NULL);
  PJRT_LoadedExecutable *le = compile_ok(c, kReplicaAdd, o.b, o.n);
  if (le) {
    ARGS(PJRT_LoadedExecutable_AddressableDeviceLogicalIds, li);
    li.executable = le;
    if (OK(api->PJRT_LoadedExecutable_AddressableDeviceLogicalIds(&li))) {
      CHECK_EQ_INT(li.num_addressable_device_logical_ids, 4);
      for (int i = 0; i < 4; i++)
        CHECK(li.addressable_device_logical_ids[i].replica == i / 2 &&
              li.addressable_device_logical_ids[i].partition == i % 2);
    }
    PJRT_Buffer *args[4], *outs[4] = {0};
    float x[4] = {1, 2, 3, 4}, got[4];
    for (int d = 0; d < 4; d++) args[d] = f32_vec(c, device_at(c, (size_t)d), 4, x);
    if (OK(execute_raw(le, args, 4, 1, outs, 1, NULL, NULL))) {
      for (int d = 0; d < 4; d++) {
        OK(read_f32(outs[d], got, 4));
        float add = (float)(10 * (d / 2) + d % 2);
        for (int i = 0; i < 4; i++) CHECK(got[i] == x[i] + add);
        buffer_free(outs[d]);
      }
    }
    /* execute_device runs that device's share: device 3 is (replica 1, partition 1) */
    exec_opts eo = {NULL, 0, device_at(c, 3), 0};
    if (OK(execute_raw(le, args + 3, 1, 1, outs, 1, NULL, &eo))) {
      OK(read_f32(outs[0], got, 4));
      for (int i = 0; i < 4; i++) CHECK(got[i] == x[i] + 11);
      buffer_free(outs[0]);
    }
    /* a device outside the assignment is named */
    eo.execute_device = device_at(c, 5);
    ERR(execute_raw(le, args, 1, 1, outs, 1, NULL, &eo), INVALID_ARGUMENT,
        "device 5, which is not in the executable's device assignment");
    for (int d = 0; d < 4; d++) buffer_free(args[d]);
    loaded_free(le);
  }

  /* One device fails (its check does not hold), the others finish, nothing hangs. */
  compile_options(&o, 1, 4, NULL);
  le = compile_ok(c,
                  "func.func @main(%a: tensor<ui32>) -> tensor<ui32> {\n"
                  "  %p = stablehlo.partition_id : tensor<ui32>\n"
                  "  %c = stablehlo.constant dense<2> : tensor<ui32>\n"
                  "  %m = stablehlo.minimum %p, %c : tensor<ui32>\n"
                  "  check.expect_eq %m, %p : tensor<ui32>\n"
                  "  %0 = stablehlo.add %a, %p : tensor<ui32>\n"
                  "  return %0 : tensor<ui32>\n}\n",
                  o.b, o.n);
  if (le) {
    PJRT_Buffer *args[4], *outs[4] = {0};
    PJRT_Event *ev[4] = {0};
    uint32_t v = 7;
    for (int d = 0; d < 4; d++)
      args[d] = buffer_from_host(c, device_at(c, (size_t)d), PJRT_Buffer_Type_U32, NULL, 0, &v);
    exec_opts eo = {NULL, 0, NULL, 1};
    if (OK(execute_raw(le, args, 4, 1, outs, 1, ev, &eo))) {
      for (int d = 0; d < 4; d++) {
        PJRT_Error *e = event_wait_free(ev[d]);
        uint32_t got = 0;
        PJRT_Error *r = buffer_to_host(outs[d], &got, 4, NULL);
        if (d < 3) {
          CHECK_MSG(e == NULL && r == NULL, "partition %d failed", d);
          CHECK_EQ_INT(got, 7 + d);
        } else {
          CHECK_MSG(e != NULL && r != NULL, "partition 3's check should have failed");
        }
        err_free(e);
        err_free(r);
        buffer_free(outs[d]);
      }
    }
    for (int d = 0; d < 4; d++) buffer_free(args[d]);
    loaded_free(le);
  }

  /* GSPMD shardings (mhlo.sharding) on a program over global shapes: split and replicated ones
   * compile (the partitioner reads them; python/tests/jax/test_jax_sharding_gspmd.py checks the
   * values), one that does not fit its value is INVALID_ARGUMENT naming it. */
  static const char *const fine[] = {
      "{devices=[2]<=[2]}",
      "{devices=[2]0,1}",
      "{replicated}",
      "{devices=[1,2]0,1 last_tile_dim_replicate}",
  };
  compile_options(&o, 1, 2, NULL);
  for (size_t k = 0; k < COUNT(fine) + 1; k++) {
    const char *sh = k < COUNT(fine) ? fine[k] : "{devices=[2,1]0,1}";
    char text[512];
    snprintf(text, sizeof text,
             "func.func @main(%%a: tensor<8xf32> {mhlo.sharding = \"%s\"}) -> tensor<8xf32> {\n"
             "  %%0 = stablehlo.add %%a, %%a : tensor<8xf32>\n"
             "  return %%0 : tensor<8xf32>\n}\n",
             sh);
    PJRT_Error *e = compile_err(c, text, o.b, o.n, &le);
    if (k == COUNT(fine)) {
      ERR(e, INVALID_ARGUMENT, "cannot read the sharding {devices=[2,1]0,1}: 2 tile dims for a value of rank 1");
    } else if (OK(e)) {
      loaded_free(le);
    }
  }
  /* One partition: the sharding means nothing, it compiles. */
  {
    pb o1;
    compile_options(&o1, 1, 1, NULL);
    le = compile_ok(c,
                    "func.func @main(%a: tensor<8xf32> {mhlo.sharding = \"{devices=[2]<=[2]}\"})"
                    " -> tensor<8xf32> {\n"
                    "  return %a : tensor<8xf32>\n}\n",
                    o1.b, o1.n);
    loaded_free(le);
  }
  /* Shardy's spelling: a sharded argument returned as it is runs per device on its shard (the
   * per-device program takes and returns tensor<4xf32>); used by an op outside a manual
   * computation it is partitioned. (tests/collectives covers manual computations and the
   * partitioner's rules.) */
  le = compile_ok(c,
                  "module {\n"
                  "  sdy.mesh @mesh = <[\"x\"=2]>\n"
                  "  func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>})"
                  " -> tensor<8xf32> {\n"
                  "    return %a : tensor<8xf32>\n  }\n}\n",
                  o.b, o.n);
  loaded_free(le);
  le = compile_ok(c,
                  "module {\n"
                  "  sdy.mesh @mesh = <[\"x\"=2]>\n"
                  "  func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}]>})"
                  " -> tensor<8xf32> {\n"
                  "    %0 = stablehlo.add %a, %a : tensor<8xf32>\n"
                  "    return %0 : tensor<8xf32>\n  }\n}\n",
                  o.b, o.n); /* partitioned (src/compiler/spmd_partition.c) */
  loaded_free(le);
  le = compile_ok(c,
                  "module {\n"
                  "  sdy.mesh @mesh = <[\"x\"=2]>\n"
                  "  func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>})"
                  " -> tensor<8xf32> {\n"
                  "    return %a : tensor<8xf32>\n  }\n}\n",
                  o.b, o.n);
  loaded_free(le);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* execute_device on multi-device executables: one call per device (torch_xla's way)         */

/* Executes device `dev`'s share with `launch_id`: *out gets the output, *ev its event. */
static PJRT_Error *execute_share(PJRT_LoadedExecutable *le, PJRT_Device *dev, PJRT_Buffer *arg,
                                 int launch_id, PJRT_Buffer **out, PJRT_Event **ev) {
  PJRT_Buffer *const *arg_lists[1] = {&arg};
  PJRT_Buffer **out_lists[1] = {out};
  PJRT_ExecuteOptions o;
  memset(&o, 0, sizeof o);
  o.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  o.launch_id = launch_id;
  ARGS(PJRT_LoadedExecutable_Execute, a);
  a.executable = le;
  a.options = &o;
  a.argument_lists = arg_lists;
  a.num_devices = 1;
  a.num_args = 1;
  a.output_lists = out_lists;
  a.device_complete_events = ev;
  a.execute_device = dev;
  return api->PJRT_LoadedExecutable_Execute(&a);
}

/* all_reduce(add) over both replicas of tensor<4xf32>, plus the replica id (so that a share
 * run as the wrong replica, or paired with the wrong step, shows). */
static const char kAllReduce2[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %s = \"stablehlo.all_reduce\"(%x) ({\n"
    "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    "    %t = stablehlo.add %a, %b : tensor<f32>\n"
    "    stablehlo.return %t : tensor<f32>\n"
    "  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>\n"
    "  %r = stablehlo.replica_id : tensor<ui32>\n"
    "  %f = stablehlo.convert %r : (tensor<ui32>) -> tensor<f32>\n"
    "  %k = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>\n"
    "  %0 = stablehlo.add %s, %k : tensor<4xf32>\n"
    "  return %0 : tensor<4xf32>\n}\n";

typedef struct share_worker {
  PJRT_Client *c;
  PJRT_LoadedExecutable *le;
  PJRT_Device *dev;
  int index, steps, launch_id;
  float got[8][4];
  int failed; /* errors seen (printed) */
} share_worker;

/* One thread per device, as torch_xla runs replicas: `steps` executions, each waited for. */
static void *share_main(void *p) {
  share_worker *w = p;
  for (int s = 0; s < w->steps; s++) {
    float x[4];
    for (int i = 0; i < 4; i++) x[i] = (float)(100 * s + 10 * w->index + i);
    PJRT_Buffer *arg = f32_vec(w->c, w->dev, 4, x), *out = NULL;
    PJRT_Event *ev = NULL;
    PJRT_Error *e = execute_share(w->le, w->dev, arg, w->launch_id, &out, &ev);
    if (!e) e = event_wait_free(ev);
    if (!e) e = read_f32(out, w->got[s], 4);
    if (e) {
      fprintf(stderr, "share %d step %d: %s\n", w->index, s, err_msg(e));
      err_free(e);
      w->failed++;
    }
    if (out) {
      ARGS(PJRT_Buffer_Destroy, d);
      d.buffer = out;
      err_free(api->PJRT_Buffer_Destroy(&d));
    }
    ARGS(PJRT_Buffer_Destroy, d);
    d.buffer = arg;
    err_free(api->PJRT_Buffer_Destroy(&d));
  }
  return NULL;
}

static void test_execute_device_shares(void) {
  PJRT_Client *c = client_create_n(4);
  /* replica 0 on device 1, replica 1 on device 0 */
  int64_t ids[2] = {1, 0};
  pb o;
  compile_options(&o, 2, 1, ids);

  /* Without collectives each share runs on its own, as the replica its device is. */
  PJRT_LoadedExecutable *le = compile_ok(c, kReplicaAdd, o.b, o.n);
  if (le) {
    float x[4] = {1, 2, 3, 4}, got[4];
    for (int k = 0; k < 2; k++) {
      PJRT_Device *dev = device_at(c, (size_t)k);
      PJRT_Buffer *arg = f32_vec(c, dev, 4, x), *out = NULL;
      PJRT_Event *ev = NULL;
      if (OK(execute_share(le, dev, arg, 0, &out, &ev)) && OK(event_wait_free(ev)) &&
          OK(read_f32(out, got, 4)))
        for (int i = 0; i < 4; i++) CHECK(got[i] == x[i] + (k == 0 ? 10 : 0));
      buffer_free(out);
      /* device 2 is not in the assignment */
      out = NULL;
      ERR(execute_share(le, device_at(c, 2), arg, 0, &out, NULL), INVALID_ARGUMENT,
          "execute_device is device 2, which is not in the executable's device assignment");
      buffer_free(arg);
    }
    loaded_free(le);
  }

  /* With an all_reduce: two threads, one per device, each running its share of the same
   * steps; the shares of a step meet (launch_id 7, and 0: steps pair in order). */
  le = compile_ok(c, kAllReduce2, o.b, o.n);
  for (int pass = 0; le && pass < 2; pass++) {
    enum { STEPS = 4 };
    share_worker w[2];
    pthread_t t[2];
    for (int k = 0; k < 2; k++) {
      memset(&w[k], 0, sizeof w[k]);
      w[k] = (share_worker){c, le, device_at(c, (size_t)k), k, STEPS, pass ? 0 : 7, {{0}}, 0};
      CHECK(pthread_create(&t[k], NULL, share_main, &w[k]) == 0);
    }
    for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    for (int k = 0; k < 2; k++) {
      CHECK_EQ_INT(w[k].failed, 0);
      float replica = k == 0 ? 1.0f : 0.0f; /* device 0 runs replica 1 */
      for (int s = 0; s < STEPS; s++)
        for (int i = 0; i < 4; i++) {
          float want = (float)(200 * s + 10 + 2 * i) + replica;
          CHECK_MSG(w[k].got[s][i] == want, "device %d step %d [%d]: %g, want %g", k, s, i,
                    (double)w[k].got[s][i], (double)want);
        }
    }
  }

  /* One thread calling for both devices in turn: the first share waits (off the calling
   * thread) for the second. */
  if (le) {
    float x0[4] = {1, 2, 3, 4}, x1[4] = {10, 20, 30, 40}, got[4];
    PJRT_Buffer *a0 = f32_vec(c, device_at(c, 0), 4, x0), *a1 = f32_vec(c, device_at(c, 1), 4, x1);
    PJRT_Buffer *o0 = NULL, *o1 = NULL;
    PJRT_Event *e0 = NULL, *e1 = NULL;
    if (OK(execute_share(le, device_at(c, 0), a0, 3, &o0, &e0)) &&
        OK(execute_share(le, device_at(c, 1), a1, 3, &o1, &e1))) {
      OK(event_wait_free(e0));
      OK(event_wait_free(e1));
      OK(read_f32(o0, got, 4));
      for (int i = 0; i < 4; i++) CHECK(got[i] == x0[i] + x1[i] + 1);
      OK(read_f32(o1, got, 4));
      for (int i = 0; i < 4; i++) CHECK(got[i] == x0[i] + x1[i]);
    }
    buffer_free(o0);
    buffer_free(o1);

    /* Two launches queued by device 0 before device 1 comes: the n-th calls pair. */
    {
      float y0[4] = {1000, 2000, 3000, 4000}, y1[4] = {5000, 6000, 7000, 8000};
      PJRT_Buffer *b0[2] = {a0, f32_vec(c, device_at(c, 0), 4, x1)};
      PJRT_Buffer *b1[2] = {f32_vec(c, device_at(c, 1), 4, y0), f32_vec(c, device_at(c, 1), 4, y1)};
      PJRT_Buffer *q[4] = {0};
      PJRT_Event *ev[4] = {0};
      int ok = 1;
      for (int k = 0; k < 2 && ok; k++)
        ok = OK(execute_share(le, device_at(c, 0), b0[k], 0, &q[k], &ev[k]));
      for (int k = 0; k < 2 && ok; k++)
        ok = OK(execute_share(le, device_at(c, 1), b1[k], 0, &q[2 + k], &ev[2 + k]));
      for (int k = 0; ok && k < 4; k++) OK(event_wait_free(ev[k]));
      /* launch 0: x0 + y0, launch 1: x1 + y1; device 0 is replica 1 */
      for (int k = 0; ok && k < 4; k++) {
        OK(read_f32(q[k], got, 4));
        const float *dx = k % 2 ? x1 : x0, *dy = k % 2 ? y1 : y0;
        float rep = k < 2 ? 1.0f : 0.0f;
        for (int i = 0; i < 4; i++) CHECK(got[i] == dx[i] + dy[i] + rep);
      }
      for (int k = 0; k < 4; k++) buffer_free(q[k]);
      buffer_free(b0[1]);
      buffer_free(b1[0]);
      buffer_free(b1[1]);
    }

    /* A peer that never comes: a clear error within the (here short) wait, no hang. */
    setenv("CJRT_COLLECTIVE_TIMEOUT_MS", "200", 1);
    o0 = NULL;
    e0 = NULL;
    if (OK(execute_share(le, device_at(c, 0), a0, 5, &o0, &e0))) {
      ERR(event_wait_free(e0), DEADLINE_EXCEEDED,
          "device 0 waited 200 ms but device 1 (replica 0, partition 0) never executed it");
      float junk[4];
      ERR(read_f32(o0, junk, 4), DEADLINE_EXCEEDED, "launch_id 5");
    }
    buffer_free(o0);
    unsetenv("CJRT_COLLECTIVE_TIMEOUT_MS");

    /* A peer whose argument is an error: the other share fails too instead of waiting. */
    pending p = pending_f32(c, device_at(c, 1), 4);
    o0 = o1 = NULL;
    e0 = e1 = NULL;
    if (OK(execute_share(le, device_at(c, 0), a0, 9, &o0, &e0)) &&
        OK(execute_share(le, device_at(c, 1), p.buffer, 9, &o1, &e1))) {
      pending_fail(&p, "no data for you");
      ERR(event_wait_free(e1), DATA_LOSS, "no data for you");
      ERR(event_wait_free(e0), DATA_LOSS, "failed before running its share");
    } else if (p.tm) {
      pending_fail(&p, "unused");
    }
    buffer_free(o0);
    buffer_free(o1);
    buffer_free(p.buffer);
    /* and the next launch pairs as usual */
    o0 = o1 = NULL;
    if (OK(execute_share(le, device_at(c, 0), a0, 9, &o0, &e0)) &&
        OK(execute_share(le, device_at(c, 1), a1, 9, &o1, &e1))) {
      OK(event_wait_free(e0));
      OK(event_wait_free(e1));
      OK(read_f32(o1, got, 4));
      for (int i = 0; i < 4; i++) CHECK(got[i] == x0[i] + x1[i]);
    }
    buffer_free(o0);
    buffer_free(o1);
    buffer_free(a0);
    buffer_free(a1);
  }
  loaded_free(le); /* the group device 1 never joined goes with it */
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Serialization, PJRT_Compile, PJRT_Client_Load                                               */

static void serialize(PJRT_LoadedExecutable *le, unsigned char **out, size_t *len) {
  *out = NULL;
  *len = 0;
  PJRT_Executable *e = get_executable(le);
  ARGS(PJRT_Executable_Serialize, s);
  s.executable = e;
  if (OK(api->PJRT_Executable_Serialize(&s))) {
    *out = malloc(s.serialized_bytes_size);
    memcpy(*out, s.serialized_bytes, s.serialized_bytes_size);
    *len = s.serialized_bytes_size;
    s.serialized_executable_deleter(s.serialized_executable);
  }
  executable_free(e);
}

static PJRT_Error *deserialize(PJRT_Client *c, const void *bytes, size_t len, const void *ov,
                               size_t ov_len, PJRT_LoadedExecutable **out) {
  ARGS(PJRT_Executable_DeserializeAndLoad, d);
  d.client = c;
  d.serialized_executable = bytes;
  d.serialized_executable_size = len;
  d.overridden_serialized_compile_options = ov;
  d.overridden_serialized_compile_options_size = ov_len;
  *out = NULL;
  PJRT_Error *e = api->PJRT_Executable_DeserializeAndLoad(&d);
  if (!e) *out = d.loaded_executable;
  return e;
}

static void check_add_runs(PJRT_Client *c, PJRT_LoadedExecutable *le, PJRT_Device *d) {
  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, want[4] = {11, 22, 33, 44}, got[4];
  PJRT_Buffer *args[2] = {f32_vec(c, d, 4, x), f32_vec(c, d, 4, y)};
  PJRT_Buffer *out = NULL;
  if (OK(execute_raw(le, args, 1, 2, &out, 1, NULL, NULL))) {
    OK(read_f32(out, got, 4));
    CHECK(floats_equal(got, want, 4));
    buffer_free(out);
  }
  buffer_free(args[0]);
  buffer_free(args[1]);
}

static void test_serialization(void) {
  PJRT_Client *c = client_create_n(4);
  int64_t ids[1] = {2};
  pb o;
  compile_options(&o, 1, 1, ids);
  PJRT_LoadedExecutable *le = compile_ok(c, kAdd, o.b, o.n);
  if (!le) {
    client_free(c);
    return;
  }
  unsigned char *bytes;
  size_t len;
  serialize(le, &bytes, &len);
  CHECK(bytes != NULL && len > 16);
  if (!bytes) {
    loaded_free(le);
    client_free(c);
    return;
  }
  /* Round trip: same fingerprint, options, assignment, results. */
  PJRT_LoadedExecutable *back;
  if (OK(deserialize(c, bytes, len, NULL, 0, &back))) {
    ARGS(PJRT_LoadedExecutable_Fingerprint, f1);
    ARGS(PJRT_LoadedExecutable_Fingerprint, f2);
    f1.executable = le;
    f2.executable = back;
    if (OK(api->PJRT_LoadedExecutable_Fingerprint(&f1)) &&
        OK(api->PJRT_LoadedExecutable_Fingerprint(&f2)))
      CHECK(f1.executable_fingerprint_size == f2.executable_fingerprint_size &&
            !memcmp(f1.executable_fingerprint, f2.executable_fingerprint,
                    f1.executable_fingerprint_size));
    PJRT_Executable *e = get_executable(back);
    ARGS(PJRT_Executable_GetCompileOptions, gc);
    gc.executable = e;
    if (OK(api->PJRT_Executable_GetCompileOptions(&gc))) {
      CHECK(gc.serialized_bytes_size == o.n && !memcmp(gc.serialized_bytes, o.b, o.n));
      gc.serialized_compile_options_deleter(gc.serialized_compile_options);
    }
    executable_free(e);
    ARGS(PJRT_LoadedExecutable_AddressableDevices, ad);
    ad.executable = back;
    if (OK(api->PJRT_LoadedExecutable_AddressableDevices(&ad)))
      CHECK(ad.num_addressable_devices == 1 && ad.addressable_devices[0] == device_at(c, 2));
    check_add_runs(c, back, device_at(c, 2));
    loaded_free(back);
  }
  /* In another client (a fresh "process" for the cache): works the same. */
  PJRT_Client *c2 = client_create_n(3);
  if (OK(deserialize(c2, bytes, len, NULL, 0, &back))) {
    check_add_runs(c2, back, device_at(c2, 2));
    loaded_free(back);
  }
  /* A client too small for the stored assignment fails cleanly. */
  PJRT_Client *c1 = client_create_n(1);
  ERR(deserialize(c1, bytes, len, NULL, 0, &back), INVALID_ARGUMENT, "device 2");
  /* ... unless overridden options move it to a device it has. */
  int64_t ids0[1] = {0};
  pb o0;
  compile_options(&o0, 1, 1, ids0);
  if (OK(deserialize(c1, bytes, len, o0.b, o0.n, &back))) {
    check_add_runs(c1, back, device_at(c1, 0));
    PJRT_Executable *e = get_executable(back);
    ARGS(PJRT_Executable_GetCompileOptions, gc);
    gc.executable = e;
    if (OK(api->PJRT_Executable_GetCompileOptions(&gc))) {
      CHECK(gc.serialized_bytes_size == o0.n && !memcmp(gc.serialized_bytes, o0.b, o0.n));
      gc.serialized_compile_options_deleter(gc.serialized_compile_options);
    }
    executable_free(e);
    loaded_free(back);
  }
  /* Overridden options asking for another partition count are rejected clearly. */
  pb o2;
  compile_options(&o2, 1, 2, NULL);
  ERR(deserialize(c, bytes, len, o2.b, o2.n, &back), INVALID_ARGUMENT,
      "ask for 1 replicas x 2 partitions, but the executable was compiled for 1 x 1");
  static const unsigned char junk[] = {0xff, 0xff, 0xff};
  ERR(deserialize(c, bytes, len, junk, sizeof junk, &back), INVALID_ARGUMENT, "compile options");

  /* Corrupted bytes: every single-byte flip, truncations, garbage, empty. */
  int accepted = 0;
  for (size_t i = 0; i < len; i++) {
    bytes[i] ^= 0x5a;
    PJRT_Error *e = deserialize(c, bytes, len, NULL, 0, &back);
    if (!e) {
      accepted++;
      loaded_free(back);
    } else {
      if (err_code(e) != PJRT_Error_Code_INVALID_ARGUMENT) accepted++;
      err_free(e);
    }
    bytes[i] ^= 0x5a;
  }
  check_count++;
  if (accepted) {
    check_failures++;
    fprintf(stderr, "%d corrupted copies were not rejected with INVALID_ARGUMENT\n", accepted);
  }
  for (size_t n = 0; n < len; n += 1 + n / 4)
    ERR(deserialize(c, bytes, n, NULL, 0, &back), INVALID_ARGUMENT, NULL);
  ERR(deserialize(c, "not an executable at all, just text", 35, NULL, 0, &back), INVALID_ARGUMENT,
      "not a serialized cjrt executable");
  ERR(deserialize(c, NULL, 0, NULL, 0, &back), INVALID_ARGUMENT, NULL);
  free(bytes);
  loaded_free(le);

  /* PJRT_Compile (no client) + PJRT_Client_Load, with and without load options. */
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = (char *)kAdd;
  prog.code_size = strlen(kAdd);
  prog.format = "mlir";
  prog.format_size = 4;
  ARGS(PJRT_Compile, pc);
  pc.program = &prog;
  if (OK(api->PJRT_Compile(&pc))) {
    ARGS(PJRT_Client_Load, ld);
    ld.client = c1;
    ld.executable = pc.executable;
    if (OK(api->PJRT_Client_Load(&ld))) {
      check_add_runs(c1, ld.loaded_executable, device_at(c1, 0));
      loaded_free(ld.loaded_executable);
    }
    ld.client = c;
    ld.compile_options = (const char *)o.b; /* device 2 */
    ld.compile_options_size = o.n;
    if (OK(api->PJRT_Client_Load(&ld))) {
      check_add_runs(c, ld.loaded_executable, device_at(c, 2));
      loaded_free(ld.loaded_executable);
    }
    ld.client = c1;
    ERR(api->PJRT_Client_Load(&ld), INVALID_ARGUMENT, "device 2");
    ld.compile_options = (const char *)o2.b;
    ld.compile_options_size = o2.n;
    ERR(api->PJRT_Client_Load(&ld), INVALID_ARGUMENT, "compiled for 1 x 1");
    executable_free(pc.executable);
  }
  /* With a client, PJRT_Compile checks the assignment against it. */
  pb o9;
  int64_t ids9[1] = {9};
  compile_options(&o9, 1, 1, ids9);
  pc.client = c1;
  pc.compile_options = (const char *)o9.b;
  pc.compile_options_size = o9.n;
  ERR(api->PJRT_Compile(&pc), INVALID_ARGUMENT, "device 9");
  pc.client = NULL;
  prog.format = "hlo_text";
  prog.format_size = 8;
  ERR(api->PJRT_Compile(&pc), INVALID_ARGUMENT, "Unknown program format 'hlo_text'");
  client_free(c1);
  client_free(c2);
  client_free(c);
}

/* The reference backend (CJRT_BACKEND=reference) through the runtime's compile driver: a program
 * compiled without a client is for the backend this process's clients get (so it loads on them,
 * and not on a client of another backend), and the runtime's serialized form compiles again
 * through the reference backend's lower. */
static void test_reference_backend(void) {
  setenv("CJRT_BACKEND", "reference", 1);
  PJRT_Client *c = client_create_n(2);
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = (char *)kAdd;
  prog.code_size = strlen(kAdd);
  prog.format = "mlir";
  prog.format_size = 4;
  ARGS(PJRT_Compile, pc);
  pc.program = &prog;
  PJRT_Error *e = c ? api->PJRT_Compile(&pc) : NULL;
  unsetenv("CJRT_BACKEND");
  if (!c || !OK(e)) {
    client_free(c);
    return;
  }
  ARGS(PJRT_Client_Load, ld);
  ld.client = c;
  ld.executable = pc.executable;
  if (OK(api->PJRT_Client_Load(&ld))) {
    check_add_runs(c, ld.loaded_executable, device_at(c, 0));
    unsigned char *bytes;
    size_t len;
    serialize(ld.loaded_executable, &bytes, &len);
    PJRT_LoadedExecutable *back;
    if (bytes && OK(deserialize(c, bytes, len, NULL, 0, &back))) {
      check_add_runs(c, back, device_at(c, 0));
      loaded_free(back);
    }
    PJRT_Client *cpu = client_create_n(1);
    if (cpu && bytes)
      ERR(deserialize(cpu, bytes, len, NULL, 0, &back), INVALID_ARGUMENT,
          "serialized for backend 'reference', not 'cpu'");
    ld.client = cpu;
    if (cpu)
      ERR(api->PJRT_Client_Load(&ld), INVALID_ARGUMENT,
          "compiled for backend 'reference', the client runs 'cpu'");
    client_free(cpu);
    free(bytes);
    loaded_free(ld.loaded_executable);
  }
  executable_free(pc.executable);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Ahead of time: PJRT_Compile against a described topology, serialized, loaded elsewhere       */

static void test_aot_topology(void) {
  PJRT_NamedValue opt;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  opt.name = "cpu_device_count";
  opt.name_size = strlen(opt.name);
  opt.type = PJRT_NamedValue_kInt64;
  opt.int64_value = 4;
  opt.value_size = 1;
  ARGS(PJRT_TopologyDescription_Create, tc);
  tc.topology_name = "cpu";
  tc.topology_name_size = 3;
  tc.create_options = &opt;
  tc.num_options = 1;
  if (!OK(api->PJRT_TopologyDescription_Create(&tc))) return;
  PJRT_TopologyDescription *topo = tc.topology;

  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = (char *)kAdd;
  prog.code_size = strlen(kAdd);
  prog.format = "mlir";
  prog.format_size = 4;
  int64_t ids[1] = {2};
  pb o;
  compile_options(&o, 1, 1, ids);
  ARGS(PJRT_Compile, pc);
  pc.topology = topo;
  pc.program = &prog;
  pc.compile_options = (const char *)o.b;
  pc.compile_options_size = o.n;
  unsigned char *bytes = NULL;
  size_t len = 0;
  if (OK(api->PJRT_Compile(&pc))) {
    ARGS(PJRT_Executable_Serialize, s);
    s.executable = pc.executable;
    if (OK(api->PJRT_Executable_Serialize(&s))) {
      bytes = malloc(s.serialized_bytes_size);
      memcpy(bytes, s.serialized_bytes, s.serialized_bytes_size);
      len = s.serialized_bytes_size;
      s.serialized_executable_deleter(s.serialized_executable);
    }
    executable_free(pc.executable);
  }
  /* Assignments the topology cannot hold are refused at compile time. */
  int64_t ids9[1] = {9};
  pb o9;
  compile_options(&o9, 1, 1, ids9);
  pc.compile_options = (const char *)o9.b;
  pc.compile_options_size = o9.n;
  ERR(api->PJRT_Compile(&pc), INVALID_ARGUMENT, "names device 9, which the topology");
  pb o8;
  compile_options(&o8, 2, 4, NULL);
  pc.compile_options = (const char *)o8.b;
  pc.compile_options_size = o8.n;
  ERR(api->PJRT_Compile(&pc), INVALID_ARGUMENT, "the topology has only 4");
  pc.topology = (const PJRT_TopologyDescription *)&prog;
  ERR(api->PJRT_Compile(&pc), INVALID_ARGUMENT, "topology is not a live cjrt object");

  /* The topology may go before the executable is loaded. */
  ARGS(PJRT_TopologyDescription_Destroy, td);
  td.topology = topo;
  OK(api->PJRT_TopologyDescription_Destroy(&td));

  /* JAX's AOT path: the serialized executable, loaded on a client, runs on device 2. */
  PJRT_Client *c = client_create_n(4);
  PJRT_LoadedExecutable *le;
  CHECK(bytes != NULL);
  if (bytes && OK(deserialize(c, bytes, len, NULL, 0, &le))) {
    check_add_runs(c, le, device_at(c, 2));
    loaded_free(le);
  }
  free(bytes);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Alias buffers as arguments; PJRT_Device_PoisonExecution                                      */

static void test_alias_argument(void) {
  PJRT_Client *c = client_create_n(1);
  PJRT_LoadedExecutable *le = compile_ok(c, kAdd, NULL, 0);
  if (!le) {
    client_free(c);
    return;
  }
  PJRT_Device *d = device_at(c, 0);
  int64_t dims[1] = {4};
  ARGS(PJRT_Client_CreateAliasBuffer, a);
  a.client = c;
  a.memory = device_memory(d, "device");
  a.shape_dims = dims;
  a.shape_num_dims = 1;
  a.shape_element_type = PJRT_Buffer_Type_F32;
  if (OK(api->PJRT_Client_CreateAliasBuffer(&a))) {
    float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, want[4] = {11, 22, 33, 44}, got[4];
    PJRT_Buffer *yb = f32_vec(c, d, 4, y);
    PJRT_Buffer *args[2] = {a.alias_buffer, yb};
    PJRT_Buffer *out = NULL;
    PJRT_Event *done = NULL;
    exec_opts eo = {0};
    eo.want_events = 1;
    if (OK(execute_raw(le, args, 1, 2, &out, 1, &done, &eo))) {
      CHECK_EQ_INT(event_ready(done), 0); /* waits for the alias */
      PJRT_Buffer *xb = f32_vec(c, d, 4, x);
      ARGS(PJRT_Client_FulfillAliasBuffer, f);
      f.client = c;
      f.buffer = xb;
      f.fulfill_alias_buffer_cb = a.fulfill_alias_buffer_cb;
      OK(api->PJRT_Client_FulfillAliasBuffer(&f));
      OK(event_wait_free(done));
      OK(read_f32(out, got, 4));
      CHECK(floats_equal(got, want, 4));
      buffer_free(out);
      buffer_free(xb);
    }
    buffer_free(yb);
    buffer_free(a.alias_buffer);
  }
  loaded_free(le);
  client_free(c);
}

static PJRT_Error *poison(PJRT_Device *d, int32_t launch_id, PJRT_Error_Code code,
                          const char *msg, bool *poisoned) {
  ARGS(PJRT_Device_PoisonExecution, p);
  p.device = d;
  p.launch_id = launch_id;
  p.error_code = code;
  p.error_message = msg;
  p.error_message_size = msg ? strlen(msg) : 0;
  p.poisoned = true;
  PJRT_Error *e = api->PJRT_Device_PoisonExecution(&p);
  *poisoned = p.poisoned;
  return e;
}

static void test_poison_execution(void) {
  PJRT_Client *c = client_create_n(2);
  PJRT_LoadedExecutable *le = compile_ok(c, kAdd, NULL, 0);
  if (!le) {
    client_free(c);
    return;
  }
  PJRT_Device *d = device_at(c, 0);
  bool poisoned = true;
  /* Nothing running: nothing poisoned. */
  OK(poison(d, 0, PJRT_Error_Code_CANCELLED, "stop", &poisoned));
  CHECK(!poisoned);
  /* Two executions waiting for a pending argument: the earliest one is poisoned, the other runs. */
  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, want[4] = {11, 22, 33, 44}, got[4];
  pending p = pending_f32(c, d, 4);
  PJRT_Buffer *yb = f32_vec(c, d, 4, y);
  PJRT_Buffer *args[2] = {p.buffer, yb};
  PJRT_Buffer *out1 = NULL, *out2 = NULL;
  if (p.buffer && OK(execute_raw(le, args, 1, 2, &out1, 1, NULL, NULL)) &&
      OK(execute_raw(le, args, 1, 2, &out2, 1, NULL, NULL))) {
    OK(poison(d, 7, PJRT_Error_Code_CANCELLED, "stop", &poisoned)); /* another launch id */
    CHECK(!poisoned);
    OK(poison(device_at(c, 1), 0, PJRT_Error_Code_CANCELLED, "stop", &poisoned)); /* device */
    CHECK(!poisoned);
    OK(poison(d, 0, PJRT_Error_Code_CANCELLED, "stopped by the test", &poisoned));
    CHECK(poisoned);
    pending_fill(&p, x, 4);
    ERR(read_f32(out1, got, 4), CANCELLED, "stopped by the test");
    OK(read_f32(out2, got, 4));
    CHECK(floats_equal(got, want, 4));
    /* Both finished: nothing left to poison. */
    OK(poison(d, 0, PJRT_Error_Code_CANCELLED, "stop", &poisoned));
    CHECK(!poisoned);
  }
  if (p.tm) pending_fill(&p, x, 4);
  buffer_free(out1);
  buffer_free(out2);
  buffer_free(p.buffer);
  buffer_free(yb);
  /* Misuse. */
  ERR(poison(d, 0, PJRT_Error_Code_OK, NULL, &poisoned), INVALID_ARGUMENT, "error_code is OK");
  ERR(poison(NULL, 0, PJRT_Error_Code_ABORTED, NULL, &poisoned), INVALID_ARGUMENT,
      "device is NULL");
  ARGS(PJRT_Device_PoisonExecution, pe);
  pe.device = d;
  pe.error_code = PJRT_Error_Code_ABORTED;
  pe.error_message_size = 3;
  ERR(api->PJRT_Device_PoisonExecution(&pe), INVALID_ARGUMENT, "error_message is NULL");
  loaded_free(le);
  client_free(c);
}

/* ------------------------------------------------------------------------------------------ */
/* Threads and lifetimes                                                                       */

typedef struct worker_arg {
  PJRT_Client *c;
  PJRT_LoadedExecutable *le;
  int id, iters, bad;
} worker_arg;

static void *worker_main(void *p) {
  worker_arg *w = p;
  int64_t d4 = 4;
  for (int it = 0; it < w->iters; it++) {
    float x[4], y[4], got[4];
    for (int i = 0; i < 4; i++) {
      x[i] = (float)(w->id * 1000 + it);
      y[i] = (float)i;
    }
    PJRT_Buffer *args[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
      ARGS(PJRT_Client_BufferFromHostBuffer, a);
      a.client = w->c;
      a.data = k ? y : x;
      a.type = PJRT_Buffer_Type_F32;
      a.dims = &d4;
      a.num_dims = 1;
      a.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
      ARGS(PJRT_Client_AddressableDevices, ad);
      ad.client = w->c;
      PJRT_Error *e = api->PJRT_Client_AddressableDevices(&ad);
      if (e) {
        err_free(e);
        w->bad++;
        continue;
      }
      a.device = ad.addressable_devices[w->id % ad.num_addressable_devices];
      e = api->PJRT_Client_BufferFromHostBuffer(&a);
      if (e) {
        err_free(e);
        w->bad++;
        continue;
      }
      err_free(event_wait_free(a.done_with_host_buffer));
      args[k] = a.buffer;
    }
    PJRT_Buffer *out = NULL;
    exec_opts eo = {NULL, 0, NULL, 0};
    ARGS(PJRT_Buffer_Device, bd);
    bd.buffer = args[0];
    PJRT_Error *e = api->PJRT_Buffer_Device(&bd);
    if (e) {
      err_free(e);
      w->bad++;
    } else {
      eo.execute_device = bd.device;
      e = execute_raw(w->le, args, 1, 2, &out, 1, NULL, &eo);
      if (e) {
        err_free(e);
        w->bad++;
      } else {
        e = read_f32(out, got, 4);
        if (e) {
          err_free(e);
          w->bad++;
        } else {
          for (int i = 0; i < 4; i++)
            if (got[i] != x[i] + y[i]) w->bad++;
        }
      }
    }
    for (int k = 0; k < 2; k++)
      if (args[k]) {
        ARGS(PJRT_Buffer_Destroy, d);
        d.buffer = args[k];
        err_free(api->PJRT_Buffer_Destroy(&d));
      }
    if (out) {
      ARGS(PJRT_Buffer_Destroy, d);
      d.buffer = out;
      err_free(api->PJRT_Buffer_Destroy(&d));
    }
  }
  return NULL;
}

static void test_threads(void) {
  PJRT_Client *c = client_create_n(4);
  PJRT_LoadedExecutable *le = compile_ok(c, kAdd, NULL, 0);
  if (!le) {
    client_free(c);
    return;
  }
  enum { N = 6 };
  pthread_t t[N];
  worker_arg w[N];
  for (int i = 0; i < N; i++) {
    w[i] = (worker_arg){c, le, i, 60, 0};
    CHECK(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0);
  }
  int bad = 0;
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    bad += w[i].bad;
  }
  CHECK_EQ_INT(bad, 0);
  loaded_free(le);
  client_free(c);
}

/* Everything handed out may be destroyed while executions are pending; they still finish (on
 * the client's own threads, which then free the client) and their events still fire. */
static void test_outlive_client(void) {
  PJRT_Client *c = client_create_n(2);
  PJRT_Device *d0 = device_at(c, 0);
  PJRT_LoadedExecutable *le = compile_ok(c, kAdd, NULL, 0);
  if (!le) {
    client_free(c);
    return;
  }
  float x[4] = {1, 2, 3, 4};
  pending p = pending_f32(c, d0, 4);
  PJRT_Buffer *args[2] = {p.buffer, p.buffer};
  PJRT_Buffer *outs[3] = {NULL, NULL, NULL};
  PJRT_Event *ev[3] = {NULL, NULL, NULL};
  exec_opts eo = {NULL, 0, NULL, 1};
  cb_state s = {0};
  for (int k = 0; k < 3; k++) {
    if (OK(execute_raw(le, args, 1, 2, &outs[k], 1, &ev[k], &eo))) on_ready(ev[k], &s);
  }
  /* keep one output and one event; drop everything else, client included */
  PJRT_Event *keep_ev = ev[0];
  PJRT_Buffer *keep_out = outs[0];
  for (int k = 1; k < 3; k++) {
    event_free(ev[k]);
    buffer_free(outs[k]);
  }
  loaded_free(le);
  buffer_free(p.buffer);
  client_free(c);
  pending_fill(&p, x, 4);
  OK(event_wait_free(keep_ev));
  float got[4];
  OK(read_f32(keep_out, got, 4));
  CHECK(got[0] == 2 && got[3] == 8);
  for (int i = 0; i < 400 && atomic_load(&s.calls) < 3; i++) sleep_ms(5);
  CHECK_EQ_INT(atomic_load(&s.calls), 3);
  CHECK_EQ_INT(atomic_load(&s.errors), 0);
  buffer_free(keep_out); /* the last reference: the client goes now */

  /* Outputs dropped before the work is done, the client last of all on a pool thread. */
  c = client_create_n(1);
  le = compile_ok(c, kAdd, NULL, 0);
  p = pending_f32(c, device_at(c, 0), 4);
  args[0] = args[1] = p.buffer;
  if (le && OK(execute_raw(le, args, 1, 2, outs, 1, NULL, NULL))) buffer_free(outs[0]);
  loaded_free(le);
  buffer_free(p.buffer);
  client_free(c);
  pending_fill(&p, x, 4); /* the execution runs and frees the client from its own thread */
  sleep_ms(50);
}

static void run_all(void);

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s <plugin.so> [fingerprint]\n", argv[0]);
    return 2;
  }
  plugin_path = argv[1];
  void *h = plugin_open(argv[1]);
  if (!h) return 1;
  if (argc > 2 && !strcmp(argv[2], "fingerprint")) {
    int rc = print_fingerprint();
    dlclose(h);
    return rc;
  }
  run_all();
  CHECK(dlclose(h) == 0);
  /* Load again: compile and execute work after a dlclose. */
  h = plugin_open(argv[1]);
  CHECK(h != NULL);
  if (h) {
    test_execute_basic();
    CHECK(dlclose(h) == 0);
  }
  return check_report("pjrt_exec");
}

static void run_all(void) {
  test_compile_errors();
  test_executable_slots();
  test_fingerprint_across_processes();
  test_execute_basic();
  test_unaligned_views();
  test_execute_shapes();
  test_async();
  test_async_loop();
  test_inflight_bound();
  test_donation();
  test_multi_device();
  test_execute_device_shares();
  test_serialization();
  test_aot_topology();
  test_reference_backend();
  test_alias_argument();
  test_poison_execution();
  test_threads();
  test_outlive_client();
}
