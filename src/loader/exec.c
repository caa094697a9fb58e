/* libcjrt: compiling programs and executing them. */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "loader/loader.h"

/* ---- xla.CompileOptionsProto, written by hand (field numbers from the proto) ----
 * CompileOptionsProto { argument_layouts = 1 (repeated ShapeProto), executable_build_options = 3 }
 * ShapeProto { element_type = 2 (xla::PrimitiveType), dimensions = 3 (packed),
 *   layout = 5: LayoutProto { minor_to_major = 1 (packed) } }
 * ExecutableBuildOptionsProto { device_ordinal = 1, num_replicas = 4, num_partitions = 5,
 *   use_spmd_partitioning = 6, device_assignment = 9 }
 * DeviceAssignmentProto { replica_count = 1, computation_count = 2,
 *   computation_devices = 3 { repeated int64 replica_device_ids = 1 (packed) } } */

typedef struct {
  uint8_t *p;
  size_t len, cap;
  bool failed;
} pb;

static void pb_byte(pb *b, uint8_t v) {
  if (b->failed) return;
  if (!cj_grow(&b->p, &b->cap, b->len + 1, 64)) {
    b->failed = true;
    return;
  }
  b->p[b->len++] = v;
}
static void pb_varint(pb *b, uint64_t v) {
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    pb_byte(b, c | (v ? 0x80 : 0));
  } while (v);
}
static void pb_tag(pb *b, int field, int wire) { pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire); }
static void pb_int(pb *b, int field, int64_t v) {
  pb_tag(b, field, 0);
  pb_varint(b, (uint64_t)v);
}
static void pb_bytes(pb *b, int field, const pb *inner) {
  pb_tag(b, field, 2);
  pb_varint(b, inner->len);
  for (size_t i = 0; i < inner->len; i++) pb_byte(b, inner->p[i]);
  if (inner->failed) b->failed = true;
}

static cjrt_error *compile_options_proto(const cjrt_compile_options *o, pb *out) {
  int64_t nr = o && o->num_replicas > 0 ? o->num_replicas : 1;
  int64_t np = o && o->num_partitions > 0 ? o->num_partitions : 1;
  if (nr > (1 << 20) || np > (1 << 20) || nr * np > (1 << 20))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "compile: %lld replicas x %lld partitions is too many",
                       (long long)nr, (long long)np);
  bool failed = false;
  for (size_t i = 0; o && o->argument_shapes && i < o->num_argument_shapes; i++) {
    const cjrt_arg_shape *a = &o->argument_shapes[i];
    int xt = cjrt__dtype_xla(a->dtype);
    if (!xt)
      return cjrt__error(CJRT_INVALID_ARGUMENT,
                         "compile: argument_shapes[%zu] has an element type XLA cannot name", i);
    if (a->rank && !a->dims)
      return cjrt__error(CJRT_INVALID_ARGUMENT, "compile: argument_shapes[%zu].dims is NULL", i);
    for (size_t k = 0; k < a->rank; k++)
      if (a->dims[k] < 0)
        return cjrt__error(CJRT_INVALID_ARGUMENT, "compile: argument_shapes[%zu] has dimension %zu "
                           "of size %lld", i, k, (long long)a->dims[k]);
    pb shape = {0}, dims = {0}, m2m = {0}, layout = {0};
    pb_int(&shape, 2, xt);
    for (size_t k = 0; k < a->rank; k++) pb_varint(&dims, (uint64_t)a->dims[k]);
    for (size_t k = a->rank; k-- > 0;) pb_varint(&m2m, (uint64_t)k); /* row-major */
    if (a->rank) pb_bytes(&shape, 3, &dims);
    if (a->rank) pb_bytes(&layout, 1, &m2m);
    pb_bytes(&shape, 5, &layout);
    pb_bytes(out, 1, &shape);
    failed = failed || shape.failed || dims.failed || m2m.failed || layout.failed;
    free(shape.p);
    free(dims.p);
    free(m2m.p);
    free(layout.p);
  }
  pb build = {0}, da = {0};
  pb_int(&build, 1, -1); /* device_ordinal: any */
  pb_int(&build, 4, nr);
  pb_int(&build, 5, np);
  if (o && o->use_spmd_partitioning) pb_int(&build, 6, 1);
  if (o && o->device_ids) {
    pb_int(&da, 1, nr);
    pb_int(&da, 2, np);
    for (int64_t p = 0; p < np; p++) {
      pb ids = {0}, comp = {0};
      for (int64_t r = 0; r < nr; r++) pb_varint(&ids, (uint64_t)o->device_ids[r * np + p]);
      pb_bytes(&comp, 1, &ids); /* packed repeated int64 */
      pb_bytes(&da, 3, &comp);
      free(ids.p);
      free(comp.p);
    }
    pb_bytes(&build, 9, &da);
  }
  pb_bytes(out, 3, &build);
  failed = failed || build.failed || da.failed || out->failed;
  free(build.p);
  free(da.p);
  return failed ? cjrt__oom() : NULL;
}

