/* cjrt: interpreter.run_parallel, the reference interpreter's test-only op that runs one program
 * per process of a num_replicas x num_partitions grid concurrently, with collectives between
 * them.
 *
 * The compiler (cj_pass_run_parallel, src/compiler/spmd_parallel.c) has already turned the op
 * into its self-contained form: one region per process (replica-major) holding a copy of that
 * process's function. The lowering makes each region a nested plan over the program's arena and
 * emits one driver step; every buffer of the regions lives across the whole step (the processes
 * run at the same time, so none shares memory with another), and each process first copies its
 * arguments (two processes may receive the same value). The driver creates a launch for the
 * grid, runs each process on its own thread with its replica/partition ids and its own
 * temporaries, and fails with the first process's error (the launch is aborted so the others
 * stop instead of waiting for it).
 *
 * Inside run_parallel, send/recv to the host are allowed: the driver plays the host (one queue
 * per channel), as the reference interpreter does.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/k_collective.h"

static _Thread_local int in_run_parallel;

bool cj_coll_in_run_parallel(void) { return in_run_parallel > 0; }

typedef struct rp_params {
  int32_t nr, np, nproc;
  cj_plan *plans;
  const char *what;
} rp_params;

typedef struct rp_proc {
  cj_exec_ctx ctx;
  cj_exec_args args;
  cj_scratch scratch; /* the execution's arena and bases, with temporaries of its own */
  const cj_plan *plan;
  const char *what;
  cj_status st;
  cj_thread thread;
  int32_t dev;
} rp_proc;

static void *rp_main(void *arg) {
  rp_proc *P = arg;
  P->st = cj_plan_run(&P->ctx, P->plan);
  if (P->st) {
    P->st = cj_status_annotate(P->st, "%s: process (replica %d, partition %d)", P->what,
                               P->args.replica, P->args.partition);
    cj_cpu_launch_abort(P->args.launch, cj_status_copy(P->st));
  }
  cj_cpu_launch_finished(P->args.launch, P->dev);
  return NULL;
}

static void proc_free_tls(rp_proc *P) {
  for (int i = 0; i < P->scratch.ntls; i++) free(P->scratch.tls[i].mem);
  free(P->scratch.tls);
}

static CJ_MUST_USE cj_status k_run_parallel(cj_exec_ctx *ctx, const cj_step *st) {
  const rp_params *p = st->params;
  cj_launch *l = NULL;
  CJ_RETURN_IF_ERROR(cj_cpu_launch_new(p->nr, p->np, &l));
  rp_proc *procs = calloc((size_t)p->nproc, sizeof *procs);
  if (!procs) {
    cj_cpu_launch_free(l);
    return cj_oom();
  }
  cj_status err = NULL;
  size_t tls_bytes = ctx->scratch && ctx->scratch->ntls ? ctx->scratch->tls[0].bytes : 0;
  for (int32_t k = 0; k < p->nproc && !err; k++) {
    rp_proc *P = &procs[k];
    P->args = *ctx->args;
    P->args.replica = k / p->np;
    P->args.partition = k % p->np;
    P->args.launch = l;
    P->args.pool = NULL; /* each process runs on its own thread */
    P->args.xproc = NULL; /* its own grid, all in this process */
    P->scratch = *ctx->scratch;
    P->scratch.next = NULL;
    P->scratch.ntls = 0;
    P->scratch.tls = NULL;
    atomic_init(&P->scratch.tls_busy, 0);
    if (tls_bytes) {
      P->scratch.tls = calloc(2, sizeof(cj_tls_area));
      if (!P->scratch.tls) err = cj_oom();
      for (int i = 0; !err && i < 2; i++) {
        P->scratch.tls[i].mem = aligned_alloc(64, (tls_bytes + 63) & ~(size_t)63);
        P->scratch.tls[i].bytes = tls_bytes;
        P->scratch.ntls = i + 1;
        if (!P->scratch.tls[i].mem) err = cj_oom();
      }
    }
    P->ctx = *ctx;
    P->ctx.args = &P->args;
    P->ctx.pool = NULL;
    P->ctx.scratch = &P->scratch;
    P->plan = &p->plans[k];
    P->what = p->what;
    P->dev = k;
  }
  for (int32_t k = 0; k < p->nproc && !err; k++) {
    if (!cj_thread_start(&procs[k].thread, (size_t)8 << 20, rp_main, &procs[k])) {
      err = cj_status_make(CJ_RESOURCE_EXHAUSTED, "%s: cannot start a thread for process %d",
                           p->what, k);
      cj_cpu_launch_abort(l, cj_status_copy(err));
    }
  }
  for (int32_t k = 0; k < p->nproc; k++) {
    cj_thread_join(&procs[k].thread);
    /* the first process error is the cause; later ones are mostly "cancelled" */
    if (procs[k].st && (!err || (cj_status_code(err) == CJ_CANCELLED &&
                                 cj_status_code(procs[k].st) != CJ_CANCELLED))) {
      cj_status_ignore(err); /* a later, less telling error gives way */
      err = procs[k].st;
      procs[k].st = NULL;
    }
    /* later errors are mostly the cancellations the first one caused */
    cj_status_ignore(procs[k].st);
    proc_free_tls(&procs[k]);
  }
  free(procs);
  cj_cpu_launch_free(l);
  return err;
}

