/* cjrt: the lanes of @cjrt_threefry2x32 (k_rng.c), compiled once per instruction set by
 * k_rng_isa_<isa>.c, which defines TF_LANES (the function's name) before including this.
 *
 * TF_LANES(in, step, y0, y1, n): Threefry-2x32 with 20 rounds, for i in [0, n):
 *   (y0[i], y1[i]) = threefry(key (in[0][i*step[0]], in[1][i*step[1]]),
 *                              count (in[2][i*step[2]], in[3][i*step[3]]))
 * with each step 0 (a scalar operand) or 1. Blocks of TF_W lanes read contiguous runs (a scalar
 * is spread over a block once), so the lane loop vectorizes and the rotations, whose amounts
 * are constants, become single instructions where the set has them. */
#include "cpu/k_rng.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

enum { TF_W = 64 };

#define TF_R(d)                          \
  a += b;                                \
  b = ((b << (d)) | (b >> (32 - (d)))) ^ a;
#define TF_4A TF_R(13) TF_R(15) TF_R(26) TF_R(6)
#define TF_4B TF_R(17) TF_R(29) TF_R(16) TF_R(24)

static void tf_block(const uint32_t *restrict k0, const uint32_t *restrict k1,
                     const uint32_t *restrict x0, const uint32_t *restrict x1,
                     uint32_t *restrict y0, uint32_t *restrict y1, int64_t m) {
  for (int64_t i = 0; i < m; i++) {
    uint32_t ka = k0[i], kb = k1[i], kc = 0x1BD11BDAu ^ ka ^ kb;
    uint32_t a = x0[i] + ka, b = x1[i] + kb;
    TF_4A a += kb;
    b += kc + 1;
    TF_4B a += kc;
    b += ka + 2;
    TF_4A a += ka;
    b += kb + 3;
    TF_4B a += kb;
    b += kc + 4;
    TF_4A a += kc;
    b += ka + 5;
    y0[i] = a;
    y1[i] = b;
  }
}
#undef TF_R
#undef TF_4A
#undef TF_4B

void TF_LANES(const uint32_t *const in[4], const int64_t step[4], uint32_t *y0, uint32_t *y1,
              int64_t n) {
  uint32_t spread[4][TF_W];
  const uint32_t *p[4];
  for (int j = 0; j < 4; j++) {
    p[j] = in[j];
    if (step[j] == 0) {
      for (int k = 0; k < TF_W; k++) spread[j][k] = in[j][0];
      p[j] = spread[j];
    }
  }
  for (int64_t i = 0; i < n; i += TF_W) {
    int64_t m = n - i < TF_W ? n - i : TF_W;
    const uint32_t *q[4];
    for (int j = 0; j < 4; j++) q[j] = step[j] ? p[j] + i : p[j];
    tf_block(q[0], q[1], q[2], q[3], y0 + i, y1 + i, m);
  }
}
