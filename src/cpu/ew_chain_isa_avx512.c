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
#endif

#define CH_VBYTES 64
#define CH_NV 8
#define CH_TABLE cj_ew_chain_avx512
#define CH_SHAPE cj_ew_chain_avx512_shape
#include "cpu/ew_chain_kern.h"
