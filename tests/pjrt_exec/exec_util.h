/* cjrt tests: helpers for compiling and executing through the PJRT C API only (on top of
 * tests/pjrt/pjrt_test_util.h). Included by one test file; everything is static. */
#ifndef CJ_TESTS_EXEC_UTIL_H
#define CJ_TESTS_EXEC_UTIL_H

#include "../pjrt/pjrt_test_util.h"

/* ---- a tiny protobuf writer for xla.CompileOptionsProto ---- */

typedef struct pb {
  unsigned char b[4096];
  size_t n;
} pb;

static void pb_varint(pb *p, uint64_t v) {
  do {
    unsigned char c = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) c |= 0x80;
    if (p->n < sizeof p->b) p->b[p->n++] = c;
  } while (v);
}
static void pb_key(pb *p, int field, int wt) { pb_varint(p, ((uint64_t)field << 3) | (uint64_t)wt); }
static void pb_sub(pb *p, int field, const pb *sub) {
  pb_key(p, field, 2);
  pb_varint(p, sub->n);
  for (size_t i = 0; i < sub->n && p->n < sizeof p->b; i++) p->b[p->n++] = sub->b[i];
}

/* CompileOptionsProto{executable_build_options{num_replicas, num_partitions, spmd,
 * device_assignment (ids replica-major, NULL = none)}}. */
static void compile_options(pb *out, int nr, int np, const int64_t *ids) {
  pb eb = {{0}, 0};
  pb_key(&eb, 4, 0);
  pb_varint(&eb, (uint64_t)nr);
  pb_key(&eb, 5, 0);
  pb_varint(&eb, (uint64_t)np);
  pb_key(&eb, 6, 0);
  pb_varint(&eb, 1);
  if (ids) {
    pb da = {{0}, 0};
    pb_key(&da, 1, 0);
    pb_varint(&da, (uint64_t)nr);
    pb_key(&da, 2, 0);
    pb_varint(&da, (uint64_t)np);
    for (int p = 0; p < np; p++) {
      pb cd = {{0}, 0}, packed = {{0}, 0};
      for (int r = 0; r < nr; r++) pb_varint(&packed, (uint64_t)ids[r * np + p]);
      pb_sub(&cd, 1, &packed);
      pb_sub(&da, 3, &cd);
    }
    pb_sub(&eb, 9, &da);
  }
  out->n = 0;
  pb_sub(out, 3, &eb);
}

/* ---- compiling ---- */

/* Compiles MLIR text; returns the error (caller frees) or NULL with *out set. */
static PJRT_Error *compile_err(PJRT_Client *c, const char *text, const void *opts, size_t opts_len,
                               PJRT_LoadedExecutable **out) {
  *out = NULL;
  PJRT_Program prog;
  memset(&prog, 0, sizeof prog);
  prog.struct_size = PJRT_Program_STRUCT_SIZE;
  prog.code = (char *)text;
  prog.code_size = strlen(text);
  prog.format = "mlir";
  prog.format_size = 4;
  ARGS(PJRT_Client_Compile, a);
  a.client = c;
  a.program = &prog;
  a.compile_options = opts;
  a.compile_options_size = opts_len;
  PJRT_Error *e = api->PJRT_Client_Compile(&a);
  if (!e) *out = a.executable;
  return e;
}

/* Compiles or counts a failed check (NULL). */
static PJRT_LoadedExecutable *compile_ok(PJRT_Client *c, const char *text, const void *opts,
                                         size_t opts_len) {
  PJRT_LoadedExecutable *le;
  if (!OK(compile_err(c, text, opts, opts_len, &le))) return NULL;
  return le;
}

static void loaded_free(PJRT_LoadedExecutable *le) {
  if (!le) return;
  ARGS(PJRT_LoadedExecutable_Destroy, a);
  a.executable = le;
  OK(api->PJRT_LoadedExecutable_Destroy(&a));
}

static PJRT_Executable *get_executable(PJRT_LoadedExecutable *le) {
  ARGS(PJRT_LoadedExecutable_GetExecutable, a);
  a.loaded_executable = le;
  if (!OK(api->PJRT_LoadedExecutable_GetExecutable(&a))) return NULL;
  return a.executable;
}

static void executable_free(PJRT_Executable *e) {
  if (!e) return;
  ARGS(PJRT_Executable_Destroy, a);
  a.executable = e;
  OK(api->PJRT_Executable_Destroy(&a));
}

