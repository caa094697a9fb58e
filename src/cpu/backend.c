/* cjrt: the CPU backend: every slot of src/runtime/backend.h.
 *
 * lower = the lowering of the prepared module into a plan (lower.c) + the program's own
 * description (shapes, donation, cost, memory); the compiler passes, the optimized text, the
 * fingerprint and serialization are the runtime's compile driver's (runtime/compile.h).
 * execute = take a scratch arena from the program's pool (allocated only the first time a
 * concurrency level is reached), fix the bases, run the plan.
 * Devices: one per online core by default, of kind "cpu", each with the three memory kinds
 * (all host memory).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/alloc.h"
#include "cpu/launch.h"
#include "cpu/lower.h"
#include "cpu/program.h"
#include "runtime/backend.h"

/* ======================================================================== memory */

/* Device memory: 64-byte aligned blocks; freed large blocks are cached by size class (bounded,
 * trimmed when idle) so that fresh result buffers do not page-fault (alloc.c). */
static void *cpu_alloc(cj_backend *b, int32_t device, cj_memory_kind kind, size_t bytes) {
  (void)b, (void)device, (void)kind; /* host memory for every device and kind */
  return cj_mem_alloc(bytes);
}

static void cpu_free(cj_backend *b, int32_t device, cj_memory_kind kind, void *p) {
  (void)b, (void)device, (void)kind;
  cj_mem_free(p);
}

static CJ_MUST_USE cj_status cpu_copy(cj_backend *b, int32_t device, void *dst, const void *src,
                                     size_t n) {
  (void)b, (void)device;
  if (n) memmove(dst, src, n);
  return NULL;
}

static CJ_MUST_USE cj_status cpu_copy_d2d(cj_backend *b, int32_t dst_device, void *dst,
                                          int32_t src_device, const void *src, size_t n) {
  (void)b, (void)dst_device, (void)src_device; /* every device's memory is the process's */
  if (n) memmove(dst, src, n);
  return NULL;
}

/* ======================================================================== devices */

static int cpu_default_device_count(cj_backend *b) {
  (void)b;
  return cj_num_cores();
}

/* ======================================================================== ops */

static bool cpu_supports_op(cj_backend *b, const cj_op *op, const char **why) {
  (void)b;
  return cj_cpu_can_lower(op, why);
}

/* ======================================================================== programs */

static void program_free(cj_program *p) {
  if (!p) return;
  cj_scratch *s = p->free_scratch;
  while (s) {
    cj_scratch *next = s->next;
    for (int i = 0; i < s->ntls; i++) free(s->tls[i].mem);
    free(s->tls);
    free(s->arena);
    free(s->bases);
    free(s);
    s = next;
  }
  pthread_mutex_destroy(&p->mu);
  free(p->consts);
  cj_arena_release(&p->arena);
  free(p);
}

static CJ_MUST_USE cj_status cpu_lower(cj_backend *b, cj_module *m, cj_op *main, const cj_compile_options *opts,
                           cj_program **out) {
  (void)b;
  *out = NULL;
  if (!m || !main || !opts) return cj_invalid("lower: no module, entry function or options");
  if (opts->num_replicas < 1 || opts->num_partitions < 1 ||
      opts->num_replicas * opts->num_partitions > INT32_MAX)
    return cj_invalid("lower: %lld replicas x %lld partitions", (long long)opts->num_replicas,
                      (long long)opts->num_partitions);
  cj_program *p = calloc(1, sizeof *p);
  if (!p) return cj_oom();
  pthread_mutex_init(&p->mu, NULL);
  cj_arena_init(&p->arena);
  p->nreplicas = (int32_t)opts->num_replicas;
  p->npartitions = (int32_t)opts->num_partitions;
  cj_lower_result lr;
  memset(&lr, 0, sizeof lr);
  cj_status st = cj_cpu_lower(m, main, &p->arena, &lr);
  if (!st) {
    cj_program_info *in = &p->info;
    in->num_args = lr.nargs;
    in->num_results = lr.nresults;
    in->args = lr.args;
    in->results = lr.results;
    in->result_donor = lr.result_donor;
    in->flops = lr.flops;
    in->bytes_accessed = lr.bytes_accessed;
    in->transcendentals = lr.transcendentals;
    in->temp_bytes = lr.scratch_bytes;
    in->constant_bytes = lr.const_bytes;
    in->code_bytes = (int64_t)(lr.plan.nsteps * sizeof(cj_step));
    p->plan = lr.plan;
    p->consts = lr.consts;
    p->const_bytes = lr.const_bytes;
    p->scratch_bytes = lr.scratch_bytes;
    p->tls_bytes = lr.tls_bytes;
    p->nargs = lr.nargs;
    p->nresults = lr.nresults;
    lr.consts = NULL;
  }
  free(lr.consts);
  if (st) {
    program_free(p);
    return st;
  }
  *out = p;
  return NULL;
}

static const cj_program_info *cpu_program_info(const cj_program *p) { return p ? &p->info : NULL; }

static void cpu_program_free(cj_program *p) { program_free(p); }

/* ======================================================================== launches */

