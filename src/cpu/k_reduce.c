/* cjrt: stablehlo.reduce. Bodies that are one add/multiply/maximum/minimum/and/or/xor of the two
 * arguments run as fast kernels (vertical: whole rows combined when the innermost dimension is
 * kept; horizontal: contiguous runs folded with several accumulators when it is reduced); any
 * other body (variadic reductions such as argmax, promoted types) runs as a nested plan per
 * element, in index order. Small floats (bf16, f16) are rounded after every step, as the body
 * computes in their type. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/lower.h"

void cj_lw_add_cost(cj_lw *L, double flops, double transcendentals);

typedef struct c64_t {
  float re, im;
} c64_t;
typedef struct c128_t {
  double re, im;
} c128_t;

enum { R_ADD, R_MUL, R_MAX, R_MIN, R_AND, R_OR, R_XOR, R_COUNT };

/* vertical: acc[j] = acc[j] op x[j]; horizontal: *acc = fold(*acc, x[0..n) with byte stride) */
typedef void (*vfn_t)(void *acc, const void *x, int64_t n);
typedef void (*hfn_t)(void *acc, const char *x, int64_t n, int64_t stride);

static inline float fmaxp(float x, float y) {
  return x != x ? x : (y != y ? y : (x > y ? x : (y > x ? y : (signbit(x) ? y : x))));
}
static inline double dmaxp(double x, double y) {
  return x != x ? x : (y != y ? y : (x > y ? x : (y > x ? y : (signbit(x) ? y : x))));
}
static inline float fminp(float x, float y) {
  return x != x ? x : (y != y ? y : (x < y ? x : (y < x ? y : (signbit(x) ? x : y))));
}
static inline double dminp(double x, double y) {
  return x != x ? x : (y != y ? y : (x < y ? x : (y < x ? y : (signbit(x) ? x : y))));
}

#define RED(name, T, EXPR)                                                              \
  static void v_##name(void *acc_, const void *x_, int64_t n) {                          \
    T *acc = acc_;                                                                       \
    const T *xs = x_;                                                                    \
    for (int64_t j = 0; j < n; j++) {                                                    \
      T a = acc[j], b = xs[j];                                                           \
      acc[j] = (EXPR);                                                                   \
    }                                                                                    \
  }                                                                                      \
  static void h_##name(void *acc_, const char *x, int64_t n, int64_t stride) {           \
    T a;                                                                                 \
    memcpy(&a, acc_, sizeof(T));                                                         \
    if (stride == (int64_t)sizeof(T) && n >= 32) {                                       \
      const T *xs = (const T *)x;                                                        \
      T p[8];                                                                            \
      for (int k = 0; k < 8; k++) p[k] = xs[k];                                          \
      int64_t j = 8;                                                                     \
      for (; j + 8 <= n; j += 8)                                                         \
        for (int k = 0; k < 8; k++) {                                                    \
          T a = p[k], b = xs[j + k];                                                     \
          p[k] = (EXPR);                                                                 \
        }                                                                                \
      for (int k = 0; k < 8; k++) {                                                      \
        T b = p[k];                                                                      \
        a = (EXPR);                                                                      \
      }                                                                                  \
      for (; j < n; j++) {                                                               \
        T b = xs[j];                                                                     \
        a = (EXPR);                                                                      \
      }                                                                                  \
    } else {                                                                             \
      for (int64_t j = 0; j < n; j++) {                                                  \
        T b;                                                                             \
        memcpy(&b, x + j * stride, sizeof(T));                                           \
        a = (EXPR);                                                                      \
      }                                                                                  \
    }                                                                                    \
    memcpy(acc_, &a, sizeof(T));                                                         \
  }