/* Every buffer made since `first` lives across [start, end]. */
static void pin_region(cj_lw *L, int32_t first, int32_t last_id, int32_t start, int32_t end) {
  for (int32_t id = first; id < last_id; id++) {
    cj_lw_buf *b = cj_lw_buf_at(L, id);
    if (b->def < 0 || b->def > start) b->def = start;
    if (b->last < end) b->last = end;
  }
}

/* appends v to the growable array *a of *n (capacity *cap) buffers */
static CJ_MUST_USE cj_status push_buf(int32_t **a, int32_t *n, int32_t *cap, int32_t v) {
  if (*n == *cap) {
    int32_t *na = realloc(*a, sizeof(int32_t) * (size_t)*cap * 2);
    if (!na) return cj_oom();
    *a = na;
    *cap *= 2;
  }
  (*a)[(*n)++] = v;
  return NULL;
}

cj_status cj_lower_run_parallel(cj_lw *L, cj_op *op) {
  const cj_attr *grid = cj_op_attr(op, "cj.grid");
  int64_t g[2], ng = 0;
  if (op->nregions == 0 || !grid || !cj_attr_get_i64s(grid, g, 2, &ng) || ng != 2)
    return cj_op_error(op, CJ_INTERNAL,
                       "interpreter.run_parallel was not prepared by the compiler "
                       "(cj_pass_run_parallel)");
  if (g[0] < 1 || g[1] < 1 || g[0] * g[1] != (int64_t)op->nregions)
    return cj_op_error(op, CJ_INTERNAL, "run_parallel grid %lld x %lld for %u programs",
                       (long long)g[0], (long long)g[1], op->nregions);
  if (in_run_parallel) return cj_op_error(op, CJ_UNIMPLEMENTED, "nested interpreter.run_parallel");
  rp_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->nr = (int32_t)g[0];
  p->np = (int32_t)g[1];
  p->nproc = (int32_t)op->nregions;
  p->what = cj_lw_what(L, op);
  p->plans = cj_lw_alloc(L, sizeof(cj_plan) * (size_t)p->nproc);
  if (!p->what || !p->plans) return cj_oom();

  /* the driver's inputs: every leaf of every operand */
  int32_t nin = 0, cap = 16;
  int32_t *ins = malloc(sizeof(int32_t) * (size_t)cap);
  int32_t nout = 0, capo = 16;
  int32_t *outs = malloc(sizeof(int32_t) * (size_t)capo);
  cj_status st = (!ins || !outs) ? cj_oom() : NULL;
  int32_t first = cj_lw_new_buf(L, 0, CJ_BK_NONE);
  int32_t start = cj_lw_advance(L);
  uint32_t opi = 0, resi = 0;
  for (int32_t k = 0; k < p->nproc && !st; k++) {
    cj_block *b = op->regions[k].first;
    if (!b) {
      st = cj_op_error(op, CJ_INTERNAL, "process %d has no program", k);
      break;
    }
    if (opi + b->nargs > op->nopnds) {
      st = cj_op_error(op, CJ_INVALID_ARGUMENT, "the programs take more arguments than given");
      break;
    }
    cj_lw_saved saved;
    cj_lw_plan_begin(L, &saved);
    for (uint32_t i = 0; i < b->nargs && !st; i++) {
      int32_t nl;
      const int32_t *lv;
      st = cj_lw_leaves(L, op, op->operands[opi + i], &nl, &lv);
      if (st) break;
      int32_t *fresh = malloc(sizeof(int32_t) * (size_t)(nl ? nl : 1));
      if (!fresh) {
        st = cj_oom();
        break;
      }
      int32_t ncopy = 0;
      int32_t *src = malloc(sizeof(int32_t) * (size_t)(nl ? nl : 1));
      int32_t *dst = malloc(sizeof(int32_t) * (size_t)(nl ? nl : 1));
      if (!src || !dst) st = cj_oom();
      for (int32_t j = 0; j < nl && !st; j++) {
        st = push_buf(&ins, &nin, &cap, lv[j]);
        if (st) break;
        int64_t size = cj_lw_buf_at(L, lv[j])->size;
        fresh[j] = cj_lw_new_buf(L, size, size ? CJ_BK_ARENA : CJ_BK_NONE);
        if (size) {
          src[ncopy] = lv[j];
          dst[ncopy++] = fresh[j];
        }
      }
      if (!st && ncopy) st = cj_lw_emit_copies(L, op, (uint32_t)ncopy, src, dst);
      if (!st) st = cj_lw_bind(L, &b->args[i], nl, fresh);
      free(src);
      free(dst);
      free(fresh);
    }
    opi += b->nargs;
    cj_op *term = NULL;
    if (!st) {
      in_run_parallel++;
      st = cj_lw_block(L, b, &term);
      in_run_parallel--;
    }
    if (!st && (!term || resi + term->nopnds > op->nresults))
      st = cj_op_error(op, CJ_INVALID_ARGUMENT, "the programs return more values than it has results");
    for (uint32_t j = 0; !st && j < term->nopnds; j++) {
      int32_t nl;
      const int32_t *lv;
      st = cj_lw_leaves(L, term, term->operands[j], &nl, &lv);
      if (!st) st = cj_lw_bind(L, &op->results[resi + j], nl, lv);
      for (int32_t q = 0; !st && q < nl; q++) st = push_buf(&outs, &nout, &capo, lv[q]);
    }
    if (!st) resi += term->nopnds;
    st = cj_lw_plan_finish(L, &saved, &p->plans[k], st);
  }
  if (!st && (opi != op->nopnds || resi != op->nresults))
    st = cj_op_error(op, CJ_INVALID_ARGUMENT,
                     "the programs take %u arguments and return %u values, but the op has %u "
                     "operands and %u results",
                     opi, resi, op->nopnds, op->nresults);
  if (!st && !cj_lw_emit(L, op, k_run_parallel, p, (uint32_t)nin, ins, (uint32_t)nout, outs))
    st = cj_oom();
  if (!st) {
    int32_t end = cj_lw_pos(L) - 1;
    /* every buffer the processes use lives across the whole step */
    int32_t last_id = cj_lw_new_buf(L, 0, CJ_BK_NONE);
    pin_region(L, first, last_id, start, end);
  }
  free(ins);
  free(outs);
  return st;
}
