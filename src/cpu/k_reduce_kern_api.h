/* cjrt: the inner loops of stablehlo.reduce's fast path (k_reduce_kern.h), per instruction set.
 * k_reduce.c picks a table by CPUID (cj_vm_get_isa) when lowering. */
#ifndef CJ_CPU_K_REDUCE_KERN_API_H
#define CJ_CPU_K_REDUCE_KERN_API_H

#include <stdint.h>

#include "base/dtype.h"

/* the combiners, numbered as CJ_RED_* (cpu/lower.h) */
enum { RK_ADD, RK_MUL, RK_MAX, RK_MIN, RK_AND, RK_OR, RK_XOR };

typedef struct rk_fns {
  void (*vload)(void *acc, const char *x, int64_t n);
  void (*vacc)(void *acc, const char *x, int64_t n, int64_t rows, int64_t row_bytes);
  void (*vcomb)(void *acc, const void *b, int64_t n);
  void (*hfold)(void *out, const char *x, int64_t n, int64_t stride_bytes);
  void (*fin)(char *out, const char *init, const void *acc, int64_t n);
  int32_t abytes; /* bytes of the accumulation type */
} rk_fns;

const rk_fns *cj_rk_generic(int rop, cj_dtype dt);
const rk_fns *cj_rk_avx2(int rop, cj_dtype dt);
const rk_fns *cj_rk_avx512(int rop, cj_dtype dt);

#endif
