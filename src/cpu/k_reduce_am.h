/* cjrt: one step of JAX's argmax/argmin fold (see "argmax / argmin" in k_reduce.c), shared by
 * k_reduce.c's typed folds and the per-instruction-set copies of the vertical fold
 * (k_reduce_kern.h). AM_NAN(c) must be defined where they are expanded: is c a NaN (false for
 * integer types). */
#ifndef CJ_CPU_K_REDUCE_AM_H
#define CJ_CPU_K_REDUCE_AM_H

#include <stdbool.h>
#include <stdint.h>

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

/* am_vert_NAME(va, ia, x, xi, xs, m): (va[j], ia[j]) folds in (x[j * xs], xi[j * xs]), j < m */
#define AM_VERT(name, ST, IT, OP, LD)                                                       \
  static void am_vert_##name(void *va_, void *ia_, const char *x_, const char *xi_,         \
                             int64_t xs, int64_t m) {                                       \
    ST *restrict va = va_;                                                                  \
    IT *restrict ia = ia_;                                                                  \
    const ST *restrict x = (const ST *)(const void *)x_;                                    \
    const IT *restrict xi = (const IT *)(const void *)xi_;                                  \
    if (xs == 1) {                                                                          \
      for (int64_t j = 0; j < m; j++) {                                                     \
        ST a = va[j], b = x[j];                                                             \
        IT i = ia[j], k = xi[j];                                                            \
        AM_STEP(OP, LD, a, i, b, k);                                                        \
        va[j] = a;                                                                          \
        ia[j] = i;                                                                          \
      }                                                                                     \
      return;                                                                               \
    }                                                                                       \
    for (int64_t j = 0; j < m; j++) {                                                       \
      ST a = va[j], b = x[j * xs];                                                          \
      IT i = ia[j], k = xi[j * xs];                                                         \
      AM_STEP(OP, LD, a, i, b, k);                                                          \
      va[j] = a;                                                                            \
      ia[j] = i;                                                                            \
    }                                                                                       \
  }

#endif