/* ---- executables ---- */

static void exe_destroy(cjrt_executable *e) {
  if (!e) return;
  if (e->raw) {
    PJRT_LoadedExecutable_Destroy_Args d = {
        .struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE, .executable = e->raw};
    cjrt_error_free(CJRT_PJRT(e->client->lib, PJRT_LoadedExecutable_Destroy, &d));
  }
  if (e->out_dims)
    for (size_t i = 0; i < e->num_outputs; i++) free(e->out_dims[i]);
  free(e->out_dims);
  free(e->out_ranks);
  free(e->out_dtypes);
  free(e->devices);
  free(e->name);
  free(e->fingerprint);
  cjrt__client_release(e->client);
  free(e);
}

/* Reads the name, outputs and devices of a freshly loaded executable. */
static cjrt_error *describe(cjrt_executable *e) {
  cjrt_lib *lib = e->client->lib;
  PJRT_LoadedExecutable_AddressableDevices_Args ad = {
      .struct_size = PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE, .executable = e->raw};
  CJRT_TRY(CJRT_PJRT(lib, PJRT_LoadedExecutable_AddressableDevices, &ad));
  CJRT_TRY(cjrt__client_map_devices(e->client, ad.addressable_devices,
                                     ad.num_addressable_devices,
                                     "the executable runs on a device the client does not list",
                                     &e->devices, &e->num_devices));
  PJRT_LoadedExecutable_GetExecutable_Args ge = {
      .struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE, .loaded_executable = e->raw};
  CJRT_TRY(CJRT_PJRT(lib, PJRT_LoadedExecutable_GetExecutable, &ge));
  PJRT_Executable *x = ge.executable;
  cjrt_error *err = NULL;
  PJRT_Executable_NumOutputs_Args no = {.struct_size = PJRT_Executable_NumOutputs_Args_STRUCT_SIZE,
                                        .executable = x};
  err = CJRT_PJRT(lib, PJRT_Executable_NumOutputs, &no);
  if (!err) {
    e->num_outputs = no.num_outputs;
    PJRT_Executable_Name_Args na = {.struct_size = PJRT_Executable_Name_Args_STRUCT_SIZE, .executable = x};
    cjrt_error *ne = CJRT_PJRT(lib, PJRT_Executable_Name, &na);
    e->name = cjrt__strndup(ne ? NULL : na.executable_name, ne ? 0 : na.executable_name_size);
    cjrt_error_free(ne);
    PJRT_Executable_Fingerprint_Args fa = {.struct_size = PJRT_Executable_Fingerprint_Args_STRUCT_SIZE,
                                           .executable = x};
    cjrt_error *fe = CJRT_PJRT(lib, PJRT_Executable_Fingerprint, &fa);
    if (!fe && fa.executable_fingerprint)
      e->fingerprint = cjrt__strndup(fa.executable_fingerprint, fa.executable_fingerprint_size);
    cjrt_error_free(fe);
    size_t n = e->num_outputs;
    e->out_ranks = malloc((n ? n : 1) * sizeof *e->out_ranks);
    e->out_dims = calloc(n ? n : 1, sizeof *e->out_dims);
    if (!e->name || !e->out_ranks || !e->out_dims) err = cjrt__oom();
    for (size_t i = 0; !err && i < n; i++) e->out_ranks[i] = -1;
    if (!err) {
      PJRT_Executable_OutputElementTypes_Args ta = {
          .struct_size = PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE, .executable = x};
      cjrt_error *te = CJRT_PJRT(lib, PJRT_Executable_OutputElementTypes, &ta);
      if (!te && ta.num_output_types == n && ta.output_types) {
        e->out_dtypes = malloc((n ? n : 1) * sizeof *e->out_dtypes);
        if (!e->out_dtypes) err = cjrt__oom();
        for (size_t i = 0; !err && i < n; i++) e->out_dtypes[i] = (cjrt_dtype)ta.output_types[i];
      }
      cjrt_error_free(te);
    }
    if (!err) {
      PJRT_Executable_OutputDimensions_Args da = {
          .struct_size = PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE, .executable = x};
      cjrt_error *de = CJRT_PJRT(lib, PJRT_Executable_OutputDimensions, &da);
      if (!de && da.num_outputs == n && da.dim_sizes) {
        size_t off = 0;
        for (size_t i = 0; !err && i < n; i++) {
          size_t r = da.dim_sizes[i];
          e->out_dims[i] = malloc((r ? r : 1) * sizeof(int64_t));
          if (!e->out_dims[i]) {
            err = cjrt__oom();
            break;
          }
          if (r) memcpy(e->out_dims[i], da.dims + off, r * sizeof(int64_t));
          e->out_ranks[i] = (int)r;
          off += r;
        }
      }
      cjrt_error_free(de);
    }
  }
  PJRT_Executable_Destroy_Args xd = {.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE,
                                     .executable = x};
  cjrt_error_free(CJRT_PJRT(lib, PJRT_Executable_Destroy, &xd));
  return err;
}

