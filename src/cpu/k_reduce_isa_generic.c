/* cjrt: stablehlo.reduce's inner loops (k_reduce_kern.h) compiled for the generic instruction set;
 * k_reduce.c calls them only when the CPU has it. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-math-errno", "no-trapping-math", "fp-contract=off")
#endif
#if defined(__x86_64__) && defined(__GNUC__)

#endif
#define CJ_RK_TEMPLATE 1
#define RK_TABLE cj_rk_generic
#define RK_AM_TABLE cj_rk_am_generic
#include "cpu/k_reduce_kern.h"
