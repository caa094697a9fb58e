/* cjrt vmath: the kernels compiled for AVX-512 (F, DQ, VL, BW) with FMA.
 * The bodies (vmath_isa_body.h) are included here under this file's target options; vmath.c
 * picks a table at run time by CPUID. */
#define VM_ISA_LEVEL 2
#define VM_ISA_TARGET \
  "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,bmi,bmi2,popcnt,prefer-vector-width=512,tune=skylake-avx512"
#define VM_HAVE_FMA 1
#define VM_TABLE cj_vm_table_avx512
#include "cpu/vmath_isa_body.h"