CJRT_API bool cjrt_is_mlir_bytecode(const void *code, size_t size) {
  return code && size >= 4 && memcmp(code, "ML\xEFR", 4) == 0;
}

CJRT_API cjrt_error *cjrt_compile(cjrt_client *c, const void *code, size_t size,
                                  const cjrt_compile_options *opts, cjrt_executable **out) {
  *out = NULL;
  if (!c) return cjrt__error(CJRT_INVALID_ARGUMENT, "compile: client is NULL");
  if (!code || !size) return cjrt__error(CJRT_INVALID_ARGUMENT, "compile: the program is empty");
  if (opts && opts->device_ids) {
    int64_t nr = opts->num_replicas > 0 ? opts->num_replicas : 1;
    int64_t np = opts->num_partitions > 0 ? opts->num_partitions : 1;
    for (int64_t i = 0; i < nr * np; i++)
      if (!cjrt_client_lookup_device(c, opts->device_ids[i]))
        return cjrt__error(CJRT_INVALID_ARGUMENT, "compile: there is no device with id %lld",
                           (long long)opts->device_ids[i]);
  }
  if (!(opts && opts->format) && !cjrt_is_mlir_bytecode(code, size)) {
    /* MLIR text: a C string's terminating NUL may come along; any other NUL means binary data */
    if (((const char *)code)[size - 1] == 0) size--;
    if (!size || memchr(code, 0, size))
      return cjrt__error(CJRT_INVALID_ARGUMENT,
                         "compile: the program is neither MLIR text nor MLIR bytecode (no "
                         "\"ML\\xEFR\" magic, and it holds NUL bytes)");
  }
  pb proto = {0};
  cjrt_error *err = compile_options_proto(opts, &proto);
  if (err) {
    free(proto.p);
    return err;
  }
  const char *format = opts && opts->format ? opts->format : "mlir";
  PJRT_Program prog = {.struct_size = PJRT_Program_STRUCT_SIZE,
                       .code = (char *)code,
                       .code_size = size,
                       .format = format,
                       .format_size = strlen(format)};
  PJRT_Client_Compile_Args a = {.struct_size = PJRT_Client_Compile_Args_STRUCT_SIZE,
                                .client = c->raw,
                                .program = &prog,
                                .compile_options = (const char *)proto.p,
                                .compile_options_size = proto.len};
  err = CJRT_PJRT(c->lib, PJRT_Client_Compile, &a);
  free(proto.p);
  if (err) return err;
  if (!a.executable) return cjrt__error(CJRT_INTERNAL, "PJRT_Client_Compile returned no executable");
  cjrt_executable *e = calloc(1, sizeof *e);
  if (!e) {
    PJRT_LoadedExecutable_Destroy_Args d = {
        .struct_size = PJRT_LoadedExecutable_Destroy_Args_STRUCT_SIZE, .executable = a.executable};
    cjrt_error_free(CJRT_PJRT(c->lib, PJRT_LoadedExecutable_Destroy, &d));
    return cjrt__oom();
  }
  e->client = cjrt__client_retain(c);
  e->raw = a.executable;
  err = describe(e);
  if (err) {
    exe_destroy(e);
    return err;
  }
  *out = e;
  return NULL;
}

CJRT_API cjrt_error *cjrt_compile_text(cjrt_client *c, const char *text,
                                       const cjrt_compile_options *opts, cjrt_executable **out) {
  *out = NULL;
  if (!text) return cjrt__error(CJRT_INVALID_ARGUMENT, "compile: text is NULL");
  return cjrt_compile(c, text, strlen(text), opts, out);
}

