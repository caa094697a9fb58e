/* cjrt: one step of JAX's argmax/argmin fold (see "argmax / argmin" in k_reduce.c), shared by
 * k_reduce.c's typed folds and the per-instruction-set copies of the vertical fold
 * (k_reduce_kern.h). AM_NAN(c) must be defined where they are expanded: is c a NaN (false for
 * integer types). */
#ifndef CJ_CPU_K_REDUCE_AM_H
#define CJ_CPU_K_REDUCE_AM_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* (va, ia) = the step's pick of (va, ia) and (vb, ib); OP is > (argmax) or < (argmin), LD
 * loads a value for comparing */
#define AM_STEP(OP, LD, va, ia, vb, ib)                                         \
  do {                                                                          \
    __typeof__(LD(va)) ca_ = LD(va), cb_ = LD(vb);                              \
    bool pf_ = (ca_ OP cb_) | AM_NAN(ca_);                                      \
    bool pi_ = pf_ | ((ca_ == cb_) & ((ia) < (ib)));                            \
    (va) = pf_ ? (va) : (vb);                                                   \
    (ia) = pi_ ? (ia) : (ib);                                                   \
  } while (0)

/* am_rows_NAME(va, ia, x, xi, xs, rs, irs, rows, idx0, m): (va[j], ia[j]) folds in, row by
 * row k < rows, (x[k rs + j xs], xi ? xi[k irs + j xs] : idx0 + k) for j < m (rs, irs in
 * bytes, xs in elements; xi NULL: the indices are an iota along the rows, never read). Each
 * row's loop runs across the outputs (which the vectorizer takes). */
#define AM_ROWS(name, ST, IT, OP, LD)                                                       \
  static void am_rows_##name(void *va_, void *ia_, const char *x_, const char *xi_,         \
                             int64_t xs, int64_t rs, int64_t irs, int64_t rows,             \
                             int64_t idx0, int64_t m) {                                     \
    ST *restrict va = va_;                                                                  \
    IT *restrict ia = ia_;                                                                  \
    for (int64_t k = 0; k < rows; k++) {                                                    \
      const ST *restrict x = (const ST *)(const void *)(x_ + k * rs);                       \
      const IT *restrict xi = xi_ ? (const IT *)(const void *)(xi_ + k * irs) : NULL;       \
      IT ic = (IT)(idx0 + k);                                                               \
      if (xi && xs == 1) {                                                                  \
        for (int64_t j = 0; j < m; j++) {                                                   \
          ST a = va[j], b = x[j];                                                           \
          IT i = ia[j], ib = xi[j];                                                         \
          AM_STEP(OP, LD, a, i, b, ib);                                                     \
          va[j] = a;                                                                        \
          ia[j] = i;                                                                        \
        }                                                                                   \
      } else if (xs == 1) {                                                                 \
        for (int64_t j = 0; j < m; j++) {                                                   \
          ST a = va[j], b = x[j];                                                           \
          IT i = ia[j], ib = ic;                                                            \
          AM_STEP(OP, LD, a, i, b, ib);                                                     \
          va[j] = a;                                                                        \
          ia[j] = i;                                                                        \
        }                                                                                   \
      } else {                                                                              \
        for (int64_t j = 0; j < m; j++) {                                                   \
          ST a = va[j], b = x[j * xs];                                                      \
          IT i = ia[j], ib = xi ? xi[j * xs] : ic;                                          \
          AM_STEP(OP, LD, a, i, b, ib);                                                     \
          va[j] = a;                                                                        \
          ia[j] = i;                                                                        \
        }                                                                                   \
      }                                                                                     \
    }                                                                                       \
  }

#endif
