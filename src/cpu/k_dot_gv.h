/* cjrt: the matrix-vector kernels of dot_general's GEMV (k_dot.c), one pair per matrix element
 * type (f32, bf16, f16), picked from CPUID once at lowering. The vector is f32, contiguous. */
#ifndef CJRT_CPU_K_DOT_GV_H
#define CJRT_CPU_K_DOT_GV_H

#include <stdbool.h>
#include <stdint.h>

#include "base/dtype.h"

/* outputs of one axpy call, rows of one dot call */
enum { CJ_GV_STRIP = 128, CJ_GV_ROWS = 4 };

/* the axpy form: acc[i] = sum over k < kn of x[k] * w[k * ldw + i] for i < ns <= CJ_GV_STRIP
 * (ldw in elements; each output's terms summed in order of k) */
typedef void (*cj_gv_axpy_fn)(float *acc, const void *w, int64_t ldw, const float *x, int64_t kn,
                              int64_t ns);
/* the dot form: part[r] = sum over k < kn of m[r * os + k] * x[k] for r < rows <= CJ_GV_ROWS
 * (os in elements; kn <= 1024; per row, partial sums in 32 or more lanes added pairwise) */
typedef void (*cj_gv_dot_fn)(const void *m, int64_t os, const float *x, int64_t kn, int64_t rows,
                             float *part);

/* the kernels for matrix elements of type mt (f32, bf16 or f16) on this CPU; false for others */
bool cj_gv_pick(cj_dtype mt, cj_gv_axpy_fn *axpy, cj_gv_dot_fn *dot);

/* for tests: the portable dot form (GCC's clones), and the AVX2 one (NULL where the type has none
 * or the CPU lacks AVX2); the latter gives the former's bits */
cj_gv_dot_fn cj_gv_dot_portable(cj_dtype mt);
cj_gv_dot_fn cj_gv_dot_avx2(cj_dtype mt);

#endif
