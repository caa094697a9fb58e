/* The AVX2 f32 matrix-vector dot kernel (k_dot_gv.c) against the portable one it replaces: the
 * same bits for every length (full 64-lane steps, every tail), row stride, row count, and for
 * NaN/Inf/signed-zero inputs. Skipped (passes) where the CPU lacks AVX2. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/k_dot_gv.h"

static uint32_t rng = 12345u;
static float rnd(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)((int32_t)(rng >> 8) - (1 << 23)) / (float)(1 << 20);
}
static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static int fails = 0, cases = 0;

/* rows x kn matrix at row stride os, vector x; special: 0 none, 1 one NaN, 2 Inf, 3 +-Inf pair,
 * 4 Inf times zero, 5 signed zeros only, 6 huge values (overflow in the sums) */
static void run(cj_gv_dot_fn a, cj_gv_dot_fn b, int64_t kn, int64_t os, int64_t rows, int special) {
  float *m = malloc(sizeof(float) * (size_t)(os * (rows - 1) + kn + 1));
  float *x = malloc(sizeof(float) * (size_t)kn);
  for (int64_t i = 0; i < os * (rows - 1) + kn + 1; i++) m[i] = rnd();
  for (int64_t i = 0; i < kn; i++) x[i] = rnd();
  int64_t p = (int64_t)(rng % (uint32_t)kn), q = (int64_t)((rng >> 7) % (uint32_t)kn);
  switch (special) {
    case 1: m[p] = NAN; break;
    case 2: x[p] = INFINITY; break;
    case 3: m[p] = INFINITY, m[os * (rows - 1) + q] = -INFINITY, x[q] = 1; break;
    case 4: m[p] = INFINITY, x[p] = 0; break;
    case 5:
      for (int64_t i = 0; i < kn; i++) x[i] = (i & 1) ? -0.0f : 0.0f;
      for (int64_t i = 0; i < os * (rows - 1) + kn; i++) m[i] = (i % 3) ? -1.0f : 1.0f;
      break;
    case 6:
      for (int64_t i = 0; i < kn; i++) x[i] = 3e38f * (float)((i % 5) - 2);
      break;
    default: break;
  }
  float pa[CJ_GV_ROWS], pb[CJ_GV_ROWS];
  for (int r = 0; r < CJ_GV_ROWS; r++) pa[r] = pb[r] = -1234.5f;
  a(m, os, x, kn, rows, pa);
  b(m, os, x, kn, rows, pb);
  cases++;
  for (int r = 0; r < CJ_GV_ROWS; r++)
    if (bits(pa[r]) != bits(pb[r])) {
      if (fails++ < 10)
        fprintf(stderr, "kn=%lld os=%lld rows=%lld special=%d row %d: portable %08x avx2 %08x\n",
                (long long)kn, (long long)os, (long long)rows, special, r, bits(pa[r]),
                bits(pb[r]));
    }
  free(m);
  free(x);
}

int main(void) {
  cj_gv_dot_fn port = cj_gv_dot_portable(CJ_F32), avx2 = cj_gv_dot_avx2(CJ_F32);
  if (!port) {
    fprintf(stderr, "no portable f32 dot\n");
    return 1;
  }
  if (!avx2) {
    printf("gv_avx2: no AVX2 on this CPU, skipped\n");
    return 0;
  }
  static const int64_t big[] = {1000, 1024, 4099};
  for (int64_t kn = 1; kn <= 300 + 3; kn++) {
    int64_t n = kn <= 300 ? kn : big[kn - 301];
    for (int64_t rows = 1; rows <= CJ_GV_ROWS; rows++) {
      run(port, avx2, n, n, rows, 0);           /* contiguous rows */
      run(port, avx2, n, n + 1 + n % 7, rows, 0); /* strided rows */
      run(port, avx2, n, 0, rows, 0);           /* the same row repeated */
    }
    for (int s = 1; s <= 6; s++) run(port, avx2, n, n + 3, 1 + (int)(n % CJ_GV_ROWS), s);
  }
  printf("gv_avx2: %d cases, %d mismatches\n", cases, fails);
  return fails ? 1 : 0;
}
