/* cjrt: the chain kernels (ew_chain_kern.h) compiled for the avx2 instruction set; ew_chain.c
 * picks them only when the CPU has it (CMakeLists.txt: the set's flags for *_isa_<isa>.c). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CH_SQRT_F(v) ((ch_v_f32)_mm256_sqrt_ps((__m256)(v)))
#define CH_SPLAT_F(x) _mm256_set1_ps(x)
#define CH_SPLAT_D(x) _mm256_set1_pd(x)
#define CH_SQRT_D(v) ((ch_v_f64)_mm256_sqrt_pd((__m256d)(v)))
/* 16-bit chains' f16: F16C's conversions (as ew_cvt.c's and ew.c's ROUND on these CPUs) */
#define CH_F16_IN(h) _mm256_cvtph_ps((__m128i)(h))
#define CH_F16_OUT(v) _mm256_cvtps_ph((__m256)(v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* bf16: the halves widened and shifted, 32-bit lanes narrowed (VPMOVZXWD, VPACKUSDW of the
 * two halves: the values fit 16 bits) */
#define CH_BF16_IN(h) _mm256_slli_epi32(_mm256_cvtepu16_epi32((__m128i)(h)), 16)
#define CH_BF16_PACK(r) \
  _mm_packus_epi32(_mm256_castsi256_si128((__m256i)(r)), _mm256_extracti128_si256((__m256i)(r), 1))
#endif

#define CH_VBYTES 32
#define CH_NV 4
#define CH_TABLE cj_ew_chain_avx2
#define CH_SHAPE cj_ew_chain_avx2_shape
#include "cpu/ew_chain_kern.h"
