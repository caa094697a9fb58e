/* cjrt: rng_bit_generator and rng.
 *
 * rng_bit_generator produces XLA's bit streams exactly (xla/hlo/builder/lib/prng.cc as the
 * RngBitGenerator expander uses them; DEFAULT is PHILOX, as on XLA:CPU):
 *   state   state[0] is the key (two 32-bit words, low first).
 *   THREE_FRY  (state of 2) Threefry-2x32 with 20 rounds on 64-bit counters state[1] + i.
 *           64-bit outputs: element i is the pair for counter i (low word first). Narrower
 *           outputs split the shape in halves along its first even dimension (else its
 *           largest): the pair for half-shape element (.., j, ..) gives elements 2j and 2j + 1
 *           of that dimension; the 32 bits are truncated to the element width. The new
 *           state is [key, state[1] + counters used].
 *   PHILOX  (state of 2 or 3) Philox-4x32 with 10 rounds on 128-bit counters (low, high) =
 *           (state[1], state[2]) or, with a state of 2, (state[1], state[0]); block i gives
 *           four words: elements 4i..4i+3 (32 bits and narrower, truncated), or two 64-bit
 *           elements 2i, 2i + 1 (words 0|1 and 2|3). The new state advances the low word (with
 *           a carry into the high word when it is kept) by the blocks used.
 * Floating-point outputs hold the same bits as the unsigned integer of their width (what
 * XLA:CPU returns). Outputs are split over the pool in counter ranges.
 *
 * rng (UNIFORM, NORMAL; the spec leaves the generator to the implementation): Philox-4x32 with
 * a key fixed per op (from its position in the program) and counters from 0, so an executable
 * gives the same values at every execution. UNIFORM floats: a + u (b - a) with u from 53 bits in
 * [0, 1), computed in f64 and rounded into the type, kept below b; UNIFORM integers: a + (64
 * random bits mod (b - a)); NORMAL: a + b z with z from the Box-Muller transform in f64. */
#include <math.h>
#include <string.h>

#include "cpu/k_rng.h"
#include "cpu/vmath.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif

/* ======================================================================== the generators */

/* Philox-4x32, 10 rounds */
static inline void philox4x32(uint32_t k0, uint32_t k1, uint32_t x[4]) {
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)x[0] * 0xD2511F53u, p1 = (uint64_t)x[2] * 0xCD9E8D57u;
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0, y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1;
    x[0] = y0;
    x[1] = (uint32_t)p1;
    x[2] = y2;
    x[3] = (uint32_t)p0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

/* the four words of Philox block (lo, hi) + i */
static inline void philox_block(uint32_t k0, uint32_t k1, uint64_t lo, uint64_t hi, uint64_t i,
                                uint32_t w[4]) {
  uint64_t l = lo + i, h = hi + (l < lo ? 1 : 0);
  w[0] = (uint32_t)l;
  w[1] = (uint32_t)(l >> 32);
  w[2] = (uint32_t)h;
  w[3] = (uint32_t)(h >> 32);
  philox4x32(k0, k1, w);
}

static inline void put_bits(char *out, int64_t i, int eb, uint64_t v, uint64_t mask) {
  v &= mask;
  switch (eb) {
    case 1: ((uint8_t *)out)[i] = (uint8_t)v; break;
    case 2: {
      uint16_t x = (uint16_t)v;
      memcpy(out + 2 * i, &x, 2);
      break;
    }
    case 4: {
      uint32_t x = (uint32_t)v;
      memcpy(out + 4 * i, &x, 4);
      break;
    }
    default: memcpy(out + 8 * i, &v, 8);
  }
}

/* ======================================================================== rng_bit_generator */

enum { ALG_THREE_FRY, ALG_PHILOX };

typedef struct rbg_params {
  int alg;
  int64_t nstate;     /* state elements (2 or 3) */
  int64_t n;          /* output elements */
  int eb;             /* output element bytes */
  bool wide;          /* 64-bit elements */
  uint64_t mask;      /* the element's bits */
  /* THREE_FRY, narrow: the split shape */
  int64_t outer, dsplit, inner, half; /* half = ceil(dsplit / 2) */
  int64_t units;      /* counters (three fry) or blocks (philox) the output uses */
  cj_threefry_lanes_fn lanes; /* three fry */
} rbg_params;

