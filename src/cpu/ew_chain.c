/* cjrt: picks the chain kernel (ew_chain.h) for this CPU. */
#include "cpu/ew_chain.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/vmath.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

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

/* whether the CPU has F16C (CPUID leaf 1), which the f16 chains of the AVX2 and AVX-512 sets use */
static bool has_f16c(void) {
  static _Atomic int f = -1; /* a race only asks twice */
  int v = atomic_load_explicit(&f, memory_order_relaxed);
  if (v < 0) {
    v = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    v = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
#endif
    atomic_store_explicit(&f, v, memory_order_relaxed);
  }
  return v;
}

cj_ew_chain_fn cj_ew_chain_pick_h(int hk) {
  if ((hk != CJ_CH_H_BF16 && hk != CJ_CH_H_F16) || !chain_enabled()) return NULL;
  if (hk == CJ_CH_H_F16 && !has_f16c()) return NULL;
  int k = 1 + hk; /* [2]: bf16, [3]: f16 (NULL in the generic set) */
  switch (cj_vm_get_isa()) {
    case CJ_VM_ISA_AVX512: return cj_ew_chain_avx512[k];
    case CJ_VM_ISA_AVX2: return cj_ew_chain_avx2[k];
    default: return cj_ew_chain_generic[k];
  }
}

void cj_ew_chain_shape(int es, int *lanes, int *strip) {
  const int *s;
  switch (cj_vm_get_isa()) {
    case CJ_VM_ISA_AVX512: s = cj_ew_chain_avx512_shape; break;
    case CJ_VM_ISA_AVX2: s = cj_ew_chain_avx2_shape; break;
    default: s = cj_ew_chain_generic_shape;
  }
  *lanes = s[0] / es;
  *strip = s[1];
}

int64_t cj_ew_chain_box_entries(const cj_ew_chain *c, int lanes, int strip) {
  return (int64_t)c->nbox * (c->box_w + lanes * strip);
}

void cj_ew_chain_box_table(cj_ew_chain *c, uint16_t *kt, int lanes, int strip) {
  int w = c->box_w;
  c->kb_stride = w + lanes * strip;
  c->kbits = kt;
  for (int b = 0; b < c->nbox; b++)
    for (int j = 0; j < c->kb_stride; j++) {
      uint16_t bits = 0;
      for (int l = 0; l < lanes; l++) {
        int64_t col = (j + l) % w;
        if (col >= c->box[b].clo && col < c->box[b].chi) bits |= (uint16_t)(1u << l);
      }
      kt[b * c->kb_stride + j] = bits;
    }
}
