/* cjrt: the chain kernels (ew_chain_kern.h) compiled for the avx2 instruction set; ew_chain.c
 * picks them only when the CPU has it. No contraction of a multiply and an add into one
 * rounding: every step rounds as its instruction's array kernel does. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-math-errno", "fp-contract=off")
#endif
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx2")
#endif
#include <string.h>

#include "cpu/ew_chain.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CH_SQRT_F(v) ((ch_v_f32)_mm256_sqrt_ps((__m256)(v)))
#define CH_SPLAT_F(x) _mm256_set1_ps(x)
#define CH_SPLAT_D(x) _mm256_set1_pd(x)
#define CH_SQRT_D(v) ((ch_v_f64)_mm256_sqrt_pd((__m256d)(v)))
#endif

#define CH_VBYTES 32
#define CH_NV 4
#define CH_T float
#define CH_I int32_t
#define CH_S f32
#ifdef CH_SQRT_F
#define CH_SQRT CH_SQRT_F
#define CH_SPLAT CH_SPLAT_F
#endif
#include "cpu/ew_chain_kern.h"
#undef CH_T
#undef CH_I
#undef CH_S
#undef CH_SQRT
#undef CH_SPLAT
#define CH_T double
#define CH_I int64_t
#define CH_S f64
#ifdef CH_SQRT_D
#define CH_SQRT CH_SQRT_D
#define CH_SPLAT CH_SPLAT_D
#endif
#include "cpu/ew_chain_kern.h"

const cj_ew_chain_fn cj_ew_chain_avx2[2] = {ch_run_f32, ch_run_f64};