CJRT_API cjrt_error *cjrt_compile_file(cjrt_client *c, const char *path,
                                       const cjrt_compile_options *opts, cjrt_executable **out) {
  *out = NULL;
  if (!path) return cjrt__error(CJRT_INVALID_ARGUMENT, "compile: path is NULL");
  void *bytes;
  size_t size;
  CJRT_TRY(cjrt__read_file(path, &bytes, &size));
  cjrt_error *err = cjrt_compile(c, bytes, size, opts, out);
  free(bytes);
  return cjrt__annotate(err, "compiling %s", path);
}

CJRT_API void cjrt_executable_free(cjrt_executable *e) { exe_destroy(e); }
CJRT_API const char *cjrt_executable_name(const cjrt_executable *e) { return e->name; }
CJRT_API size_t cjrt_executable_num_outputs(const cjrt_executable *e) { return e->num_outputs; }
CJRT_API size_t cjrt_executable_num_devices(const cjrt_executable *e) { return e->num_devices; }
CJRT_API cjrt_device *cjrt_executable_device(const cjrt_executable *e, size_t i) {
  return i < e->num_devices ? e->devices[i] : NULL;
}
CJRT_API cjrt_dtype cjrt_executable_output_dtype(const cjrt_executable *e, size_t i) {
  return e->out_dtypes && i < e->num_outputs ? e->out_dtypes[i] : CJRT_INVALID;
}
CJRT_API const int64_t *cjrt_executable_output_dims(const cjrt_executable *e, size_t i,
                                                    int *out_rank) {
  if (i >= e->num_outputs || e->out_ranks[i] < 0) {
    *out_rank = -1;
    return NULL;
  }
  *out_rank = e->out_ranks[i];
  return e->out_dims[i];
}
CJRT_API const char *cjrt_executable_fingerprint(const cjrt_executable *e) { return e->fingerprint; }
CJRT_API struct PJRT_LoadedExecutable *cjrt_executable_raw(const cjrt_executable *e) { return e->raw; }

CJRT_API cjrt_error *cjrt_executable_optimized_program(const cjrt_executable *e, char **out_code,
                                                      size_t *out_size, char **out_format) {
  if (out_code) *out_code = NULL;
  if (out_size) *out_size = 0;
  if (out_format) *out_format = NULL;
  if (!e || !out_code)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "optimized program: executable or out_code is NULL");
  cjrt_lib *lib = e->client->lib;
  PJRT_LoadedExecutable_GetExecutable_Args ge = {
      .struct_size = PJRT_LoadedExecutable_GetExecutable_Args_STRUCT_SIZE, .loaded_executable = e->raw};
  CJRT_TRY(CJRT_PJRT(lib, PJRT_LoadedExecutable_GetExecutable, &ge));
  PJRT_Program prog = {.struct_size = PJRT_Program_STRUCT_SIZE};
  PJRT_Executable_OptimizedProgram_Args oa = {
      .struct_size = PJRT_Executable_OptimizedProgram_Args_STRUCT_SIZE,
      .executable = ge.executable,
      .program = &prog};
  /* twice: the size, then the bytes into our buffer */
  cjrt_error *err = CJRT_PJRT(lib, PJRT_Executable_OptimizedProgram, &oa);
  char *code = NULL;
  if (!err) {
    size_t n = prog.code_size;
    code = malloc(n + 1);
    if (!code) {
      err = cjrt__oom();
    } else {
      prog.code = code;
      prog.code_size = n;
      err = CJRT_PJRT(lib, PJRT_Executable_OptimizedProgram, &oa);
      if (!err) {
        code[n] = 0;
        if (out_size) *out_size = n;
        if (out_format && prog.format) {
          *out_format = cjrt__strndup(prog.format, prog.format_size);
          if (!*out_format) err = cjrt__oom();
        }
      }
    }
  }
  PJRT_Executable_Destroy_Args xd = {.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE,
                                     .executable = ge.executable};
  cjrt_error_free(CJRT_PJRT(lib, PJRT_Executable_Destroy, &xd));
  if (err) {
    free(code);
    if (out_size) *out_size = 0;
    if (out_format) {
      free(*out_format);
      *out_format = NULL;
    }
    return err;
  }
  *out_code = code;
  return NULL;
}

/* ---- execute ---- */

