/* cjrt vmath: the kernels compiled for AVX2 with FMA.
 * The bodies (vmath_isa_body.h) are included here under this file's target options; vmath.c
 * picks a table at run time by CPUID. */
#define CJ_VM_INTERNAL
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "cpu/vmath.h"

#if defined(__x86_64__) && defined(__GNUC__)
#ifndef __clang__
#pragma GCC optimize("O3", "no-math-errno", "no-trapping-math", "fp-contract=off")
#endif
#pragma GCC target("avx2,fma,bmi,bmi2,popcnt,tune=skylake")
#define VM_ISA_LEVEL 1
#define VM_HAVE_FMA 1
#define VM_TABLE cj_vm_table_avx2
#include "cpu/vmath_isa_body.h"
#else
typedef int cj_vm_isa_avx2_unused; /* not an x86-64 GCC build */
#endif
