/* cjrt vmath: the public entry points and the run-time choice of instruction set.
 *
 * Each cj_vm_* function forwards to the table of the widest variant the CPU supports
 * (vmath_isa_avx512.c, vmath_isa_avx2.c, vmath_isa_generic.c), chosen on first use from CPUID
 * feature bits (__builtin_cpu_supports, which also checks that the OS saves the wide
 * registers), capped by CJ_VMATH_ISA or cj_vm_set_isa. The choice is one pointer read per call
 * (per block of elements), never per element. */
#define CJ_VM_INTERNAL
#include "cpu/vmath.h"

#include <stdlib.h>
#include <string.h>

static const cj_vm_table *const vm_tables[3] = {
    &cj_vm_table_generic,
#ifdef CJ_VM_X86
    &cj_vm_table_avx2,
    &cj_vm_table_avx512,
#else
    &cj_vm_table_generic,
    &cj_vm_table_generic,
#endif
};

static int vm_cap = -1;  /* the cap set by cj_vm_set_isa, -1: none */
static int vm_cur = -1;  /* the variant in force, -1: not chosen yet */

static int vm_best_supported(void) {
#ifdef CJ_VM_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
    return CJ_VM_ISA_AVX512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("bmi2"))
    return CJ_VM_ISA_AVX2;
#endif
  return CJ_VM_ISA_GENERIC;
}

static int vm_choose(void) {
  int best = vm_best_supported();
  const char *env = getenv("CJ_VMATH_ISA");
  if (env) {
    int cap = best;
    if (strcmp(env, "generic") == 0) cap = CJ_VM_ISA_GENERIC;
    else if (strcmp(env, "avx2") == 0) cap = CJ_VM_ISA_AVX2;
    else if (strcmp(env, "avx512") == 0) cap = CJ_VM_ISA_AVX512;
    if (cap < best) best = cap;
  }
  int cap = __atomic_load_n(&vm_cap, __ATOMIC_RELAXED);
  if (cap >= 0 && cap < best) best = cap;
  return best;
}

static inline const cj_vm_table *vm_tab(void) {
  int cur = __atomic_load_n(&vm_cur, __ATOMIC_RELAXED);
  if (__builtin_expect(cur < 0, 0)) {
    cur = vm_choose(); /* idempotent: racing threads compute the same value */
    __atomic_store_n(&vm_cur, cur, __ATOMIC_RELAXED);
  }
  return vm_tables[cur];
}

cj_vm_isa cj_vm_set_isa(cj_vm_isa max_isa) {
  int cap = (int)max_isa;
  if (cap < CJ_VM_ISA_GENERIC) cap = CJ_VM_ISA_GENERIC;
  if (cap > CJ_VM_ISA_AVX512) cap = CJ_VM_ISA_AVX512;
  __atomic_store_n(&vm_cap, cap, __ATOMIC_RELAXED);
  int cur = vm_choose();
  __atomic_store_n(&vm_cur, cur, __ATOMIC_RELAXED);
  return (cj_vm_isa)cur;
}

cj_vm_isa cj_vm_get_isa(void) {
  (void)vm_tab();
  return (cj_vm_isa)__atomic_load_n(&vm_cur, __ATOMIC_RELAXED);
}

const char *cj_vm_isa_name(cj_vm_isa isa) {
  switch (isa) {
    case CJ_VM_ISA_GENERIC: return "generic";
    case CJ_VM_ISA_AVX2: return "avx2";
    case CJ_VM_ISA_AVX512: return "avx512";
  }
  return "unknown";
}

#define VM_PUB(fn, s, T, A)                                                                     \
  void cj_vm_##fn##_##s(CJ_VM_##A##_PARAMS(T)) {                                                \
    if (n > 0) vm_tab()->fn##_##s(CJ_VM_##A##_ARGS);                                            \
  }
#define VM_PUB_RU(fn) CJ_VM_RU(VM_PUB, fn)
#define VM_PUB_RB(fn) CJ_VM_RB(VM_PUB, fn)
#define VM_PUB_CU(fn) CJ_VM_CU(VM_PUB, fn)
#define VM_PUB_CB(fn) CJ_VM_CB(VM_PUB, fn)
CJ_VM_EACH(VM_PUB)
VM_PUB_CU(abs)
