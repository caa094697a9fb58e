/* cjrt: the chain kernels (ew_chain.h) of one instruction set, included by
 * ew_chain_isa_<isa>.c, which defines
 *   CH_VBYTES, CH_NV          bytes per vector, vectors per strip
 *   CH_SQRT_F/D, CH_SPLAT_F/D the vector square root and broadcast of f32 / f64 (optional)
 *   CH_TABLE                  the name of the table of its two kernels
 *   CH_SHAPE                  the name of its {CH_VBYTES, CH_NV}
 *   CH_MASKLD_F/D(p, bits, pad) a vector at p, its lanes not set in bits replaced by pad
 *                             (optional)
 *   CH_F16_IN(h), CH_F16_OUT(v) a vector of f16 (CH_VBYTES / 2 bytes) to f32 and back to
 *                             nearest even, F16C's (optional: else no f16 chains)
 */
/* no contraction of a multiply and an add into one rounding: every step rounds as its
 * instruction's array kernel does */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-math-errno", "fp-contract=off")
#endif
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#include <string.h>

#include "cpu/ew_chain.h"

#define CH_T float
#define CH_I int32_t
#define CH_S f32
#ifdef CH_SQRT_F
#define CH_SQRT CH_SQRT_F
#define CH_SPLAT CH_SPLAT_F
#endif
#ifdef CH_MASKLD_F
#define CH_MASKLD CH_MASKLD_F
#endif
#include "cpu/ew_chain_kern_t.h"
#undef CH_T
#undef CH_I
#undef CH_S
#undef CH_SQRT
#undef CH_SPLAT
#undef CH_MASKLD
#define CH_T double
#define CH_I int64_t
#define CH_S f64
#ifdef CH_SQRT_D
#define CH_SQRT CH_SQRT_D
#define CH_SPLAT CH_SPLAT_D
#endif
#ifdef CH_MASKLD_D
#define CH_MASKLD CH_MASKLD_D
#endif
#include "cpu/ew_chain_kern_t.h"
#undef CH_T
#undef CH_I
#undef CH_S
#undef CH_SQRT
#undef CH_SPLAT
#undef CH_MASKLD
/* 16-bit chains: f32 arithmetic, bf16 or f16 entries and rounding */
#define CH_T float
#define CH_I int32_t
#ifdef CH_SQRT_F
#define CH_SQRT CH_SQRT_F
#define CH_SPLAT CH_SPLAT_F
#endif
#define CH_S bf16
#define CH_H 1
#include "cpu/ew_chain_kern_t.h"
#undef CH_S
#undef CH_H
#ifdef CH_F16_IN
#define CH_S f16
#define CH_H 2
#include "cpu/ew_chain_kern_t.h"
#define CH_RUN_F16 ch_run_f16
#else
#define CH_RUN_F16 NULL
#endif

const cj_ew_chain_fn CH_TABLE[4] = {ch_run_f32, ch_run_f64, ch_run_bf16, CH_RUN_F16};
const int CH_SHAPE[2] = {CH_VBYTES, CH_NV};
