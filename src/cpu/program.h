/* cjrt: the CPU backend's compiled program (private to src/cpu/). */
#ifndef CJ_CPU_PROGRAM_H
#define CJ_CPU_PROGRAM_H

#include <pthread.h>

#include "cpu/plan.h"
#include "runtime/backend.h"

struct cj_program {
  cj_program_info info;
  cj_arena arena;             /* steps, params, slots, shapes, strings */
  cj_plan plan;
  char *consts;               /* 64-byte aligned constant pool (malloc) */
  int64_t const_bytes;
  int64_t scratch_bytes;      /* the arena each execution needs */
  int64_t tls_bytes;          /* per-thread temporaries of fused kernels */
  int32_t nargs, nresults;
  pthread_mutex_t mu;         /* guards the scratch free list */
  cj_scratch *free_scratch;
  int32_t nreplicas, npartitions; /* the grid of the compile options (launch_create) */
};

/* What the lowering produces (cpu/lower.c). */
typedef struct cj_lower_result {
  cj_plan plan;
  char *consts;
  int64_t const_bytes;
  int64_t scratch_bytes;
  int64_t tls_bytes;
  int32_t nargs, nresults;
  cj_shape *args, *results;   /* in the program arena */
  int32_t *result_donor;
  double flops, transcendentals, bytes_accessed;
} cj_lower_result;

/* Lowers the entry function `func` of module m into a plan allocated in `arena`. */
CJ_MUST_USE cj_status cj_cpu_lower(cj_module *m, cj_op *func, cj_arena *arena, cj_lower_result *out);

#endif
