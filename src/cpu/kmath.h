/* cjrt: the transcendental array functions the CPU kernels call (private to src/cpu/): the
 * vectorized math library (cpu/vmath.h). CJ_KM(name) names its array function. */
#ifndef CJ_CPU_KMATH_H
#define CJ_CPU_KMATH_H

#include "cpu/vmath.h"

#define CJ_KM(name) cj_vm_##name

#endif
