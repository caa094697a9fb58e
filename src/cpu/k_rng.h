/* cjrt: the CPU backend's random-number kernels beyond the op table's (k_rng.c; private to
 * src/cpu/). */
#ifndef CJ_CPU_K_RNG_H
#define CJ_CPU_K_RNG_H

#include <stdint.h>

#include "cpu/lower.h"

/* custom_call @cjrt_threefry2x32(k0, k1, x0, x1) -> (y0, y1), which python/jax_plugins/cjrt
 * lowers JAX's threefry2x32 primitive to (k_rng.c says how) */
CJ_MUST_USE cj_status cj_lower_cc_threefry2x32(cj_lw *L, cj_op *op);

/* The lanes of one instruction set each (k_rng_tf.h): Threefry-2x32 of n lanes whose operand
 * j is in[j][i * step[j]] (step 0 or 1). */
typedef void (*cj_threefry_lanes_fn)(const uint32_t *const in[4], const int64_t step[4],
                                     uint32_t *y0, uint32_t *y1, int64_t n);
void cj_threefry_lanes_generic(const uint32_t *const in[4], const int64_t step[4], uint32_t *y0,
                               uint32_t *y1, int64_t n);
void cj_threefry_lanes_avx2(const uint32_t *const in[4], const int64_t step[4], uint32_t *y0,
                            uint32_t *y1, int64_t n);
void cj_threefry_lanes_avx512(const uint32_t *const in[4], const int64_t step[4], uint32_t *y0,
                              uint32_t *y1, int64_t n);

#endif
