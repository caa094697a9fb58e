/* cjrt: the linear algebra kernels of the CPU backend (private to src/cpu/k_linalg*.c).
 *
 * Dense matrix routines on row-major matrices of one compute type (f32, f64, complex f32/f64),
 * written once in k_linalg_kern.c and compiled per instruction set (k_linalg_isa_*.c, picked
 * from CPUID when a program is lowered): a packed GEMM with a register-blocked micro-kernel, a
 * blocked right-looking Cholesky factorization and blocked triangular solves. They never
 * allocate: packing buffers come from the execution's per-thread areas (cj_tls_claim), whose
 * size the lowering reserves with cj_lw_set_tls_bytes(LA_TLS_BYTES).
 *
 * Users: cholesky and triangular_solve (k_linalg.c), einsum (k_linalg_einsum.c). The 16-bit
 * float row conversions at the end are shared with dot_general, convolution and convert.
 */
#ifndef CJ_CPU_K_LINALG_H
#define CJ_CPU_K_LINALG_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/plan.h"

/* compute types */
enum { LA_F32, LA_F64, LA_C64, LA_C128, LA_NTYPES };
/* how a GEMM result is applied to C */
enum { LA_SUB = 0, LA_SET = 1, LA_ADD = 2 };

/* Blocking (elements): real types pack MC x KC of A and KC x NC of B; complex types use the
 * smaller CMC x CKC and CKC x CNC. MC and CMC are multiples of every micro-kernel's row count. */
enum { LA_KC = 256, LA_MC = 96, LA_NC = 256, LA_CKC = 128, LA_CMC = 48, LA_CNC = 128 };
/* the per-thread packing area every routine may use */
#define LA_TLS_BYTES ((int64_t)(LA_MC * LA_KC + LA_KC * LA_NC) * 8 + 4096)

/* C (m x n, row stride ldc) op= op(A) * op(B), with op(A)(i, p) = A[i * sai + p * sap] and
 * op(B)(p, j) = B[p * sbp + j * sbj], each conjugated when asked (complex types). Strides count
 * elements of the compute type. */
typedef struct la_gemm {
  int64_t m, n, k;
  const void *a;
  int64_t sai, sap;
  const void *b;
  int64_t sbp, sbj;
  void *c;
  int64_t ldc;
  bool conja, conjb;
  int mode; /* LA_SUB, LA_SET, LA_ADD */
} la_gemm;

/* Where a routine runs: with nthreads > 1 it may split its work over ctx's pool (each task
 * claims its own per-thread area); `work` is the caller's area (LA_TLS_BYTES). */
typedef struct la_env {
  cj_exec_ctx *ctx;
  int nthreads;
  void *work;
} la_env;

typedef struct la_table {
  const char *isa;
  /* sequential GEMM with the packing area `work` */
  void (*gemm[LA_NTYPES])(const la_gemm *g, void *work);
  /* the same, split over row blocks of the pool when E allows and the work is worth it */
  void (*gemm_par[LA_NTYPES])(const la_env *E, const la_gemm *g);
  /* In-place Cholesky factorization of the lower triangle of the n x n matrix a (row stride
   * n): a = L L^H. Only the lower triangle is read and written. Returns false when a pivot's
   * square root is NaN (not positive definite, or NaN input). */
  bool (*chol[LA_NTYPES])(const la_env *E, void *a, int64_t n);
  /* Solves M X = B (left) or X M = B (right) in place in X (rows x cols, row stride ldx), M
   * triangular (m x m, row stride m; only its `lower` or upper triangle is read, the diagonal
   * taken as 1 when `unit`). m = rows when left, cols when right. */
  void (*trsm[LA_NTYPES])(const la_env *E, bool left, bool lower, bool unit, const void *M,
                          int64_t m, void *X, int64_t rows, int64_t cols, int64_t ldx);
  /* dst (C x R) = src (R x C) transposed, both dense, elements of es bytes; false (nothing
   * done) for sizes other than 4 and 8 */
  bool (*transpose)(void *dst, const void *src, int64_t R, int64_t C, int es);
} la_table;

extern const la_table cj_la_table_avx512, cj_la_table_avx2, cj_la_table_generic;
/* The table for this CPU (CPUID). */
const la_table *cj_la_pick(void);

/* rows x n 16-bit floats (bf16 when bf, else f16; row strides ss, ds elements) to f32, exact,
 * and f32 to 16 bits rounded to nearest even (NaN stays NaN), as cj_bf16_to_f32 / cj_f16_to_f32
 * and cj_f32_to_bf16 / cj_f32_to_f16 do one element at a time */
typedef void (*cj_la_cvi)(const uint16_t *src, int64_t ss, float *dst, int64_t ds, int64_t rows,
                          int64_t n, bool bf);
typedef void (*cj_la_cvo)(const float *src, uint16_t *dst, int64_t n, bool bf);

/* the fastest for this CPU (CPUID); defined in k_dot.c */
cj_la_cvi cj_la_cvi_pick(void);
cj_la_cvo cj_la_cvo_pick(void);

static inline int la_elem_bytes(int ct) { return ct == LA_F32 ? 4 : ct == LA_C128 ? 16 : 8; }

#endif
