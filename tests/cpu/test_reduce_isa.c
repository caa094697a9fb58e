/* The reduce kernels of each instruction set (k_reduce_isa_*.c) against the template's
 * (k_reduce_isa_generic.c): hrows and contiguous hfolds of add and multiply over f32, f64, bf16
 * and f16 give the same bits (the same lanes and tree), for runs of 16 to 1031 elements (8 lanes
 * under 64, 32 from there; whole vectors and tails) and 1 to 9 outputs (four at a time and the
 * rest), and vertical folds (vacc) of 1 to 9 rows the same; maximum and minimum too, with ties,
 * signed zeros and NaNs (StableHLO's semantics: the template's bits). Random values with every rounding in play, so a change of the lanes, the tree or a tail
 * shows. Skips an instruction set the CPU lacks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "cpu/k_reduce_kern_api.h"
#include "cpu/vmath.h"

enum { MAXN = 1031, MAXM = 9 };

static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* maximum/minimum: ties, zeros of both signs and now and then a NaN (quiet or signaling, either
 * sign, with a payload), so that which operand a tie or a NaN gives shows in the bits */
static double mm_value(unsigned *seed) {
  int k = rand_r(seed) % 1000;
  if (k < 3) {
    static const uint64_t nans[] = {0x7ff8000000000123ull, 0xfff8000000000456ull,
                                    0x7ff4000000000000ull};
    double d;
    memcpy(&d, &nans[k], 8);
    return d;
  }
  if (k < 250) return 0.0;
  if (k < 500) return -0.0;
  if (k < 750) return (double)(rand_r(seed) % 5) - 2.0;
  return ((double)rand_r(seed) / RAND_MAX - 0.5) * 100;
}

/* a value near 1 (multiply), of mixed sign and size (add) or mm_value's (max, min) as T's
 * bytes */
static void fill(cj_dtype dt, int rop, char *x, int64_t n, unsigned *seed) {
  for (int64_t i = 0; i < n; i++) {
    if (rop == RK_MAX || rop == RK_MIN) {
      double v = mm_value(seed);
      float f = (float)v;
      uint16_t h;
      if (v != v) { /* keep the NaN's kind and sign in every type */
        uint64_t b;
        memcpy(&b, &v, 8);
        uint32_t fb = (uint32_t)(b >> 32 & 0x80000000u) | 0x7f800000u | (uint32_t)(b >> 29 & 0x7fffffu);
        memcpy(&f, &fb, 4);
        h = (uint16_t)((b >> 48 & 0x8000u) | 0x7c00u | (b >> 42 & 0x3ffu));
      } else {
        h = dt == CJ_F16 ? cj_f32_to_f16(f) : to_bf16(f);
      }
      if (dt == CJ_BF16 && v != v) {
        uint32_t fb;
        memcpy(&fb, &f, 4);
        h = (uint16_t)(fb >> 16);
      }
      if (dt == CJ_F32) memcpy(x + 4 * i, &f, 4);
      if (dt == CJ_F64) memcpy(x + 8 * i, &v, 8);
      if (dt == CJ_BF16 || dt == CJ_F16) memcpy(x + 2 * i, &h, 2);
      continue;
    }
    double u = (double)rand_r(seed) / RAND_MAX - 0.5;
    double v = rop == RK_MUL ? 1.0 + u / 16 : u * (1 + (rand_r(seed) % 100));
    float f = (float)v;
    if (dt == CJ_F32) memcpy(x + 4 * i, &f, 4);
    if (dt == CJ_F64) memcpy(x + 8 * i, &v, 8);
    if (dt == CJ_BF16) {
      uint16_t h = to_bf16(f);
      memcpy(x + 2 * i, &h, 2);
    }
    if (dt == CJ_F16) {
      uint16_t h = (uint16_t)(0x3c00u + (rand_r(seed) % 0x0800u)); /* [1, 2) */
      if (rop == RK_ADD && (i & 1)) h |= 0x8000u;
      if (rop == RK_MUL) h = (uint16_t)(0x3b00u + (rand_r(seed) % 0x0200u)); /* near 1 */
      memcpy(x + 2 * i, &h, 2);
    }
  }
}

static void compare(const char *isa, const rk_fns *v, const rk_fns *g, cj_dtype dt, int rop) {
  static const int64_t ns[] = {16, 17, 31, 63, 64, 65, 100, 127, 256, 257, 300, 512, 1024, 1031};
  static const int64_t ms[] = {1, 3, 4, 5, 8, 9};
  int64_t es = cj_dtype_bytes(dt), ab = v->abytes;
  char *x = malloc((size_t)((MAXN + 3) * (MAXM + 1) * es)), a[MAXM * 8], b[MAXM * 8];
  static char va[MAXN * 8], vb[MAXN * 8];
  unsigned seed = 7u + (unsigned)dt * 31u + (unsigned)rop;
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
    for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++) {
      int64_t n = ns[i], m = ms[j], rs = (n + 3) * es; /* rows apart by more than n */
      fill(dt, rop, x, (rs / es) * (m + 1), &seed);
      memset(a, 0, sizeof a);
      memset(b, 0x55, sizeof b);
      v->hrows(a, x, n, m, rs);
      g->hrows(b, x, n, m, rs);
      CHECK_MSG(memcmp(a, b, (size_t)(m * ab)) == 0, "%s hrows %s op %d n %lld m %lld", isa,
                cj_dtype_get(dt)->id, rop, (long long)n, (long long)m);
      /* vertical: n accumulators (the first row's) folding rows 1 .. m, rs apart */
      memcpy(va, x, (size_t)(n * ab)); /* any bits: the same start for both */
      memcpy(vb, x, (size_t)(n * ab));
      v->vacc(va, x + rs, n, m, rs);
      g->vacc(vb, x + rs, n, m, rs);
      CHECK_MSG(memcmp(va, vb, (size_t)(n * ab)) == 0, "%s vacc %s op %d n %lld rows %lld", isa,
                cj_dtype_get(dt)->id, rop, (long long)n, (long long)m);
      memset(a, 0, sizeof a);
      memset(b, 0x55, sizeof b);
      v->hfold(a, x + rs, n, es);
      g->hfold(b, x + rs, n, es);
      CHECK_MSG(memcmp(a, b, (size_t)ab) == 0, "%s hfold %s op %d n %lld", isa,
                cj_dtype_get(dt)->id, rop, (long long)n);
    }
  free(x);
}

int main(void) {
  static const cj_dtype dts[] = {CJ_F32, CJ_F64, CJ_BF16, CJ_F16};
  cj_vm_isa have = cj_vm_get_isa();
  for (int s = CJ_VM_ISA_AVX2; s <= (int)have; s++)
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
      for (int rop = RK_ADD; rop <= RK_MIN; rop++) {
        const rk_fns *v = s == CJ_VM_ISA_AVX512 ? cj_rk_avx512(rop, dts[d]) : cj_rk_avx2(rop, dts[d]);
        const rk_fns *g = cj_rk_generic(rop, dts[d]);
        CHECK(v && g);
        if (v && g) compare(cj_vm_isa_name((cj_vm_isa)s), v, g, dts[d], rop);
      }
  if (have < CJ_VM_ISA_AVX512) printf("test_reduce_isa: no AVX-512 here, its kernels not run\n");
  return check_report("test_reduce_isa");
}
