/* cjrt: the bf16 x bf16 GEMM kernels of dot_general (k_dot.c) and of convolution
 * (k_conv_gemm.c) for CPUs with AVX512_BF16. Both operands are packed as pairs of consecutive
 * contraction indices, one 32-bit word per pair (the even index in the low half), and multiplied
 * by VDPBF16PS: a product of two bf16 values is exact in f32, the two products of a pair are
 * added to the f32 accumulator one after the other, as the instruction defines (it treats
 * subnormal inputs and results as zero, as XLA:CPU's bf16 kernels on such CPUs do). CPUs without
 * the instruction, or a process with CJ_DOT_BF16=off in its environment (to test the portable
 * path), get NULL from cj_bd_pick and the callers convert to f32 instead. */
#ifndef CJRT_CPU_K_DOT_BF_H
#define CJRT_CPU_K_DOT_BF_H

#include <stdbool.h>
#include <stdint.h>

/* the tile: 8 rows (CJ_BD_MR) x 32 columns (CJ_BD_NR) */
enum { CJ_BD_MR = 8, CJ_BD_NR = 32 };

/* c[i * ldc + j] (+)= sum over pairs p < kp of the pair products of ap[p * 8 + i] and
 * bp[p * 32 + j], for i < mr, j < nr (the tile's other rows and columns are not written) */
typedef void (*cj_bd_ukr)(int64_t kp, const uint32_t *ap, const uint32_t *bp, float *c,
                          int64_t ldc, int64_t mr, int64_t nr, bool acc);

/* the micro-kernel for this CPU, or NULL (asked once, cached) */
cj_bd_ukr cj_bd_pick(void);

/* The convolution's form (k_conv_gemm.c): row i's pairs of segment s at ptrs[s * 8 + i] (kp pairs
 * each, segments one after the other along the contraction), bp the packed panel (32 words per
 * pair), the full 8 x 32 tile at c (added to when acc). NULL where cj_bd_pick is. */
typedef void (*cj_bd_ukr_rows)(int64_t nseg, int64_t kp, const void *const *ptrs,
                               const uint32_t *bp, float *c, int64_t ldc, bool acc);
cj_bd_ukr_rows cj_bd_pick_rows(void);

/* dst[i] = src[i] rounded to nearest even bf16 for i < n (bf; else f16), as cj_la_cvo_pick's
 * (NaN stays NaN, made quiet; subnormals rounded too): by VCVTNEPS2BF16, the subnormals it
 * flushes redone one at a time. Only where cj_bd_pick is not NULL. */
void cj_bd_cvo(const float *src, uint16_t *dst, int64_t n, bool bf);

/* dst[p] = the pair (bf16 of src[2p], bf16 of src[2p + 1]) for p < n / 2 (n even), rounded to
 * nearest even (exact for values that came from bf16). Only where cj_bd_pick is not NULL. */
void cj_bd_from_f32(const float *src, int64_t n, uint32_t *dst);

/* dst[p * ds + i] = the pair (rows[i][2p], rows[i][2p + 1]) for i < 8, p < (n + 1) / 2; when n is
 * odd the last pair's high half is 0 (rows[i][n] is not read). Only where cj_bd_pick is not NULL. */
void cj_bd_tr8(const uint16_t *const *rows, int64_t n, uint32_t *dst, int64_t ds);

/* dst[j] = the pair (r0[j], r1 ? r1[j] : 0) for j < n, and 0 for n <= j < w (w <= 32). Only where
 * cj_bd_pick is not NULL. */
void cj_bd_zip(const uint16_t *r0, const uint16_t *r1, int64_t n, int64_t w, uint32_t *dst);

#endif