static size_t num_outputs(PJRT_LoadedExecutable *le) {
  PJRT_Executable *e = get_executable(le);
  ARGS(PJRT_Executable_NumOutputs, a);
  a.executable = e;
  size_t n = OK(api->PJRT_Executable_NumOutputs(&a)) ? a.num_outputs : 0;
  executable_free(e);
  return n;
}

/* ---- executing ---- */

typedef struct exec_opts {
  const int64_t *non_donatable;
  size_t num_non_donatable;
  PJRT_Device *execute_device;
  int want_events;
} exec_opts;

/* Executes with args[d * nargs + i]; outputs go to outs[d * nout + j] (nout = NumOutputs),
 * events[d] when opts->want_events. Returns Execute's error. Counts no checks (thread-safe). */
static PJRT_Error *execute_raw(PJRT_LoadedExecutable *le, PJRT_Buffer *const *args, size_t ndev,
                               size_t nargs, PJRT_Buffer **outs, size_t nout, PJRT_Event **events,
                               const exec_opts *eo) {
  PJRT_Buffer *const *arg_lists[64];
  PJRT_Buffer **out_lists[64];
  if (ndev > 64) ndev = 64;
  for (size_t d = 0; d < ndev; d++) {
    arg_lists[d] = args + d * nargs;
    out_lists[d] = outs + d * nout;
  }
  PJRT_ExecuteOptions o;
  memset(&o, 0, sizeof o);
  o.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  if (eo) {
    o.non_donatable_input_indices = eo->non_donatable;
    o.num_non_donatable_input_indices = eo->num_non_donatable;
  }
  ARGS(PJRT_LoadedExecutable_Execute, a);
  a.executable = le;
  a.options = &o;
  a.argument_lists = arg_lists;
  a.num_devices = ndev;
  a.num_args = nargs;
  a.output_lists = out_lists;
  a.device_complete_events = eo && eo->want_events ? events : NULL;
  a.execute_device = eo ? eo->execute_device : NULL;
  return api->PJRT_LoadedExecutable_Execute(&a);
}

/* ---- data ---- */

static PJRT_Buffer *f32_buffer(PJRT_Client *c, PJRT_Device *d, const int64_t *dims, size_t rank,
                               const float *data) {
  return buffer_from_host(c, d, PJRT_Buffer_Type_F32, dims, rank, data);
}

static PJRT_Buffer *f32_vec(PJRT_Client *c, PJRT_Device *d, size_t n, const float *data) {
  int64_t dim = (int64_t)n;
  return f32_buffer(c, d, &dim, 1, data);
}

/* Reads n floats; returns the error (caller frees). */
static PJRT_Error *read_f32(PJRT_Buffer *b, float *out, size_t n) {
  return buffer_to_host(b, out, n * sizeof(float), NULL);
}

static int floats_equal(const float *a, const float *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

static uintptr_t buffer_pointer(PJRT_Buffer *b) {
  ARGS(PJRT_Buffer_UnsafePointer, a);
  a.buffer = b;
  PJRT_Error *e = api->PJRT_Buffer_UnsafePointer(&a);
  if (e) {
    err_free(e);
    return 0;
  }
  return a.buffer_pointer;
}

/* ---- pending buffers through a transfer manager (pending_f32, pending_fill: pjrt_test_util.h) ---- */

/* Completes the pending buffer with an error and frees the manager. */
static void pending_fail(pending *p, const char *msg) {
  ARGS(PJRT_AsyncHostToDeviceTransferManager_SetBufferError, s);
  s.transfer_manager = p->tm;
  s.buffer_index = 0;
  s.error_code = PJRT_Error_Code_DATA_LOSS;
  s.error_message = msg;
  s.error_message_size = strlen(msg);
  OK(api->PJRT_AsyncHostToDeviceTransferManager_SetBufferError(&s));
  ARGS(PJRT_AsyncHostToDeviceTransferManager_Destroy, d);
  d.transfer_manager = p->tm;
  OK(api->PJRT_AsyncHostToDeviceTransferManager_Destroy(&d));
  p->tm = NULL;
}

static PJRT_Event *ready_event(PJRT_Buffer *b) {
  ARGS(PJRT_Buffer_ReadyEvent, a);
  a.buffer = b;
  if (!OK(api->PJRT_Buffer_ReadyEvent(&a))) return NULL;
  return a.event;
}

#endif