typedef struct rbg_run {
  const rbg_params *p;
  char *out;
  uint32_t k0, k1;
  uint64_t lo, hi; /* three fry: lo = counter base */
} rbg_run;

enum { RBG_W = 64 }; /* counters generated together (vectorizable) */

/* Threefry on RBG_W consecutive 64-bit counters c0 + k, through the lanes of the CPU's
 * instruction set (k_rng_tf.h) */
static void threefry_batch(cj_threefry_lanes_fn lanes, uint32_t k0, uint32_t k1, uint64_t c0,
                           uint32_t *x0, uint32_t *x1) {
  uint32_t lo[RBG_W], hi[RBG_W];
  for (int k = 0; k < RBG_W; k++) {
    uint64_t c = c0 + (uint64_t)k;
    lo[k] = (uint32_t)c;
    hi[k] = (uint32_t)(c >> 32);
  }
  const uint32_t *in[4] = {&k0, &k1, lo, hi};
  static const int64_t step[4] = {0, 0, 1, 1};
  lanes(in, step, x0, x1, RBG_W);
}

static cj_threefry_lanes_fn threefry_lanes(void) {
  cj_vm_isa isa = cj_vm_get_isa();
  return isa == CJ_VM_ISA_AVX512 ? cj_threefry_lanes_avx512
         : isa == CJ_VM_ISA_AVX2 ? cj_threefry_lanes_avx2
                                 : cj_threefry_lanes_generic;
}

/* Philox on RBG_W consecutive 128-bit counters (lo, hi) + i0 + k */
static void philox_batch(uint32_t k0, uint32_t k1, uint64_t lo, uint64_t hi, uint64_t i0,
                         uint32_t *restrict w0, uint32_t *restrict w1, uint32_t *restrict w2,
                         uint32_t *restrict w3) {
  uint32_t ka[10], kb[10];
  for (int r = 0; r < 10; r++) {
    ka[r] = k0 + (uint32_t)r * 0x9E3779B9u;
    kb[r] = k1 + (uint32_t)r * 0xBB67AE85u;
  }
  for (int k = 0; k < RBG_W; k++) {
    uint64_t l = lo + i0 + (uint64_t)k;
    uint64_t h = hi + (l < lo ? 1 : 0);
    uint32_t x0 = (uint32_t)l, x1 = (uint32_t)(l >> 32), x2 = (uint32_t)h, x3 = (uint32_t)(h >> 32);
    for (int r = 0; r < 10; r++) {
      uint64_t p0 = (uint64_t)x0 * 0xD2511F53u, p1 = (uint64_t)x2 * 0xCD9E8D57u;
      uint32_t y0 = (uint32_t)(p1 >> 32) ^ x1 ^ ka[r], y2 = (uint32_t)(p0 >> 32) ^ x3 ^ kb[r];
      x0 = y0;
      x1 = (uint32_t)p1;
      x2 = y2;
      x3 = (uint32_t)p0;
    }
    w0[k] = x0;
    w1[k] = x1;
    w2[k] = x2;
    w3[k] = x3;
  }
}

