/* cjrt reference backend: every slot of src/runtime/backend.h.
 *
 * Memory is plain 64-byte aligned host memory, copies are memcpy. compile runs the compiler
 * passes (compile.c) and keeps the optimized module; execute interprets it (interp*.c) with
 * fresh values for every op. serialize writes the compile options and the optimized program as
 * generic MLIR text in a checksummed container; deserialize parses and recompiles it. Launches
 * are a mutex + condition variable meeting place for collectives (interp_coll.c).
 */
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "frontend/compile_options.h"
#include "frontend/frontend.h"
#include "reference/ref.h"

/* ---------------------------------------------------------------- memory */

static void *ref_alloc(cj_backend *b, size_t bytes) {
  (void)b;
  size_t n = (bytes + 63) & ~(size_t)63;
  return aligned_alloc(64, n ? n : 64);
}

static void ref_free(cj_backend *b, void *p) {
  (void)b;
  free(p);
}

static cj_status ref_copy(cj_backend *b, void *dst, const void *src, size_t n) {
  (void)b;
  if (n) memmove(dst, src, n);
  return NULL;
}

static bool ref_supports_op(cj_backend *b, const cj_op *op, const char **why) {
  (void)b;
  return rf_supports(op, why);
}

/* ---------------------------------------------------------------- programs */

static cj_status ref_compile(cj_backend *b, cj_module *m, const cj_compile_options *opts, cj_program **out) {
  (void)b;
  *out = NULL;
  if (!m) return cj_invalid("compile: no module");
  cj_compile_options defaults = {1, 1, NULL, false, false};
  return rf_compile_module(m, opts ? opts : &defaults, out);
}

static const cj_program_info *ref_program_info(const cj_program *p) { return p ? &p->info : NULL; }
static void ref_program_free(cj_program *p) { rf_program_free(p); }

/* Layout (little-endian): "CJRTREF\0", u32 version (1), u32 flags (0), u64 options length,
 * options (xla.CompileOptionsProto), u64 text length, text (generic MLIR), u64 FNV-1a checksum
 * of everything before it. */
static const char kMagic[8] = {'C', 'J', 'R', 'T', 'R', 'E', 'F', 0};
enum { kVersion = 1 };

static cj_status ref_serialize(const cj_program *p, void **out, size_t *len) {
  *out = NULL;
  *len = 0;
  if (!p) return cj_invalid("serialize: no program");
  size_t total = 8 + 4 + 4 + 8 + p->opts_len + 8 + p->text_len + 8;
  unsigned char *buf = malloc(total);
  if (!buf) return cj_oom();
  size_t k = 0;
  uint32_t ver = kVersion, flags = 0;
  uint64_t v;
  memcpy(buf, kMagic, 8);
  k = 8;
  memcpy(buf + k, &ver, 4);
  k += 4;
  memcpy(buf + k, &flags, 4);
  k += 4;
  v = p->opts_len;
  memcpy(buf + k, &v, 8);
  k += 8;
  if (p->opts_len) memcpy(buf + k, p->opts_bytes, p->opts_len);
  k += p->opts_len;
  v = p->text_len;
  memcpy(buf + k, &v, 8);
  k += 8;
  if (p->text_len) memcpy(buf + k, p->text, p->text_len);
  k += p->text_len;
  uint64_t h = cj_fnv64(buf, k, CJ_FNV64_SEED);
  memcpy(buf + k, &h, 8);
  k += 8;
  *out = buf;
  *len = k;
  return NULL;
}

static cj_status ref_deserialize(cj_backend *b, const void *data, size_t len, cj_program **out) {
  (void)b;
  *out = NULL;
  const unsigned char *d = data;
  if (!d || len < 8 + 4 + 4 + 8 + 8 + 8)
    return cj_invalid("deserialize: %zu bytes is too short for a reference backend program", len);
  if (memcmp(d, kMagic, 8) != 0) return cj_invalid("deserialize: not a reference backend program (bad magic)");
  uint32_t ver;
  memcpy(&ver, d + 8, 4);
  if (ver != kVersion)
    return cj_invalid("deserialize: program format version %u, this build reads version %u", ver, (unsigned)kVersion);
  uint64_t h;
  memcpy(&h, d + len - 8, 8);
  if (cj_fnv64(d, len - 8, CJ_FNV64_SEED) != h)
    return cj_invalid("deserialize: checksum mismatch (corrupted program bytes)");
  size_t k = 16;
  uint64_t olen, tlen;
  memcpy(&olen, d + k, 8);
  k += 8;
  if (olen > len - k - 16) return cj_invalid("deserialize: bad options length");
  const unsigned char *ob = d + k;
  k += olen;
  memcpy(&tlen, d + k, 8);
  k += 8;
  if (tlen != len - k - 8) return cj_invalid("deserialize: bad program text length");
  cj_compile_options_storage os;
  CJ_RETURN_IF_ERROR(cj_compile_options_read(ob, olen, &os));
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text((const char *)d + k, tlen, "<serialized program>", &m);
  if (!st) st = cj_verify_module(m);
  if (st) {
    cj_module_free(m);
    cj_compile_options_storage_free(&os);
    return cj_status_annotate(st, "deserialize");
  }
  st = rf_compile_module(m, &os.opts, out);
  cj_compile_options_storage_free(&os);
  return st;
}

