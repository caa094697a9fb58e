/* cjrt: the chain kernels (ew_chain_kern.h) compiled for the generic instruction set; ew_chain.c
 * picks them only when the CPU has it (CMakeLists.txt: the set's flags for *_isa_<isa>.c). */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CH_SQRT_F(v) ((ch_v_f32)_mm_sqrt_ps((__m128)(v)))
#define CH_SPLAT_F(x) _mm_set1_ps(x)
#define CH_SPLAT_D(x) _mm_set1_pd(x)
#define CH_SQRT_D(v) ((ch_v_f64)_mm_sqrt_pd((__m128d)(v)))
#endif

#define CH_VBYTES 16
#define CH_NV 4
#define CH_TABLE cj_ew_chain_generic
#define CH_SHAPE cj_ew_chain_generic_shape
#include "cpu/ew_chain_kern.h"