/* counter units [b, e) */
static void rbg_body(void *vr, int64_t b, int64_t e) {
  rbg_run *R = vr;
  const rbg_params *p = R->p;
  char *out = R->out;
  uint32_t x0[RBG_W], x1[RBG_W], x2[RBG_W], x3[RBG_W];
  if (p->alg == ALG_THREE_FRY) {
    /* the half-shape position of unit b: (o, j, t) (narrow outputs) */
    int64_t t = 0, j = 0, o = 0;
    if (!p->wide) {
      t = b % p->inner;
      j = (b / p->inner) % p->half;
      o = b / p->inner / p->half;
    }
    for (int64_t u0 = b; u0 < e; u0 += RBG_W) {
      threefry_batch(p->lanes, R->k0, R->k1, R->lo + (uint64_t)u0, x0, x1);
      int64_t cnt = e - u0 < RBG_W ? e - u0 : RBG_W;
      if (p->wide) {
        for (int64_t k = 0; k < cnt; k++)
          put_bits(out, u0 + k, 8, (uint64_t)x0[k] | ((uint64_t)x1[k] << 32), p->mask);
        continue;
      }
      for (int64_t k = 0; k < cnt; k++) {
        int64_t base = (o * p->dsplit + 2 * j) * p->inner + t;
        put_bits(out, base, p->eb, x0[k], p->mask);
        if (2 * j + 1 < p->dsplit) put_bits(out, base + p->inner, p->eb, x1[k], p->mask);
        if (++t == p->inner) {
          t = 0;
          if (++j == p->half) j = 0, o++;
        }
      }
    }
    return;
  }
  for (int64_t u0 = b; u0 < e; u0 += RBG_W) {
    philox_batch(R->k0, R->k1, R->lo, R->hi, (uint64_t)u0, x0, x1, x2, x3);
    int64_t cnt = e - u0 < RBG_W ? e - u0 : RBG_W;
    if (p->wide) {
      for (int64_t k = 0; k < cnt; k++) {
        int64_t i = 2 * (u0 + k);
        put_bits(out, i, 8, (uint64_t)x0[k] | ((uint64_t)x1[k] << 32), p->mask);
        if (i + 1 < p->n) put_bits(out, i + 1, 8, (uint64_t)x2[k] | ((uint64_t)x3[k] << 32), p->mask);
      }
    } else {
      for (int64_t k = 0; k < cnt; k++) {
        int64_t i = 4 * (u0 + k);
        uint32_t w[4] = {x0[k], x1[k], x2[k], x3[k]};
        int m = p->n - i < 4 ? (int)(p->n - i) : 4;
        for (int c = 0; c < m; c++) put_bits(out, i + c, p->eb, w[c], p->mask);
      }
    }
  }
}

static CJ_MUST_USE cj_status k_rbg(cj_exec_ctx *ctx, const cj_step *st) {
  const rbg_params *p = st->params;
  uint64_t s[3] = {0, 0, 0};
  memcpy(s, CJ_PTR(ctx, st->in[0]), (size_t)(8 * p->nstate));
  rbg_run R = {p, CJ_PTR(ctx, st->out[1]), (uint32_t)s[0], (uint32_t)(s[0] >> 32), s[1],
               p->nstate >= 3 ? s[2] : s[0]};
  if (p->units > 0) {
    if (ctx->pool && cj_pool_size(ctx->pool) > 1 && p->units >= 8192)
      cj_pool_parallel_for(ctx->pool, p->units, 4096, rbg_body, &R);
    else
      rbg_body(&R, 0, p->units);
  }
  uint64_t ns[3] = {s[0], s[1] + (uint64_t)p->units, s[2]};
  if (p->alg == ALG_PHILOX && p->nstate >= 3 && ns[1] < s[1]) ns[2]++;
  memcpy(CJ_PTR(ctx, st->out[0]), ns, (size_t)(8 * p->nstate));
  return NULL;
}

cj_status cj_lower_rng_bit_generator(cj_lw *L, cj_op *op) {
  int32_t alg = CJ_RNG_ALGORITHM_DEFAULT;
  if (!cj_op_get_enum(op, "rng_algorithm", CJ_EK_RNG_ALGORITHM, &alg))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing rng_algorithm");
  cj_lw_tensor s, os, o;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &s));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &os));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 1, &o));
  if (s.rank != 1 || (s.dtype != CJ_U64 && s.dtype != CJ_S64) || os.dtype != s.dtype ||
      os.nelems != s.nelems)
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "initial_state must be a 1-dimensional tensor of ui64 (or i64)");
  rbg_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->alg = alg == CJ_RNG_ALGORITHM_THREE_FRY ? ALG_THREE_FRY : ALG_PHILOX;
  p->lanes = threefry_lanes();
  p->nstate = s.nelems;
  if (p->alg == ALG_THREE_FRY ? p->nstate != 2 : (p->nstate != 2 && p->nstate != 3))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "a %s state has %s elements, got %lld",
                       p->alg == ALG_THREE_FRY ? "THREE_FRY" : "PHILOX",
                       p->alg == ALG_THREE_FRY ? "2" : "2 or 3", (long long)p->nstate);
  cj_dtype_kind k = cj_dtype_kindof(o.dtype);
  int bits = cj_dtype_bits(o.dtype);
  if ((k != CJ_DK_SINT && k != CJ_DK_UINT && k != CJ_DK_FLOAT) ||
      (bits != 2 && bits != 4 && bits != 8 && bits != 16 && bits != 32 && bits != 64))
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "output element type %s is not supported (integers and floats of 2, 4, 8, "
                       "16, 32 or 64 bits)",
                       cj_dtype_get(o.dtype)->id);
  p->n = o.nelems;
  p->eb = cj_dtype_bytes(o.dtype);
  p->wide = bits == 64;
  p->mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
  if (p->alg == ALG_THREE_FRY) {
    if (p->wide) {
      p->units = p->n;
    } else if (o.rank == 0) {
      p->outer = p->inner = 1;
      p->dsplit = 1;
      p->half = 1;
      p->units = 1;
    } else {
      int32_t sd = -1;
      for (int32_t d = 0; d < o.rank && sd < 0; d++)
        if (o.dims[d] % 2 == 0) sd = d;
      if (sd < 0) {
        sd = 0;
        for (int32_t d = 1; d < o.rank; d++)
          if (o.dims[d] > o.dims[sd]) sd = d;
      }
      p->outer = 1;
      p->inner = 1;
      for (int32_t d = 0; d < sd; d++) p->outer *= o.dims[d];
      for (int32_t d = sd + 1; d < o.rank; d++) p->inner *= o.dims[d];
      p->dsplit = o.dims[sd];
      p->half = (p->dsplit + 1) / 2;
      p->units = p->outer * p->half * p->inner;
    }
  } else {
    int64_t words = p->wide ? 2 * p->n : p->n;
    p->units = (words + 3) / 4;
  }
  cj_lw_add_cost(L, 40.0 * (double)p->units, 0);
  int32_t outs[2] = {os.buf, o.buf};
  if (!cj_lw_emit(L, op, k_rbg, p, 1, &s.buf, 2, outs)) return cj_oom();
  return NULL;
}

