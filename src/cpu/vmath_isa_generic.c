/* cjrt vmath: the kernels compiled for the compiler's baseline target (SSE2 on x86-64); FMA only where the baseline has it.
 * The bodies (vmath_isa_body.h) are included here under this file's target options; vmath.c
 * picks a table at run time by CPUID. */
#define VM_ISA_LEVEL 0
#define VM_HAVE_FMA VM_GENERIC_FMA
#define VM_TABLE cj_vm_table_generic
#include "cpu/vmath_isa_body.h"
