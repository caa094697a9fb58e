/* cjrt: picks the chain kernel (ew_chain.h) for this CPU. */
#include "cpu/ew_chain.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/vmath.h"

/* CJ_EW_CHAIN=off: every instruction runs alone (the tests run the same cases both ways) */
static bool chain_enabled(void) {
  static _Atomic int on = -1; /* a race only reads the environment twice */
  int v = atomic_load_explicit(&on, memory_order_relaxed);
  if (v < 0) {
    const char *env = getenv("CJ_EW_CHAIN");
    v = !(env && strcmp(env, "off") == 0);
    atomic_store_explicit(&on, v, memory_order_relaxed);
  }
  return v;
}

cj_ew_chain_fn cj_ew_chain_pick(cj_dtype dt) {
  if ((dt != CJ_F32 && dt != CJ_F64) || !chain_enabled()) return NULL;
  int k = dt == CJ_F64;
  switch (cj_vm_get_isa()) {
    case CJ_VM_ISA_AVX512: return cj_ew_chain_avx512[k];
    case CJ_VM_ISA_AVX2: return cj_ew_chain_avx2[k];
    default: return cj_ew_chain_generic[k];
  }
}
