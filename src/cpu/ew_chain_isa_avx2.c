/* cjrt: the chain kernels (ew_chain_kern.h) compiled for the avx2 instruction set; ew_chain.c
 * picks them only when the CPU has it (CMakeLists.txt: the set's flags for *_isa_<isa>.c). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CH_SQRT_F(v) ((ch_v_f32)_mm256_sqrt_ps((__m256)(v)))
#define CH_SPLAT_F(x) _mm256_set1_ps(x)
#define CH_SPLAT_D(x) _mm256_set1_pd(x)
#define CH_SQRT_D(v) ((ch_v_f64)_mm256_sqrt_pd((__m256d)(v)))
#endif

#define CH_VBYTES 32
#define CH_NV 4
#define CH_TABLE cj_ew_chain_avx2
#define CH_SHAPE cj_ew_chain_avx2_shape
#include "cpu/ew_chain_kern.h"