/* ---------------------------------------------------------------- launches */

static cj_status ref_launch_create(cj_backend *b, const cj_program *p, int32_t n, cj_launch **out) {
  (void)b;
  *out = NULL;
  int64_t nr = p ? p->info.num_replicas : 1, np = p ? p->info.num_partitions : 1;
  if (nr < 1 || np < 1 || nr * np != n)
    return cj_internal("launch: %d devices for a program of %lld replicas x %lld partitions", n,
                       (long long)nr, (long long)np);
  rf_launch *l = NULL;
  CJ_RETURN_IF_ERROR(rf_launch_new((int32_t)nr, (int32_t)np, &l));
  *out = (cj_launch *)l;
  return NULL;
}

static void ref_launch_destroy(cj_launch *l) { rf_launch_free((rf_launch *)l); }
static void ref_launch_abort(cj_launch *l, cj_status why) { rf_launch_abort((rf_launch *)l, why); }

/* ---------------------------------------------------------------- execution */

static cj_status ref_execute(cj_backend *b, const cj_program *p, const cj_exec_args *a) {
  (void)b;
  if (!p || !a) return cj_invalid("execute: no program or arguments");
  const cj_program_info *in = &p->info;
  if ((in->num_args && !a->args) || (in->num_results && !a->results))
    return cj_invalid("execute: missing argument or result pointers");
  rf_exec x;
  memset(&x, 0, sizeof x);
  x.prog = p;
  x.replica = a->replica;
  x.partition = a->partition;
  x.nreplicas = (int32_t)in->num_replicas;
  x.npartitions = (int32_t)in->num_partitions;
  x.dev = x.replica * x.npartitions + x.partition;
  x.launch = (rf_launch *)a->launch;
  x.env = calloc(p->nvalues + 1, sizeof(rv *));
  x.senv = calloc(p->nvalues + 1, sizeof(rs));
  rv **args = calloc((size_t)in->num_args + 1, sizeof(rv *));
  cj_status st = (!x.env || !x.senv || !args) ? cj_oom() : NULL;
  cj_block *body = cj_func_body(p->main);
  for (int32_t i = 0; i < in->num_args && !st; i++) {
    st = rv_new_type(body->args[i].type, &args[i]);
    if (!st && args[i]->kind == RV_TENSOR && in->args[i].nbytes)
      memcpy(args[i]->data, a->args[i], in->args[i].nbytes);
  }
  rv **res = NULL;
  uint32_t nres = 0;
  if (!st) st = rf_run_block(&x, body, args, (uint32_t)in->num_args, &res, &nres);
  if (!st && nres != (uint32_t)in->num_results) st = cj_internal("execute: %u results for %d", nres, in->num_results);
  for (uint32_t j = 0; j < nres && !st; j++) {
    if (res[j]->kind == RV_TENSOR && in->results[j].nbytes) {
      if ((size_t)res[j]->n * (size_t)res[j]->esize != in->results[j].nbytes)
        st = cj_internal("execute: result %u has %zu bytes, expected %zu", j,
                         (size_t)res[j]->n * (size_t)res[j]->esize, in->results[j].nbytes);
      else
        memcpy(a->results[j], res[j]->data, in->results[j].nbytes);
    }
  }
  rf_free_results(res, nres);
  if (args)
    for (int32_t i = 0; i < in->num_args; i++) rv_free(args[i]);
  free(args);
  if (x.env)
    for (uint32_t i = 0; i < p->nvalues; i++) rv_free(x.env[i]);
  free(x.env);
  free(x.senv);
  if (x.launch && st) rf_launch_abort(x.launch, cj_status_copy(st));
  return st;
}

static const cj_backend_vtable ref_vtable = {
    .name = "reference",
    .memory_is_host = true,
    .alloc = ref_alloc,
    .free = ref_free,
    .copy_to_device = ref_copy,
    .copy_to_host = ref_copy,
    .supports_op = ref_supports_op,
    .compile = ref_compile,
    .program_info = ref_program_info,
    .program_free = ref_program_free,
    .program_serialize = ref_serialize,
    .program_deserialize = ref_deserialize,
    .launch_create = ref_launch_create,
    .launch_destroy = ref_launch_destroy,
    .launch_abort = ref_launch_abort,
    .execute = ref_execute,
};

static cj_backend ref_backend = {&ref_vtable};

cj_backend *cj_backend_reference(void) { return &ref_backend; }
