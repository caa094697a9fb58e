/* cjrt: the inner loops of stablehlo.reduce's fast path (k_reduce_kern.h), per instruction set.
 * k_reduce.c picks a table by CPUID (cj_vm_get_isa) when lowering. */
#ifndef CJ_CPU_K_REDUCE_KERN_API_H
#define CJ_CPU_K_REDUCE_KERN_API_H

#include <stdbool.h>
#include <stdint.h>

#include "base/dtype.h"

/* hrows: at most this many outputs a call */
enum { RK_HROWS = 64 };

/* the combiners, numbered as CJ_RED_* (cpu/lower.h) */
enum { RK_ADD, RK_MUL, RK_MAX, RK_MIN, RK_AND, RK_OR, RK_XOR };

typedef struct rk_fns {
  void (*vload)(void *acc, const char *x, int64_t n);
  void (*vacc)(void *acc, const char *x, int64_t n, int64_t rows, int64_t row_bytes);
  void (*vcomb)(void *acc, const void *b, int64_t n);
  void (*hfold)(void *out, const char *x, int64_t n, int64_t stride_bytes);
  void (*hrows)(void *out, const char *x, int64_t n, int64_t m, int64_t row_bytes);
  void (*hshort)(void *out, const char *x, int64_t n, int64_t m, int64_t row_bytes,
                 int64_t stride_bytes);
  void (*fin)(char *out, const char *init, const void *acc, int64_t n);
  int32_t abytes; /* bytes of the accumulation type */
} rk_fns;

/* For ISA files that replace hrows: hfold_NAME of a contiguous fold of 16 or more is hrows' lanes
 * and tree for one output (so a fold and a row of hrows agree bit for bit); shorter or strided
 * folds take the template's (hfold_NAME_t, in index order). */
#define RK_HFOLD_BY_HROWS(NAME, T)                                                                \
  static void hfold_##NAME(void *out, const char *x_, int64_t n, int64_t s) {                   \
    if (s != (int64_t)sizeof(T) || n < 16) {                                                     \
      hfold_##NAME##_t(out, x_, n, s);                                                           \
      return;                                                                                    \
    }                                                                                            \
    hrows_##NAME(out, x_, n, 1, 0);                                                              \
  }

/* argmax (gt) / argmin's fold across contiguous outputs (k_reduce_am.h's am_rows) for f32/f64
 * values and s32/s64 indices, NULL for other types */
typedef void (*rk_am_rows_fn)(void *va, void *ia, const char *x, const char *xi, int64_t xs,
                              int64_t rs, int64_t irs, int64_t rows, int64_t idx0, int64_t m);

const rk_fns *cj_rk_generic(int rop, cj_dtype dt);
const rk_fns *cj_rk_avx2(int rop, cj_dtype dt);
const rk_fns *cj_rk_avx512(int rop, cj_dtype dt);
rk_am_rows_fn cj_rk_am_generic(cj_dtype vt, cj_dtype it, bool gt);
rk_am_rows_fn cj_rk_am_avx2(cj_dtype vt, cj_dtype it, bool gt);
rk_am_rows_fn cj_rk_am_avx512(cj_dtype vt, cj_dtype it, bool gt);

#endif