static CJ_MUST_USE cj_status cpu_launch_create(cj_backend *b, const cj_program *p, int32_t n, cj_launch **out) {
  (void)b;
  *out = NULL;
  /* the grid of the program (src/cpu/launch.c: meetings and mailboxes for collectives) */
  int64_t nr = p ? p->nreplicas : 1, np = p ? p->npartitions : 1;
  if (nr < 1 || np < 1 || nr * np != n)
    return cj_internal("launch: %d devices for a program of %lld replicas x %lld partitions", n,
                       (long long)nr, (long long)np);
  return cj_cpu_launch_new((int32_t)nr, (int32_t)np, out);
}

static void cpu_launch_destroy(cj_launch *l) { cj_cpu_launch_free(l); }
static void cpu_launch_abort(cj_launch *l, cj_status why) { cj_cpu_launch_abort(l, why); }

/* ======================================================================== execution */

static cj_scratch *scratch_new(const cj_program *p, int ntls) {
  cj_scratch *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  size_t ab = (size_t)((p->scratch_bytes + 63) & ~(int64_t)63);
  s->arena = aligned_alloc(64, ab ? ab : 64);
  s->arena_bytes = ab;
  s->bases = calloc((size_t)(2 + p->nargs + p->nresults), sizeof(char *));
  if (ntls > 64) ntls = 64;
  s->ntls = p->tls_bytes > 0 ? ntls : 0;
  s->tls = calloc((size_t)(s->ntls ? s->ntls : 1), sizeof(cj_tls_area));
  bool ok = s->arena && s->bases && s->tls;
  for (int i = 0; ok && i < s->ntls; i++) {
    size_t tb = (size_t)((p->tls_bytes + 63) & ~(int64_t)63);
    s->tls[i].mem = aligned_alloc(64, tb);
    s->tls[i].bytes = tb;
    if (!s->tls[i].mem) ok = false;
  }
  if (!ok) {
    for (int i = 0; i < s->ntls; i++) free(s->tls[i].mem);
    free(s->tls);
    free(s->arena);
    free(s->bases);
    free(s);
    return NULL;
  }
  return s;
}

static CJ_MUST_USE cj_status cpu_execute(cj_backend *b, const cj_program *cp, const cj_exec_args *args) {
  (void)b;
  cj_program *p = (cj_program *)cp;
  if (!p || !args) return cj_invalid("execute: no program or arguments");
  if ((p->nargs && !args->args) || (p->nresults && !args->results))
    return cj_invalid("execute: missing argument or result pointers");
  int ntls = args->pool ? cj_pool_size(args->pool) + 1 : 2;
  pthread_mutex_lock(&p->mu);
  cj_scratch *s = p->free_scratch, *prev = NULL;
  while (s && s->ntls && s->ntls < ntls) { /* a pool with more threads needs more areas */
    prev = s;
    s = s->next;
  }
  if (s) {
    if (prev)
      prev->next = s->next;
    else
      p->free_scratch = s->next;
  }
  pthread_mutex_unlock(&p->mu);
  if (!s) {
    s = scratch_new(p, ntls);
    if (!s) return cj_oom();
  }
  atomic_store(&s->tls_busy, 0);
  s->bases[CJ_BASE_SCRATCH] = s->arena;
  s->bases[CJ_BASE_CONST] = p->consts;
  for (int32_t i = 0; i < p->nargs; i++) s->bases[CJ_BASE_ARG0 + i] = args->args[i];
  for (int32_t j = 0; j < p->nresults; j++) s->bases[CJ_BASE_ARG0 + p->nargs + j] = args->results[j];
  cj_exec_ctx ctx;
  ctx.bases = s->bases;
  ctx.nbases = 2 + p->nargs + p->nresults;
  ctx.scratch = s;
  ctx.pool = args->pool;
  ctx.args = args;
  cj_status st = cj_plan_run(&ctx, &p->plan);
  if (args->launch) /* peers still waiting for this device at a collective fail, naming it */
    cj_cpu_launch_finished(args->launch,
                           args->replica * cj_cpu_launch_partitions(args->launch) + args->partition);
  pthread_mutex_lock(&p->mu);
  s->next = p->free_scratch;
  p->free_scratch = s;
  pthread_mutex_unlock(&p->mu);
  return st;
}

static const cj_backend_vtable cpu_vtable = {
    .name = "cpu",
    .device_kind = "cpu",
    .default_device_count = cpu_default_device_count,
    .memory_kinds = CJ_MEMORY_KIND_BIT(CJ_MEMORY_DEVICE) | CJ_MEMORY_KIND_BIT(CJ_MEMORY_PINNED_HOST) |
                    CJ_MEMORY_KIND_BIT(CJ_MEMORY_UNPINNED_HOST),
    .memory_is_host = true,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_device = cpu_copy,
    .copy_to_host = cpu_copy,
    .copy_device_to_device = cpu_copy_d2d,
    .supports_op = cpu_supports_op,
    .lower = cpu_lower,
    .program_info = cpu_program_info,
    .program_free = cpu_program_free,
    .launch_create = cpu_launch_create,
    .launch_destroy = cpu_launch_destroy,
    .launch_abort = cpu_launch_abort,
    .execute = cpu_execute,
};

static cj_backend cpu_backend = {&cpu_vtable};

cj_backend *cj_backend_cpu(void) { return &cpu_backend; }
