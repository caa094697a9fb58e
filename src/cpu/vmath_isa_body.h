/* cjrt vmath: the whole of each vmath_isa_*.c (private): the kernel bodies (vmath_real.c,
 * vmath_special.c, vmath_f32.c, vmath_avx512.c, vmath_cplx.c, vmath_loops.c) under that file's target options.
 * Before inclusion: VM_ISA_LEVEL, VM_ISA_TARGET (the GCC target options; absent for the baseline
 * build, which is always built, while a targeted one is built only by GCC or clang on x86-64),
 * VM_HAVE_FMA (may name VM_GENERIC_FMA, whether the target options give FMA) and VM_TABLE (the
 * name of the table vmath.c picks). */
#define CJ_VM_INTERNAL
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "cpu/vmath.h"

#if !defined(VM_ISA_TARGET) || (defined(__x86_64__) && defined(__GNUC__))
#ifndef __clang__
#pragma GCC optimize("O3", "no-math-errno", "no-trapping-math", "fp-contract=off")
#endif
#ifdef VM_ISA_TARGET
#define VM_PRAGMA_TEXT(x) _Pragma(#x)
#define VM_PRAGMA(x) VM_PRAGMA_TEXT(x)
VM_PRAGMA(GCC target(VM_ISA_TARGET))
#endif
#if defined(__FMA__) || defined(__FP_FAST_FMA)
#define VM_GENERIC_FMA 1
#else
#define VM_GENERIC_FMA 0
#endif
#define CJ_VM_BODY 1
#include "vmath_real.c"
#include "vmath_special.c"
#include "vmath_f32.c"
#include "vmath_avx512.c"
#include "vmath_cplx.c"
#include "vmath_loops.c"
#endif