/* ======================================================================== rng */

enum { RNG_CHUNK = 512 };

typedef struct rng_params {
  bool normal, is_float, is_signed;
  cj_dtype dt;
  int64_t n;
  int eb;
  uint32_t k0, k1;
  /* scalar loads of a, b; chunk stores: through f64 for floats, s64 otherwise */
  cj_ew_fn ld, st;
  cj_ew_aux aux_ld, aux_st;
} rng_params;

typedef struct rng_run {
  const rng_params *p;
  char *out;
  double fa, fb, thr, pred; /* floats: a, b, the rounding threshold below b, the value used above */
  int64_t ia;
  uint64_t range;
  bool degenerate;
} rng_run;

/* 53-bit uniform in [0, 1) from two words */
static inline double u53(uint32_t hi, uint32_t lo) {
  return (double)(((uint64_t)hi << 21) ^ (lo >> 11)) * 0x1.0p-53;
}

static void rng_chunk(rng_run *R, int64_t c) {
  const rng_params *p = R->p;
  int64_t i0 = c * RNG_CHUNK, cnt = p->n - i0 < RNG_CHUNK ? p->n - i0 : RNG_CHUNK;
  union {
    double f[RNG_CHUNK];
    int64_t s[RNG_CHUNK];
  } buf;
  /* two elements per Philox block (four words); blocks numbered from the chunk's first element */
  for (int64_t i = 0; i < cnt; i += 2) {
    uint32_t w[4];
    philox_block(p->k0, p->k1, 0, 0, (uint64_t)((i0 + i) / 2), w);
    if (p->normal) {
      double u1 = ((double)(((uint64_t)w[0] << 21) ^ (w[1] >> 11)) + 0.5) * 0x1.0p-53;
      double u2 = u53(w[2], w[3]);
      double rr = sqrt(-2.0 * log(u1)), th = 6.283185307179586476925286766559 * u2;
      buf.f[i] = R->fa + R->fb * rr * cos(th);
      if (i + 1 < cnt) buf.f[i + 1] = R->fa + R->fb * rr * sin(th);
    } else if (p->is_float) {
      for (int q = 0; q < 2 && i + q < cnt; q++) {
        double v = R->degenerate ? R->fa : R->fa + u53(w[2 * q], w[2 * q + 1]) * (R->fb - R->fa);
        if (!R->degenerate && v >= R->thr) v = R->pred;
        buf.f[i + q] = v;
      }
    } else {
      for (int q = 0; q < 2 && i + q < cnt; q++) {
        uint64_t r = ((uint64_t)w[2 * q + 1] << 32) | w[2 * q];
        buf.s[i + q] = R->degenerate ? R->ia : (int64_t)((uint64_t)R->ia + r % R->range);
      }
    }
  }
  char *dst = R->out + i0 * p->eb;
  if (p->is_float)
    p->st(dst, buf.f, NULL, NULL, cnt, &p->aux_st);
  else
    p->st(dst, buf.s, NULL, NULL, cnt, &p->aux_st);
}

