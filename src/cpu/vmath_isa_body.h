/* cjrt vmath: the end of vmath_isa_*.c (private): the kernel bodies (vmath_real.c,
 * vmath_special.c, vmath_f32.c, vmath_cplx.c, vmath_loops.c) under the including file's target
 * options. Before inclusion: VM_ISA_LEVEL, VM_HAVE_FMA (may name VM_GENERIC_FMA, whether the
 * target options give FMA) and VM_TABLE (the name of the table vmath.c picks). */
#if defined(__FMA__) || defined(__FP_FAST_FMA)
#define VM_GENERIC_FMA 1
#else
#define VM_GENERIC_FMA 0
#endif
#define CJ_VM_BODY 1
#include "vmath_real.c"
#include "vmath_special.c"
#include "vmath_f32.c"
#include "vmath_cplx.c"
#include "vmath_loops.c"
