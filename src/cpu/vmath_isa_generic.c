/* cjrt vmath: the kernels compiled for the compiler's baseline target (SSE2 on x86-64); FMA only where the baseline has it.
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

#if 1 /* always built */
#ifndef __clang__
#pragma GCC optimize("O3", "no-math-errno", "no-trapping-math", "fp-contract=off")
#endif

#define VM_ISA_LEVEL 0
#define VM_HAVE_FMA VM_GENERIC_FMA
#define VM_TABLE cj_vm_table_generic
#include "cpu/vmath_isa_body.h"
#else
typedef int cj_vm_isa_generic_unused; /* not an x86-64 GCC build */
#endif
