/* cjrt: the chain kernels (ew_chain_kern.h) compiled for the avx512 instruction set; ew_chain.c
 * picks them only when the CPU has it (CMakeLists.txt: the set's flags for *_isa_<isa>.c). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CH_SQRT_F(v) ((ch_v_f32)_mm512_sqrt_ps((__m512)(v)))
#define CH_SPLAT_F(x) _mm512_set1_ps(x)
#define CH_SPLAT_D(x) _mm512_set1_pd(x)
#define CH_SQRT_D(v) ((ch_v_f64)_mm512_sqrt_pd((__m512d)(v)))
/* boxed operands: the lanes outside the box blended with the padding */
#define CH_MASKLD_F(p, bits, pad) \
  ((ch_v_f32)_mm512_mask_mov_ps((__m512)(pad), (__mmask16)(bits), _mm512_loadu_ps(p)))
#define CH_MASKLD_D(p, bits, pad) \
  ((ch_v_f64)_mm512_mask_mov_pd((__m512d)(pad), (__mmask8)(bits), _mm512_loadu_pd(p)))
/* 16-bit chains' f16: F16C's conversions (as ew_cvt.c's and ew.c's ROUND on these CPUs) */
#define CH_F16_IN(h) _mm512_cvtph_ps((__m256i)(h))
#define CH_F16_OUT(v) _mm512_cvtps_ph((__m512)(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* bf16: the halves widened and shifted, 32-bit lanes narrowed (VPMOVZXWD, VPMOVDW) */
#define CH_BF16_IN(h) _mm512_slli_epi32(_mm512_cvtepu16_epi32((__m256i)(h)), 16)
#define CH_BF16_PACK(r) _mm512_cvtepi32_epi16((__m512i)(r))
#endif

#define CH_VBYTES 64
#define CH_NV 8
#define CH_TABLE cj_ew_chain_avx512
#define CH_SHAPE cj_ew_chain_avx512_shape
#include "cpu/ew_chain_kern.h"
