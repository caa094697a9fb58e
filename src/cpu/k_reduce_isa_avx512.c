/* cjrt: stablehlo.reduce's inner loops (k_reduce_kern.h) compiled for the avx512 instruction set;
 * k_reduce.c calls them only when the CPU has it. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3", "no-math-errno", "no-trapping-math", "fp-contract=off")
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,bmi,bmi2,popcnt,f16c,prefer-vector-width=512,tune=skylake-avx512")
#endif
#define CJ_RK_TEMPLATE 1
#define RK_TABLE cj_rk_avx512
#define RK_AM_TABLE cj_rk_am_avx512
#include "cpu/k_reduce_kern.h"