#define RED_INT(S, T)                 \
  RED(add_##S, T, (T)(a + b))         \
  RED(mul_##S, T, (T)(a * b))         \
  RED(max_##S, T, a > b ? a : b)      \
  RED(min_##S, T, a < b ? a : b)      \
  RED(and_##S, T, (T)(a & b))         \
  RED(or_##S, T, (T)(a | b))          \
  RED(xor_##S, T, (T)(a ^ b))
/* unsigned arithmetic for the wrapping ops on signed types */
RED(add_s8, int8_t, (int8_t)(uint8_t)((unsigned)(uint8_t)a + (unsigned)(uint8_t)b))
RED(mul_s8, int8_t, (int8_t)(uint8_t)((unsigned)(uint8_t)a * (unsigned)(uint8_t)b))
RED(max_s8, int8_t, a > b ? a : b)
RED(min_s8, int8_t, a < b ? a : b)
RED(and_s8, int8_t, (int8_t)(a & b))
RED(or_s8, int8_t, (int8_t)(a | b))
RED(xor_s8, int8_t, (int8_t)(a ^ b))
RED(add_s16, int16_t, (int16_t)(uint16_t)((unsigned)(uint16_t)a + (unsigned)(uint16_t)b))
RED(mul_s16, int16_t, (int16_t)(uint16_t)((unsigned)(uint16_t)a * (unsigned)(uint16_t)b))
RED(max_s16, int16_t, a > b ? a : b)
RED(min_s16, int16_t, a < b ? a : b)
RED(and_s16, int16_t, (int16_t)(a & b))
RED(or_s16, int16_t, (int16_t)(a | b))
RED(xor_s16, int16_t, (int16_t)(a ^ b))
RED(add_s32, int32_t, (int32_t)((uint32_t)a + (uint32_t)b))
RED(mul_s32, int32_t, (int32_t)((uint32_t)a * (uint32_t)b))
RED(max_s32, int32_t, a > b ? a : b)
RED(min_s32, int32_t, a < b ? a : b)
RED(and_s32, int32_t, a & b)
RED(or_s32, int32_t, a | b)
RED(xor_s32, int32_t, a ^ b)
RED(add_s64, int64_t, (int64_t)((uint64_t)a + (uint64_t)b))
RED(mul_s64, int64_t, (int64_t)((uint64_t)a * (uint64_t)b))
RED(max_s64, int64_t, a > b ? a : b)
RED(min_s64, int64_t, a < b ? a : b)
RED(and_s64, int64_t, a & b)
RED(or_s64, int64_t, a | b)
RED(xor_s64, int64_t, a ^ b)
RED(add_u8, uint8_t, (uint8_t)((unsigned)a + b))
RED(mul_u8, uint8_t, (uint8_t)((unsigned)a * b))
RED(max_u8, uint8_t, a > b ? a : b)
RED(min_u8, uint8_t, a < b ? a : b)
RED(and_u8, uint8_t, (uint8_t)(a & b))
RED(or_u8, uint8_t, (uint8_t)(a | b))
RED(xor_u8, uint8_t, (uint8_t)(a ^ b))
RED(add_u16, uint16_t, (uint16_t)((unsigned)a + b))
RED(mul_u16, uint16_t, (uint16_t)((unsigned)a * b))
RED(max_u16, uint16_t, a > b ? a : b)
RED(min_u16, uint16_t, a < b ? a : b)
RED(and_u16, uint16_t, (uint16_t)(a & b))
RED(or_u16, uint16_t, (uint16_t)(a | b))
RED(xor_u16, uint16_t, (uint16_t)(a ^ b))
RED_INT(u32, uint32_t)
RED_INT(u64, uint64_t)
RED(or_pred, uint8_t, (uint8_t)(a | b))
RED(and_pred, uint8_t, (uint8_t)(a & b))
RED(xor_pred, uint8_t, (uint8_t)(a ^ b))
RED(add_f32, float, a + b)
RED(mul_f32, float, a *b)
RED(max_f32, float, fmaxp(a, b))
RED(min_f32, float, fminp(a, b))
RED(add_f64, double, a + b)
RED(mul_f64, double, a *b)
RED(max_f64, double, dmaxp(a, b))
RED(min_f64, double, dminp(a, b))
RED(add_c64, c64_t, ((c64_t){a.re + b.re, a.im + b.im}))
RED(mul_c64, c64_t, ((c64_t){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}))
RED(add_c128, c128_t, ((c128_t){a.re + b.re, a.im + b.im}))
RED(mul_c128, c128_t, ((c128_t){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}))

/* bf16/f16: the accumulator is kept in the storage type, each step rounded */
#define RED_SMALL(name, LOAD, STORE, EXPR)                                               \
  static void v_##name(void *acc_, const void *x_, int64_t n) {                          \
    uint16_t *acc = acc_;                                                                \
    const uint16_t *xs = x_;                                                             \
    for (int64_t j = 0; j < n; j++) {                                                    \
      float a = LOAD(acc[j]), b = LOAD(xs[j]);                                           \
      acc[j] = STORE(EXPR);                                                              \
    }                                                                                    \
  }                                                                                      \
  static void h_##name(void *acc_, const char *x, int64_t n, int64_t stride) {           \
    uint16_t av;                                                                         \
    memcpy(&av, acc_, 2);                                                                \
    float a = LOAD(av);                                                                  \
    for (int64_t j = 0; j < n; j++) {                                                    \
      uint16_t bv;                                                                       \
      memcpy(&bv, x + j * stride, 2);                                                    \
      float b = LOAD(bv);                                                                \
      a = LOAD(STORE(EXPR));                                                             \
    }                                                                                    \
    av = STORE(a);                                                                       \
    memcpy(acc_, &av, 2);                                                                \
  }
RED_SMALL(add_bf16, cj_bf16_to_f32, cj_f32_to_bf16, a + b)
RED_SMALL(mul_bf16, cj_bf16_to_f32, cj_f32_to_bf16, a *b)
RED_SMALL(max_bf16, cj_bf16_to_f32, cj_f32_to_bf16, fmaxp(a, b))
RED_SMALL(min_bf16, cj_bf16_to_f32, cj_f32_to_bf16, fminp(a, b))
RED_SMALL(add_f16, cj_f16_to_f32, cj_f32_to_f16, a + b)
RED_SMALL(mul_f16, cj_f16_to_f32, cj_f32_to_f16, a *b)
RED_SMALL(max_f16, cj_f16_to_f32, cj_f32_to_f16, fmaxp(a, b))
RED_SMALL(min_f16, cj_f16_to_f32, cj_f32_to_f16, fminp(a, b))

static bool red_fns(int rop, cj_dtype dt, vfn_t *v, hfn_t *h) {
#define CASE(DT, S)                                        \
  case CJ_##DT:                                            \
    switch (rop) {                                         \
      case R_ADD: *v = v_add_##S; *h = h_add_##S; return true; \
      case R_MUL: *v = v_mul_##S; *h = h_mul_##S; return true; \
      case R_MAX: *v = v_max_##S; *h = h_max_##S; return true; \
      case R_MIN: *v = v_min_##S; *h = h_min_##S; return true; \
      case R_AND: *v = v_and_##S; *h = h_and_##S; return true; \
      case R_OR: *v = v_or_##S; *h = h_or_##S; return true;    \
      case R_XOR: *v = v_xor_##S; *h = h_xor_##S; return true; \
      default: return false;                               \
    }
  switch (dt) {
    CASE(S8, s8)
    CASE(S16, s16)
    CASE(S32, s32)
    CASE(S64, s64)
    CASE(U8, u8)
    CASE(U16, u16)
    CASE(U32, u32)
    CASE(U64, u64)
    case CJ_PRED:
      switch (rop) {
        case R_ADD: case R_MAX: case R_OR: *v = v_or_pred; *h = h_or_pred; return true;
        case R_MUL: case R_MIN: case R_AND: *v = v_and_pred; *h = h_and_pred; return true;
        case R_XOR: *v = v_xor_pred; *h = h_xor_pred; return true;
        default: return false;
      }
    case CJ_F32:
      switch (rop) {
        case R_ADD: *v = v_add_f32; *h = h_add_f32; return true;
        case R_MUL: *v = v_mul_f32; *h = h_mul_f32; return true;
        case R_MAX: *v = v_max_f32; *h = h_max_f32; return true;
        case R_MIN: *v = v_min_f32; *h = h_min_f32; return true;
        default: return false;
      }
    case CJ_F64:
      switch (rop) {
        case R_ADD: *v = v_add_f64; *h = h_add_f64; return true;
        case R_MUL: *v = v_mul_f64; *h = h_mul_f64; return true;
        case R_MAX: *v = v_max_f64; *h = h_max_f64; return true;
        case R_MIN: *v = v_min_f64; *h = h_min_f64; return true;
        default: return false;
      }
    case CJ_BF16:
      switch (rop) {
        case R_ADD: *v = v_add_bf16; *h = h_add_bf16; return true;
        case R_MUL: *v = v_mul_bf16; *h = h_mul_bf16; return true;
        case R_MAX: *v = v_max_bf16; *h = h_max_bf16; return true;
        case R_MIN: *v = v_min_bf16; *h = h_min_bf16; return true;
        default: return false;
      }
    case CJ_F16:
      switch (rop) {
        case R_ADD: *v = v_add_f16; *h = h_add_f16; return true;
        case R_MUL: *v = v_mul_f16; *h = h_mul_f16; return true;
        case R_MAX: *v = v_max_f16; *h = h_max_f16; return true;
        case R_MIN: *v = v_min_f16; *h = h_min_f16; return true;
        default: return false;
      }
    case CJ_C64:
      if (rop == R_ADD) { *v = v_add_c64; *h = h_add_c64; return true; }
      if (rop == R_MUL) { *v = v_mul_c64; *h = h_mul_c64; return true; }
      return false;
    case CJ_C128:
      if (rop == R_ADD) { *v = v_add_c128; *h = h_add_c128; return true; }
      if (rop == R_MUL) { *v = v_mul_c128; *h = h_mul_c128; return true; }
      return false;
    default: return false;
  }
#undef CASE
}

/* ======================================================================== index spaces */

typedef struct space {
  int32_t rank;
  int64_t dims[CJ_MAX_RANK];
  int64_t str[CJ_MAX_RANK]; /* bytes */
} space;

static void space_push(space *s, int64_t dim, int64_t str) {
  if (dim == 1) return;
  if (s->rank > 0 && s->str[s->rank - 1] == str * dim) {
    s->dims[s->rank - 1] *= dim;
    s->str[s->rank - 1] = str;
    return;
  }
  s->dims[s->rank] = dim;
  s->str[s->rank] = str;
  s->rank++;
}

static int64_t space_size(const space *s) {
  int64_t n = 1;
  for (int32_t d = 0; d < s->rank; d++) n *= s->dims[d];
  return n;
}

/* byte offset of linear index i in space s */
static int64_t space_off(const space *s, int64_t i) {
  int64_t off = 0;
  for (int32_t d = s->rank - 1; d >= 0; d--) {
    off += (i % s->dims[d]) * s->str[d];
    i /= s->dims[d];
  }
  return off;
}

/* ======================================================================== fast path */

typedef struct fast_params {
  space kept, red;   /* input strides; kept in output order */
  int esize;
  bool vertical;     /* innermost input dim kept (stride esize, last of kept) */
  int64_t vlen;      /* vertical: the innermost kept run */
  vfn_t v;
  hfn_t h;
  int64_t nout;
} fast_params;

typedef struct fast_run {
  const fast_params *p;
  char *out;
  const char *in, *init;
} fast_run;

static void fast_range(fast_run *R, int64_t o0, int64_t o1) {
  const fast_params *p = R->p;
  int es = p->esize;
  if (p->vertical) {
    /* o ranges over the outer kept indices (rows of vlen) */
    space outer = p->kept;
    outer.rank--; /* drop the innermost run */
    int64_t nred = space_size(&p->red);
    for (int64_t o = o0; o < o1; o++) {
      char *acc = R->out + o * p->vlen * es;
      for (int64_t j = 0; j < p->vlen; j++) memcpy(acc + j * es, R->init, (size_t)es);
      const char *base = R->in + space_off(&outer, o);
      for (int64_t r = 0; r < nred; r++) p->v(acc, base + space_off(&p->red, r), p->vlen);
    }
    return;
  }
  /* horizontal: innermost reduced run folded per output element */
  space outer_red = p->red;
  int64_t run = 1, rstr = es;
  if (outer_red.rank > 0) {
    outer_red.rank--;
    run = p->red.dims[p->red.rank - 1];
    rstr = p->red.str[p->red.rank - 1];
  }
  int64_t nouter = space_size(&outer_red);
  for (int64_t o = o0; o < o1; o++) {
    char *acc = R->out + o * es;
    memcpy(acc, R->init, (size_t)es);
    const char *base = R->in + space_off(&p->kept, o);
    for (int64_t r = 0; r < nouter; r++) p->h(acc, base + space_off(&outer_red, r), run, rstr);
  }
}

static void fast_body(void *ctx, int64_t b, int64_t e) { fast_range(ctx, b, e); }

/* A full reduction of one contiguous run (e.g. the sum of a vector) splits the run across the
 * pool: each chunk folds into a partial value seeded with its first element, and the partials
 * are folded into the init value at the end (any association is allowed by the spec). */
enum { SPLIT_CHUNKS = 64 };
typedef struct split_run {
  const fast_params *p;
  const char *in;
  int64_t n, chunk;
  char partial[SPLIT_CHUNKS][16];
} split_run;

static void split_body(void *ctx, int64_t b, int64_t e) {
  split_run *S = ctx;
  int es = S->p->esize;
  for (int64_t c = b; c < e; c++) {
    int64_t lo = c * S->chunk, hi = lo + S->chunk < S->n ? lo + S->chunk : S->n;
    memcpy(S->partial[c], S->in + lo * es, (size_t)es);
    if (hi - lo > 1) S->p->h(S->partial[c], S->in + (lo + 1) * es, hi - lo - 1, es);
  }
}

static cj_status k_reduce_fast(cj_exec_ctx *ctx, const cj_step *st) {
  const fast_params *p = st->params;
  fast_run R = {p, CJ_PTR(ctx, st->out[0]), CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->in[1])};
  int64_t nouter = p->vertical ? p->nout / (p->vlen ? p->vlen : 1) : p->nout;
  int64_t work = p->nout * space_size(&p->red);
  if (!p->vertical && p->nout == 1 && p->red.rank == 1 && p->red.str[0] == p->esize &&
      p->red.dims[0] >= CJ_PAR_MIN_ELEMS * 4 && ctx->pool && cj_pool_size(ctx->pool) > 1 &&
      p->esize <= 16) {
    split_run S;
    S.p = p;
    S.in = R.in;
    S.n = p->red.dims[0];
    S.chunk = (S.n + SPLIT_CHUNKS - 1) / SPLIT_CHUNKS;
    int64_t nchunks = (S.n + S.chunk - 1) / S.chunk;
    cj_pool_parallel_for(ctx->pool, nchunks, 1, split_body, &S);
    memcpy(R.out, R.init, (size_t)p->esize);
    for (int64_t c = 0; c < nchunks; c++) p->h(R.out, S.partial[c], 1, p->esize);
    return NULL;
  }
  if (work >= CJ_PAR_MIN_ELEMS * 4 && nouter > 1 && ctx->pool && cj_pool_size(ctx->pool) > 1) {
    int64_t per = work / nouter;
    int64_t grain = (CJ_PAR_MIN_ELEMS) / (per ? per : 1);
    cj_pool_parallel_for(ctx->pool, nouter, grain < 1 ? 1 : grain, fast_body, &R);
  } else if (p->nout) {
    fast_range(&R, 0, nouter);
  }
  return NULL;
}

/* ======================================================================== general path */

typedef struct gen_params {
  int32_t n;          /* number of inputs */
  space kept, red;    /* element-index spaces (strides in elements) */
  int64_t nout, nred;
  int32_t *in_es;     /* input element bytes */
  int32_t *body_es;   /* body argument element bytes */
  cj_ew_fn *cvt;      /* input -> body type conversions (NULL = same type) */
  cj_ew_aux *cvt_aux;
  cj_plan body;
  /* slots in the step: in = [inputs n][inits n][acc n][x n][ret n], out = results n */
} gen_params;

static cj_status k_reduce_general(cj_exec_ctx *ctx, const cj_step *st) {
  const gen_params *p = st->params;
  int32_t n = p->n;
  const cj_slot *in = st->in, *init = st->in + n, *acc = st->in + 2 * n, *x = st->in + 3 * n,
                *ret = st->in + 4 * n;
  for (int64_t o = 0; o < p->nout; o++) {
    int64_t ko = space_off(&p->kept, o);
    for (int32_t i = 0; i < n; i++) {
      char *a = CJ_PTR(ctx, acc[i]);
      const char *iv = CJ_PTR(ctx, init[i]);
      if (p->cvt[i])
        p->cvt[i](a, iv, NULL, NULL, 1, &p->cvt_aux[i]);
      else
        memcpy(a, iv, (size_t)p->body_es[i]);
    }
    for (int64_t r = 0; r < p->nred; r++) {
      int64_t off = ko + space_off(&p->red, r);
      for (int32_t i = 0; i < n; i++) {
        char *xv = CJ_PTR(ctx, x[i]);
        const char *src = CJ_PTR(ctx, in[i]) + off * p->in_es[i];
        if (p->cvt[i])
          p->cvt[i](xv, src, NULL, NULL, 1, &p->cvt_aux[i]);
        else
          memcpy(xv, src, (size_t)p->in_es[i]);
      }
      cj_status s = cj_plan_run(ctx, &p->body);
      if (s) return s;
      for (int32_t i = 0; i < n; i++) {
        char *a = CJ_PTR(ctx, acc[i]);
        const char *rv = CJ_PTR(ctx, ret[i]);
        if (a != rv) memmove(a, rv, (size_t)p->body_es[i]);
      }
    }
    for (int32_t i = 0; i < n; i++)
      memcpy(CJ_PTR(ctx, st->out[i]) + o * p->body_es[i], CJ_PTR(ctx, acc[i]),
             (size_t)p->body_es[i]);
  }
  return NULL;
}

/* ======================================================================== lowering */

static int body_pattern(cj_op *op, cj_dtype dt) {
  if (op->nregions != 1 || op->nopnds != 2) return -1;
  cj_block *b = op->regions[0].first;
  if (!b || b->nargs != 2 || b->nops != 2) return -1;
  cj_op *f = b->first, *ret = b->last;
  if (!f || !ret || f->nopnds != 2 || f->nresults != 1 || ret->nopnds != 1 ||
      ret->operands[0] != &f->results[0])
    return -1;
  bool args = (f->operands[0] == &b->args[0] && f->operands[1] == &b->args[1]) ||
              (f->operands[0] == &b->args[1] && f->operands[1] == &b->args[0]);
  if (!args) return -1;
  if (b->args[0].type->dtype != dt || b->args[1].type->dtype != dt ||
      f->results[0].type->dtype != dt)
    return -1;
  switch (f->kind) {
    case CJ_OP_ADD: return R_ADD;
    case CJ_OP_MULTIPLY: return R_MUL;
    case CJ_OP_MAXIMUM: return R_MAX;
    case CJ_OP_MINIMUM: return R_MIN;
    case CJ_OP_AND: return R_AND;
    case CJ_OP_OR: return R_OR;
    case CJ_OP_XOR: return R_XOR;
    default: return -1;
  }
}

cj_status lower_reduce(cj_lw *L, cj_op *op) {
  uint32_t n = op->nresults;
  if (n == 0 || op->nopnds != 2 * n || op->nregions != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "reduce needs N inputs, N inits and N results");
  int64_t dims[CJ_MAX_RANK], nd = 0;
  if (!cj_op_get_i64s(op, "dimensions", dims, CJ_MAX_RANK, &nd))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "no dimensions");
  cj_lw_tensor x0;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x0));
  bool isred[CJ_MAX_RANK] = {false};
  for (int64_t i = 0; i < nd; i++) {
    if (dims[i] < 0 || dims[i] >= x0.rank) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad dimension");
    isred[dims[i]] = true;
  }
  int64_t xs[CJ_MAX_RANK];
  cj_row_strides(x0.rank, x0.dims, xs);
  int64_t nred = 1;
  for (int32_t d = 0; d < x0.rank; d++)
    if (isred[d]) nred *= x0.dims[d];

  int rop = n == 1 ? body_pattern(op, x0.dtype) : -1;
  vfn_t vf = NULL;
  hfn_t hf = NULL;
  if (rop >= 0 && red_fns(rop, x0.dtype, &vf, &hf)) {
    cj_lw_tensor init, r;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &init));
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
    fast_params *p = cj_lw_alloc(L, sizeof *p);
    if (!p) return cj_oom();
    int es = cj_dtype_bytes(x0.dtype);
    p->esize = es;
    p->v = vf;
    p->h = hf;
    p->nout = r.nelems;
    int32_t last = x0.rank - 1;
    while (last >= 0 && x0.dims[last] == 1) last--;
    p->vertical = last < 0 || !isred[last];
    for (int32_t d = 0; d < x0.rank; d++) {
      if (isred[d])
        space_push(&p->red, x0.dims[d], xs[d] * es);
      else
        space_push(&p->kept, x0.dims[d], xs[d] * es);
    }
    if (p->vertical) {
      if (p->kept.rank == 0) {
        p->kept.dims[0] = 1;
        p->kept.str[0] = es;
        p->kept.rank = 1;
      }
      p->vlen = p->kept.dims[p->kept.rank - 1];
      if (p->kept.str[p->kept.rank - 1] != es) { /* not contiguous: fold one element at a time */
        p->kept.dims[p->kept.rank] = 1;
        p->kept.str[p->kept.rank] = es;
        p->kept.rank++;
        p->vlen = 1;
      }
    }
    if (x0.nelems == 0 && r.nelems > 0) p->red.rank = 0, p->red.dims[0] = 0;
    if (nred == 0) { /* empty reduction: every output is the init value */
      p->red.rank = 1;
      p->red.dims[0] = 0;
      p->red.str[0] = es;
      p->vertical = true;
      p->kept.rank = 1;
      p->kept.dims[0] = r.nelems;
      p->kept.str[0] = es;
      p->vlen = r.nelems ? r.nelems : 1;
    }
    cj_lw_add_cost(L, (double)x0.nelems, 0);
    int32_t ins[2] = {x0.buf, init.buf};
    if (!cj_lw_emit(L, op, k_reduce_fast, p, 2, ins, 1, &r.buf)) return cj_oom();
    return NULL;
  }

  /* general: the body as a nested plan per element */
  cj_block *body = op->regions[0].first;
  if (!body || body->nargs != 2 * n) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad reduce body");
  gen_params *p = cj_lw_alloc(L, sizeof *p);
  int32_t *slots = cj_lw_alloc(L, sizeof(int32_t) * 5 * n);
  int32_t *outs = cj_lw_alloc(L, sizeof(int32_t) * n);
  if (!p || !slots || !outs) return cj_oom();
  p->n = (int32_t)n;
  p->in_es = cj_lw_alloc(L, sizeof(int32_t) * n);
  p->body_es = cj_lw_alloc(L, sizeof(int32_t) * n);
  p->cvt = cj_lw_alloc(L, sizeof(cj_ew_fn) * n);
  p->cvt_aux = cj_lw_alloc(L, sizeof(cj_ew_aux) * n);
  if (!p->in_es || !p->body_es || !p->cvt || !p->cvt_aux) return cj_oom();
  for (uint32_t i = 0; i < n; i++) {
    cj_lw_tensor x, init;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, i, &x));
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, n + i, &init));
    if (x.rank != x0.rank) return cj_op_error(op, CJ_INVALID_ARGUMENT, "inputs differ in shape");
    slots[i] = x.buf;
    slots[n + i] = init.buf;
    const cj_type *bt = body->args[i].type;
    if (!cj_type_is_static(bt) || bt->num_elements != 1)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "reduce body arguments must be scalars");
    p->in_es[i] = cj_dtype_bytes(x.dtype);
    p->body_es[i] = cj_dtype_bytes(bt->dtype);
    if (bt->dtype != x.dtype) {
      p->cvt[i] = cj_cvt_lookup(x.dtype, bt->dtype);
      p->cvt_aux[i].src = x.dtype;
      p->cvt_aux[i].dt = bt->dtype;
      if (!p->cvt[i]) return cj_op_error(op, CJ_UNIMPLEMENTED, "unsupported promotion");
    }
  }
  for (int32_t d = 0; d < x0.rank; d++) {
    if (isred[d]) {
      p->red.dims[p->red.rank] = x0.dims[d];
      p->red.str[p->red.rank++] = xs[d];
    } else {
      p->kept.dims[p->kept.rank] = x0.dims[d];
      p->kept.str[p->kept.rank++] = xs[d];
    }
  }
  p->nred = nred;
  int32_t start = cj_lw_advance(L);
  for (uint32_t i = 0; i < n; i++) {
    cj_lw_tensor r;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, i, &r));
    outs[i] = r.buf;
    cj_lw_def_at(L, r.buf, start);
    p->nout = r.nelems;
  }
  /* body arguments: acc then x */
  for (uint32_t i = 0; i < 2 * n; i++) {
    const cj_type *bt = body->args[i].type;
    int32_t b = cj_lw_new_buf(L, cj_dtype_bytes(bt->dtype), CJ_BK_ARENA);
    cj_lw_def_at(L, b, start);
    slots[2 * n + i] = b;
    CJ_RETURN_IF_ERROR(cj_lw_bind(L, &body->args[i], 1, &b));
  }
  cj_lw_saved saved;
  cj_lw_plan_begin(L, &saved);
  cj_op *term = NULL;
  cj_status st = cj_lw_block(L, body, &term);
  if (!st && (!term || term->nopnds != n))
    st = cj_op_error(op, CJ_INVALID_ARGUMENT, "reduce body must return %u values", n);
  for (uint32_t i = 0; !st && i < n; i++) {
    int32_t nl;
    const int32_t *lv;
    st = cj_lw_leaves(L, term, term->operands[i], &nl, &lv);
    if (!st) slots[4 * n + i] = lv[0];
  }
  cj_status st2 = cj_lw_plan_end(L, &saved, &p->body);
  if (st) {
    cj_status_free(st2);
    return st;
  }
  CJ_RETURN_IF_ERROR(st2);
  cj_lw_add_cost(L, (double)x0.nelems * (double)(p->body.nsteps ? p->body.nsteps : 1), 0);
  if (!cj_lw_emit(L, op, k_reduce_general, p, 5 * n, slots, n, outs)) return cj_oom();
  cj_lw_extend_region(L, start);
  return NULL;
}