static void rng_body(void *vr, int64_t b, int64_t e) {
  for (int64_t c = b; c < e; c++) rng_chunk(vr, c);
}

/* the value of type dt just below v (v already representable) */
static double float_pred(cj_dtype dt, double v) {
  uint64_t u = cj_float_encode(dt, v);
  if (v > 0)
    u -= 1;
  else if (v < 0)
    u += 1;
  else
    u = (1ull << (cj_dtype_bits(dt) - 1)) | 1; /* below zero: the smallest negative */
  return cj_float_decode(dt, u);
}

static CJ_MUST_USE cj_status k_rng(cj_exec_ctx *ctx, const cj_step *st) {
  const rng_params *p = st->params;
  rng_run R;
  memset(&R, 0, sizeof R);
  R.p = p;
  R.out = CJ_PTR(ctx, st->out[0]);
  const char *pa = CJ_PTR(ctx, st->in[0]), *pb = CJ_PTR(ctx, st->in[1]);
  if (p->is_float) {
    p->ld(&R.fa, pa, NULL, NULL, 1, &p->aux_ld);
    p->ld(&R.fb, pb, NULL, NULL, 1, &p->aux_ld);
    if (!p->normal) {
      R.degenerate = !(R.fb > R.fa);
      if (!R.degenerate) {
        /* values at or above the midpoint between b's predecessor in the type and b would
         * round to b: keep them at the predecessor */
        double bt = R.fb;
        R.pred = float_pred(p->dt, bt);
        R.thr = p->dt == CJ_F64 ? bt : R.pred + (bt - R.pred) * 0.5;
        if (!(R.pred >= R.fa)) R.degenerate = true;
      }
    }
  } else {
    int64_t b = 0;
    p->ld(&R.ia, pa, NULL, NULL, 1, &p->aux_ld);
    p->ld(&b, pb, NULL, NULL, 1, &p->aux_ld);
    R.degenerate = p->is_signed ? b <= R.ia : (uint64_t)b <= (uint64_t)R.ia;
    R.range = (uint64_t)b - (uint64_t)R.ia;
  }
  int64_t chunks = (p->n + RNG_CHUNK - 1) / RNG_CHUNK;
  if (ctx->pool && cj_pool_size(ctx->pool) > 1 && chunks >= 8)
    cj_pool_parallel_for(ctx->pool, chunks, 4, rng_body, &R);
  else
    rng_body(&R, 0, chunks);
  return NULL;
}

cj_status cj_lower_rng(cj_lw *L, cj_op *op) {
  int32_t dist = CJ_RNG_DISTRIBUTION_UNIFORM;
  if (!cj_op_get_enum(op, "rng_distribution", CJ_EK_RNG_DISTRIBUTION, &dist))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing rng_distribution");
  cj_lw_tensor a, b, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &a));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &b));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  if (a.nelems != 1 || b.nelems != 1 || a.dtype != r.dtype || b.dtype != r.dtype)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "a and b must be scalars of the result's type");
  rng_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  cj_dtype_kind k = cj_dtype_kindof(r.dtype);
  p->dt = r.dtype;
  p->normal = dist == CJ_RNG_DISTRIBUTION_NORMAL;
  p->is_float = k == CJ_DK_FLOAT;
  p->is_signed = k == CJ_DK_SINT;
  if (!p->is_float && k != CJ_DK_SINT && k != CJ_DK_UINT && k != CJ_DK_BOOL)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "element type %s is not supported",
                       cj_dtype_get(r.dtype)->id);
  if (p->normal && !p->is_float)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "a NORMAL distribution needs a floating-point type");
  p->n = r.nelems;
  p->eb = cj_dtype_bytes(r.dtype);
  /* the key: fixed per op, from its position in the program */
  uint64_t h = 0x9E3779B97F4A7C15ull * (uint64_t)(cj_lw_pos(L) + 1);
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  p->k0 = (uint32_t)h;
  p->k1 = (uint32_t)(h >> 32);
  cj_dtype ct = p->is_float ? CJ_F64 : CJ_S64;
  cj_ew_fn ld = cj_cvt_lookup(r.dtype, ct), sto = cj_cvt_lookup(ct, r.dtype);
  if (!ld || !sto)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "element type %s is not supported",
                       cj_dtype_get(r.dtype)->id);
  p->ld = ld;
  p->st = sto;
  p->aux_ld.src = r.dtype;
  p->aux_ld.dt = ct;
  p->aux_st.src = ct;
  p->aux_st.dt = r.dtype;
  cj_lw_add_cost(L, 20.0 * (double)p->n, p->normal ? 2.0 * (double)p->n : 0);
  int32_t ins[2] = {a.buf, b.buf};
  if (!cj_lw_emit(L, op, k_rng, p, 2, ins, 1, &r.buf)) return cj_oom();
  return NULL;
}

