/* cjrt: convolution on the CPU backend (private to src/cpu/k_conv*.c).
 *
 * Every convolution is lowered to the same geometry: G groups (feature or batch groups), and per
 * group a product of an M x K "patch" matrix with a K x Og weight matrix, where
 *   M = Bout * P   rows: output batch index x output spatial position (row-major over the spatial
 *                  dimensions in the order of output_spatial_dimensions),
 *   K = Q * Cg     kernel spatial position (row-major) x input feature of the group,
 *   Og             output features of the group.
 * The patch matrix is never built: per spatial dimension i a table tab[i][o * kdim[i] + k] gives
 * the element offset (in the lhs buffer the kernel reads) of the input coordinate that output
 * position o and kernel position k meet after padding (negative too), lhs dilation, stride, rhs
 * dilation and window reversal, or -1 when that coordinate is padding or a dilation hole.
 *
 * The lhs is read in place when its element type is the accumulation type (and, for the GEMM
 * path, its feature dimension is contiguous); otherwise a prep step converts it (or
 * dequantizes it) into scratch. The rhs is put into a canonical layout W[g][q][c][o] of the
 * accumulation type (and packed into 32-column panels for the GEMM path), at compile time when
 * it is a constant, else by a prep step of each execution.
 *
 * Two compute paths:
 *   generic (k_conv.c)    every element type (f32/f64/int/complex/bool, quantized), summing each
 *                         output over (q, c) in order like the reference interpreter;
 *   gemm (k_conv_gemm.c)  f32 (and bf16/f16 computed in f32) with a register-blocked AVX-512 /
 *                         AVX2 micro-kernel reading the lhs rows through pointers (implicit
 *                         im2col), in parallel over row blocks.
 * Two reformulations of a GEMM geometry (k_conv.c): a lhs-dilated convolution (input gradient of
 * a strided conv) runs one GEMM per output phase over the taps that phase meets (no products
 * with dilation holes); with few input features per group, the innermost kernel dimension is
 * merged into the features over a prepared lhs (padding written out, positions deinterleaved by
 * the kernel dilation), so kernel gradients run long contiguous dot products.
 */
#ifndef CJ_CPU_K_CONV_H
#define CJ_CPU_K_CONV_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/lower.h"

enum { KC_MAXS = CJ_MAX_RANK - 2 };

/* the accumulation / compute type */
typedef enum kc_acc { KA_F32, KA_F64, KA_I64, KA_C64, KA_C128 } kc_acc;

typedef struct kc_geom {
  int32_t ns;                  /* spatial dimensions */
  int64_t G, Bout, Cg, Og, P, Q, K, M;
  bool bgroups;                /* groups split the batch (batch_group_count > 1) */
  int64_t odim[KC_MAXS], kdim[KC_MAXS];
  const int64_t *tab[KC_MAXS]; /* see above; offsets use xs[] of the buffer the kernel reads */
  int64_t xb, xc;              /* lhs batch / feature strides (elements) of that buffer */
  int64_t ob, of, os[KC_MAXS]; /* result strides (elements) */
  int8_t bf;                   /* bf16 x bf16 GEMM on pairs of input features (k_dot_bf.h):
                                * KC_BF_LHS32 from an f32 lhs, KC_BF_LHS16 reading a bf16 lhs */
} kc_geom;

enum { KC_BF_NONE, KC_BF_LHS32, KC_BF_LHS16 };

/* Element offset of lhs batch `b` of group g (without spatial and feature parts). */
static inline int64_t kc_lhs_base(const kc_geom *g, int64_t grp, int64_t b) {
  return g->bgroups ? (grp * g->Bout + b) * g->xb : b * g->xb + grp * g->Cg * g->xc;
}

/* Where result row m (a batch element and output position) of group grp reads and writes: its lhs
 * base (kc_lhs_base), its first result element, and per spatial dimension its row of tab[]. */
typedef struct kc_rowinfo {
  int64_t xbase, obase;
  const int64_t *rt[KC_MAXS];
} kc_rowinfo;
static inline void kc_row_info(const kc_geom *g, int64_t grp, int64_t m, kc_rowinfo *r) {
  int64_t b = m / g->P, p = m % g->P;
  r->xbase = kc_lhs_base(g, grp, b);
  int64_t oo = b * g->ob + grp * g->Og * g->of;
  for (int32_t i = g->ns - 1; i >= 0; i--) {
    int64_t o = p % g->odim[i];
    p /= g->odim[i];
    oo += o * g->os[i];
    r->rt[i] = g->tab[i] + o * g->kdim[i];
  }
  r->obase = oo;
}

/* the GEMM path (k_conv_gemm.c) */
enum { KC_NR = 32, KC_MR = 8 };
/* Whether the GEMM path takes this geometry (sizes worth it). */
bool cj_kc_gemm_wanted(const kc_geom *g);
/* Packs canonical f32 weights W[G][Q][Cg][Og] into panels Wp[G][npan][K][KC_NR] (zero padded). */
int64_t cj_kc_gemm_packed_floats(const kc_geom *g);
void cj_kc_gemm_pack(const kc_geom *g, const float *w, float *wp);
/* Whether the GEMM can read f32 weights in place (output features contiguous, whole panels, runs
 * of input features long enough) instead of packed panels. */
bool cj_kc_gemm_inplace_ok(const kc_geom *g);
/* Emits the GEMM step: in[0] = lhs (f32, feature stride 1), in[1] = packed weights (or, with
 * bstr, f32 weights read in place: output features contiguous, bstr[0] the input feature stride,
 * bstr[1 + i] spatial dimension i's), in[2] = a zero buffer of at least Cg floats; out[0] =
 * result of dtype out_dt. */
CJ_MUST_USE cj_status cj_kc_gemm_emit(cj_lw *L, cj_op *op, const kc_geom *g, int32_t xbuf, int32_t wbuf,
                       int32_t zbuf, int32_t obuf, cj_dtype out_dt, const int64_t *bstr);

#endif
