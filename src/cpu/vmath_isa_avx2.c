/* cjrt vmath: the kernels compiled for AVX2 with FMA.
 * The bodies (vmath_isa_body.h) are included here under this file's target options; vmath.c
 * picks a table at run time by CPUID. */
#define VM_ISA_LEVEL 1
#define VM_ISA_TARGET "avx2,fma,bmi,bmi2,popcnt,tune=skylake"
#define VM_HAVE_FMA 1
#define VM_TABLE cj_vm_table_avx2
#include "cpu/vmath_isa_body.h"
