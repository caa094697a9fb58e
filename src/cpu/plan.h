/* cjrt: the executable plan of the CPU backend (private to src/cpu/).
 *
 * A compiled program is a flat list of steps. A step is a kernel pointer, the slots of its
 * operands and results, and parameters the lowering computed once (strides, loop bounds, fused
 * expression). A slot names a byte offset from one of a few bases that an execution fixes once:
 *
 *   base 0             the execution's scratch arena (planned at compile time: liveness, reuse,
 *                      in-place updates), one per concurrent execution (a pool of arenas)
 *   base 1             the program's constant pool
 *   base 2 + i         argument i (read-only unless donated)
 *   base 2 + nargs + j result j
 *
 * so resolving an operand is one indexed load and one add. Control flow nests plans over the
 * same bases: `while` is a condition plan and a body plan, `if`/`case` one plan per branch, a
 * general `reduce` runs its body plan per element. Executing is a loop over steps: it never
 * allocates, never switches on an element type (the lowering picked a kernel per type), never
 * touches the IR.
 *
 * Ownership: everything a plan points to lives in the program's arena.
 */
#ifndef CJ_CPU_PLAN_H
#define CJ_CPU_PLAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/status.h"
#include "base/threadpool.h"
#include "runtime/backend.h"

enum { CJ_BASE_SCRATCH = 0, CJ_BASE_CONST = 1, CJ_BASE_ARG0 = 2 };

typedef struct cj_slot {
  uint32_t base;
  uint32_t buf; /* lowering only: the planned buffer (patched into base/off at the end) */
  int64_t off;
} cj_slot;

typedef struct cj_exec_ctx cj_exec_ctx;
typedef struct cj_step cj_step;

/* A kernel runs one step. Returns NULL, or an error that stops the execution (failed checks,
 * out-of-range control-flow indices are clamped, so few kernels ever fail). */
typedef cj_status (*cj_kernel_fn)(cj_exec_ctx *ctx, const cj_step *st);

struct cj_step {
  cj_kernel_fn fn;
  const void *params;   /* kernel-specific, in the program arena */
  cj_slot *in, *out;
  uint32_t nin, nout;
  const char *what;     /* "stablehlo.add at prog.mlir:3:5", for messages */
};

typedef struct cj_plan {
  cj_step *steps;
  uint32_t nsteps;
} cj_plan;

/* Per-thread temporary blocks for fused elementwise kernels. */
typedef struct cj_tls_area {
  char *mem;
  size_t bytes;
} cj_tls_area;

/* One execution's scratch: the arena and per-thread temporary areas. Pooled per program. */
typedef struct cj_scratch {
  char *arena;
  size_t arena_bytes;
  char **bases;         /* 2 + nargs + nresults */
  cj_tls_area *tls;     /* ntls areas, claimed through tls_busy */
  int ntls;
  _Atomic uint64_t tls_busy;
  struct cj_scratch *next; /* free list */
} cj_scratch;

struct cj_exec_ctx {
  char **bases;
  cj_scratch *scratch;
  cj_threadpool *pool;
  const cj_exec_args *args;
  int32_t nbases; /* entries of bases (0: unknown, and then no shifted copies are made) */
};

/* A copy of ctx whose scratch base is moved by `delta` bytes (a private group's copy k, see
 * cj_lw_group in lower.h); `bases` has room for ctx->nbases entries. False if ctx->nbases is
 * unknown. */
static inline bool cj_exec_ctx_shifted(const cj_exec_ctx *ctx, int64_t delta, char **bases,
                                       cj_exec_ctx *out) {
  if (ctx->nbases <= 0) return false;
  for (int32_t i = 0; i < ctx->nbases; i++) bases[i] = ctx->bases[i];
  bases[CJ_BASE_SCRATCH] = ctx->bases[CJ_BASE_SCRATCH] + delta;
  *out = *ctx;
  out->bases = bases;
  return true;
}

#define CJ_PTR(ctx, s) ((ctx)->bases[(s).base] + (s).off)

/* Runs a plan; stops at the first error. */
static inline CJ_MUST_USE cj_status cj_plan_run(cj_exec_ctx *ctx, const cj_plan *p) {
  const cj_step *s = p->steps, *e = s + p->nsteps;
  for (; s < e; s++) {
    cj_status st = s->fn(ctx, s);
    if (st) return st;
  }
  return NULL;
}

/* Claims / releases a per-thread temporary area (for fused kernels run inside parallel loops). */
cj_tls_area *cj_tls_claim(cj_exec_ctx *ctx);
void cj_tls_release(cj_exec_ctx *ctx, cj_tls_area *a);
/* The body of a parallel loop (cj_pool_parallel_for) whose tasks each need a per-thread area:
 * task(arg, t, area) for t in [b, e) on one claimed area (none runs when none can be claimed). */
static inline void cj_tls_tasks(cj_exec_ctx *ctx, int64_t b, int64_t e, void (*task)(void *, int64_t, char *),
                                void *arg) {
  cj_tls_area *a = cj_tls_claim(ctx);
  if (!a) return;
  for (int64_t t = b; t < e; t++) task(arg, t, a->mem);
  cj_tls_release(ctx, a);
}

/* The offset of row-major linear index i in an array of these dims with these strides. */
static inline int64_t cj_strided_offset(int64_t i, int32_t rank, const int64_t *dims, const int64_t *strides) {
  int64_t off = 0;
  for (int32_t d = rank - 1; d >= 0; d--) {
    off += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return off;
}

/* Parallel loops worth it only above this many elements of simple work. */
#define CJ_PAR_MIN_ELEMS 32768

#endif