CJRT_API cjrt_error *cjrt_execute_sharded(cjrt_executable *e, size_t num_devices,
                                          cjrt_buffer *const *args, size_t num_args,
                                          cjrt_buffer **outs, size_t num_outs) {
  if (!e) return cjrt__error(CJRT_INVALID_ARGUMENT, "execute: executable is NULL");
  size_t nout = e->num_outputs;
  if (outs)
    for (size_t i = 0; i < num_devices * num_outs; i++) outs[i] = NULL;
  if (num_devices != e->num_devices)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "execute: %zu argument lists for an executable that runs on %zu devices",
                       num_devices, e->num_devices);
  if (num_outs != nout || (nout && !outs))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "execute: room for %zu outputs per device; the program has %zu",
                       num_outs, nout);
  if (num_args && !args) return cjrt__error(CJRT_INVALID_ARGUMENT, "execute: args is NULL");
  for (size_t i = 0; i < num_devices * num_args; i++)
    if (!args[i])
      return cjrt__error(CJRT_INVALID_ARGUMENT, "execute: argument %zu of device %zu is NULL",
                         i % num_args, i / num_args);
  cjrt_lib *lib = e->client->lib;
  size_t nd = num_devices ? num_devices : 1;
  PJRT_Buffer **argv = calloc(nd * (num_args ? num_args : 1), sizeof *argv);
  PJRT_Buffer *const **arg_lists = calloc(nd, sizeof *arg_lists);
  PJRT_Buffer **outv = calloc(nd * (nout ? nout : 1), sizeof *outv);
  PJRT_Buffer ***out_lists = calloc(nd, sizeof *out_lists);
  PJRT_Event **events = calloc(nd, sizeof *events);
  cjrt_error *err = NULL;
  if (!argv || !arg_lists || !outv || !out_lists || !events) err = cjrt__oom();
  for (size_t d = 0; !err && d < num_devices; d++) {
    for (size_t i = 0; i < num_args; i++) argv[d * num_args + i] = args[d * num_args + i]->raw;
    arg_lists[d] = argv + d * num_args;
    out_lists[d] = outv + d * nout;
  }
  if (!err) {
    PJRT_ExecuteOptions opts = {.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE};
    PJRT_LoadedExecutable_Execute_Args a = {
        .struct_size = PJRT_LoadedExecutable_Execute_Args_STRUCT_SIZE,
        .executable = e->raw,
        .options = &opts,
        .argument_lists = arg_lists,
        .num_devices = num_devices,
        .num_args = num_args,
        .output_lists = (PJRT_Buffer **const *)out_lists,
        .device_complete_events = events,
    };
    err = CJRT_PJRT(lib, PJRT_LoadedExecutable_Execute, &a);
    if (!err) {
      /* wait for every device; keep the first error */
      for (size_t d = 0; d < num_devices; d++) {
        cjrt_error *ee = cjrt__await_event(lib, events[d], NULL);
        events[d] = NULL;
        if (ee && !err) err = num_devices > 1 ? cjrt__annotate(ee, "device %zu", d) : ee;
        else cjrt_error_free(ee);
      }
      /* wrap the outputs (each wrap takes its raw buffer, even when it fails) */
      for (size_t i = 0; i < num_devices * nout; i++) {
        PJRT_Buffer *raw = outv[i];
        outv[i] = NULL;
        if (err || !raw) {
          if (raw) {
            PJRT_Buffer_Destroy_Args bd = {.struct_size = PJRT_Buffer_Destroy_Args_STRUCT_SIZE, .buffer = raw};
            cjrt_error_free(CJRT_PJRT(lib, PJRT_Buffer_Destroy, &bd));
          } else if (!err) {
            err = cjrt__error(CJRT_INTERNAL, "PJRT_LoadedExecutable_Execute left output %zu empty", i % nout);
          }
          continue;
        }
        err = cjrt__wrap_buffer(e->client, raw, &outs[i]);
      }
      if (err)
        for (size_t i = 0; i < num_devices * nout; i++) {
          cjrt_buffer_free(outs[i]);
          outs[i] = NULL;
        }
    }
  }
  free(argv);
  free(arg_lists);
  free(outv);
  free(out_lists);
  free(events);
  return err;
}

CJRT_API cjrt_error *cjrt_execute(cjrt_executable *e, cjrt_buffer *const *args, size_t num_args,
                                  cjrt_buffer **outs, size_t num_outs) {
  if (outs)
    for (size_t i = 0; i < num_outs; i++) outs[i] = NULL;
  if (!e) return cjrt__error(CJRT_INVALID_ARGUMENT, "execute: executable is NULL");
  if (e->num_devices != 1)
    return cjrt__error(CJRT_INVALID_ARGUMENT,
                       "execute: the executable runs on %zu devices; use cjrt_execute_sharded",
                       e->num_devices);
  return cjrt_execute_sharded(e, 1, args, num_args, outs, num_outs);
}
