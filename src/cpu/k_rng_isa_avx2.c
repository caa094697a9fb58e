/* cjrt: @cjrt_threefry2x32's lanes (k_rng_tf.h) for the avx2 instruction set; k_rng.c calls them
 * only when the CPU has it. */
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx2")
#endif
#define TF_LANES cj_threefry_lanes_avx2
#include "cpu/k_rng_tf.h"
