/* cjrt: @cjrt_threefry2x32's lanes (k_rng_tf.h) for the avx512 instruction set; k_rng.c calls them
 * only when the CPU has it. */
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx2,prefer-vector-width=512")
#endif
#define TF_LANES cj_threefry_lanes_avx512
#include "cpu/k_rng_tf.h"