/* ======================================================================== @cjrt_threefry2x32
 * custom_call @cjrt_threefry2x32(k0, k1, x0, x1) -> (y0, y1): JAX's threefry2x32 primitive
 * (Threefry-2x32, 20 rounds, key (k0, k1), counts (x0, x1)), which python/jax_plugins/cjrt
 * lowers to this call on cjrt instead of JAX's default rule: 20 rounds of elementwise ops per
 * element that ran here as a chain of fused vector steps, about 3x XLA:CPU's compiled loop.
 * All ui32; the two results have one shape; each operand has that shape or one element (a
 * scalar key). The lanes run in the widest instruction set the CPU has (k_rng_isa_*.c), split
 * over the pool in contiguous ranges when large. */

typedef struct tf_params {
  int64_t n;
  int64_t step[4]; /* 0: one element */
  cj_threefry_lanes_fn lanes;
} tf_params;

typedef struct tf_run {
  const tf_params *p;
  const uint32_t *in[4];
  uint32_t *y0, *y1;
} tf_run;

static void tf_body(void *vr, int64_t b, int64_t e) {
  const tf_run *R = vr;
  const uint32_t *in[4];
  for (int j = 0; j < 4; j++) in[j] = R->in[j] + b * R->p->step[j];
  R->p->lanes(in, R->p->step, R->y0 + b, R->y1 + b, e - b);
}

static CJ_MUST_USE cj_status k_threefry2x32(cj_exec_ctx *ctx, const cj_step *st) {
  const tf_params *p = st->params;
  tf_run R = {.p = p, .y0 = (uint32_t *)CJ_PTR(ctx, st->out[0]),
              .y1 = (uint32_t *)CJ_PTR(ctx, st->out[1])};
  for (int j = 0; j < 4; j++) R.in[j] = (const uint32_t *)CJ_PTR(ctx, st->in[j]);
  /* about 4 ns an element on one core: split from 16K elements (~60 us) */
  if (ctx->pool && cj_pool_size(ctx->pool) > 1 && p->n >= 16384)
    cj_pool_parallel_for(ctx->pool, p->n, 8192, tf_body, &R);
  else
    tf_body(&R, 0, p->n);
  return NULL;
}

cj_status cj_lower_cc_threefry2x32(cj_lw *L, cj_op *op) {
  static const char T[] = "cjrt_threefry2x32";
  cj_lw_tensor in[4], out[2];
  bool ok = op->nopnds == 4 && op->nresults == 2;
  for (uint32_t i = 0; ok && i < 2; i++) {
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, i, &out[i]));
    ok = out[i].dtype == CJ_U32 && out[i].type == out[0].type;
  }
  for (uint32_t j = 0; ok && j < 4; j++) {
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, j, &in[j]));
    ok = in[j].dtype == CJ_U32 && (in[j].nelems == 1 || in[j].type == out[0].type);
  }
  if (!ok)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "custom_call @%s takes four ui32 operands (k0, k1, x0, x1), each of the "
                       "results' shape or of one element, and returns two ui32 results of one "
                       "shape", T);
  if (out[0].nelems == 0) return NULL; /* nothing to write */
  tf_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->n = out[0].nelems;
  for (int j = 0; j < 4; j++) p->step[j] = in[j].nelems == 1 ? 0 : 1;
  p->lanes = threefry_lanes();
  cj_lw_add_cost(L, 130.0 * (double)p->n, 0);
  int32_t ins[4] = {in[0].buf, in[1].buf, in[2].buf, in[3].buf}, outs[2] = {out[0].buf, out[1].buf};
  if (!cj_lw_emit(L, op, k_threefry2x32, p, 4, ins, 2, outs)) return cj_oom();
  return NULL;
}
