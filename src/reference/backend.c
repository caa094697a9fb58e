/* cjrt reference backend: every slot of src/runtime/backend.h.
 *
 * Devices are host CPUs: their kind is "cpu" (JAX reads it: string arrays may live only on
 * device_kind "cpu" devices, and jax.export maps a device kind to its platform by "cpu" in the
 * name), one per core by default as on the CPU backend, with the same three memory kinds; the
 * backend's own name ("reference") is in the client's platform version. Memory is plain 64-byte
 * aligned host memory, copies are memcpy. lower (compile.c) keeps a copy of the optimized entry
 * function and describes it; execute interprets it (interp*.c) with fresh values for every op.
 * Launches are a mutex + condition variable meeting place for collectives (interp_coll.c).
 */
#include <stdlib.h>
#include <string.h>

#include "base/threadpool.h"
#include "reference/ref.h"

/* ---------------------------------------------------------------- memory */

static void *ref_alloc(cj_backend *b, int32_t device, cj_memory_kind kind, size_t bytes) {
  (void)b, (void)device, (void)kind; /* host memory for every device and kind */
  size_t n = (bytes + 63) & ~(size_t)63;
  return aligned_alloc(64, n ? n : 64);
}

static void ref_free(cj_backend *b, int32_t device, cj_memory_kind kind, void *p) {
  (void)b, (void)device, (void)kind;
  free(p);
}

static CJ_MUST_USE cj_status ref_copy(cj_backend *b, int32_t device, void *dst, const void *src,
                                     size_t n) {
  (void)b, (void)device;
  if (n) memmove(dst, src, n);
  return NULL;
}

static bool ref_supports_op(cj_backend *b, const cj_op *op, const char **why) {
  (void)b;
  return cj_rf_supports(op, why);
}

/* ---------------------------------------------------------------- devices */

static int ref_default_device_count(cj_backend *b) {
  (void)b;
  return cj_num_cores();
}

/* ---------------------------------------------------------------- programs */

static CJ_MUST_USE cj_status ref_lower(cj_backend *b, cj_module *m, cj_op *main, const cj_compile_options *opts,
                           cj_program **out) {
  (void)b;
  *out = NULL;
  if (!m || !main) return cj_invalid("lower: no module");
  cj_compile_options defaults = {1, 1, NULL, false, false};
  return cj_rf_lower(m, main, opts ? opts : &defaults, out);
}

static const cj_program_info *ref_program_info(const cj_program *p) { return p ? &p->info : NULL; }
static void ref_program_free(cj_program *p) { cj_rf_program_free(p); }

/* ---------------------------------------------------------------- launches */

static CJ_MUST_USE cj_status ref_launch_create(cj_backend *b, const cj_program *p, int32_t n, cj_launch **out) {
  (void)b;
  *out = NULL;
  int64_t nr = p ? p->info.num_replicas : 1, np = p ? p->info.num_partitions : 1;
  if (nr < 1 || np < 1 || nr * np != n)
    return cj_internal("launch: %d devices for a program of %lld replicas x %lld partitions", n,
                       (long long)nr, (long long)np);
  rf_launch *l = NULL;
  CJ_RETURN_IF_ERROR(cj_rf_launch_new((int32_t)nr, (int32_t)np, &l));
  *out = (cj_launch *)l;
  return NULL;
}

static void ref_launch_destroy(cj_launch *l) { cj_rf_launch_free((rf_launch *)l); }
static void ref_launch_abort(cj_launch *l, cj_status why) { cj_rf_launch_abort((rf_launch *)l, why); }

/* ---------------------------------------------------------------- execution */

static CJ_MUST_USE cj_status ref_execute(cj_backend *b, const cj_program *p, const cj_exec_args *a) {
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
    st = cj_rv_new_type(body->args[i].type, &args[i]);
    if (!st && args[i]->kind == RV_TENSOR && in->args[i].nbytes)
      memcpy(args[i]->data, a->args[i], in->args[i].nbytes);
  }
  rv **res = NULL;
  uint32_t nres = 0;
  if (!st) st = cj_rf_run_block(&x, body, args, (uint32_t)in->num_args, &res, &nres);
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
  cj_rf_free_results(res, nres);
  if (args)
    for (int32_t i = 0; i < in->num_args; i++) cj_rv_free(args[i]);
  free(args);
  if (x.env)
    for (uint32_t i = 0; i < p->nvalues; i++) cj_rv_free(x.env[i]);
  free(x.env);
  free(x.senv);
  if (x.launch && st) cj_rf_launch_abort(x.launch, cj_status_copy(st));
  return st;
}

static const cj_backend_vtable ref_vtable = {
    .name = "reference",
    .device_kind = "cpu",
    .default_device_count = ref_default_device_count,
    .memory_kinds = CJ_MEMORY_KIND_BIT(CJ_MEMORY_DEVICE) | CJ_MEMORY_KIND_BIT(CJ_MEMORY_PINNED_HOST) |
                    CJ_MEMORY_KIND_BIT(CJ_MEMORY_UNPINNED_HOST),
    .memory_is_host = true,
    .alloc = ref_alloc,
    .free = ref_free,
    .copy_to_device = ref_copy,
    .copy_to_host = ref_copy,
    .supports_op = ref_supports_op,
    .lower = ref_lower,
    .program_info = ref_program_info,
    .program_free = ref_program_free,
    .launch_create = ref_launch_create,
    .launch_destroy = ref_launch_destroy,
    .launch_abort = ref_launch_abort,
    .execute = ref_execute,
};

static cj_backend ref_backend = {&ref_vtable};

cj_backend *cj_backend_reference(void) { return &ref_backend; }
