/* cjrt: @cjrt_threefry2x32's lanes (k_rng_tf.h) for the generic instruction set; k_rng.c calls them
 * only when the CPU has it. */
#define TF_LANES cj_threefry_lanes_generic
#include "cpu/k_rng_tf.h"
