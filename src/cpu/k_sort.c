/* cjrt: sort (variadic, any comparator) and chlo.top_k.
 *
 * Every slice along the sort dimension is sorted by a stable merge sort (insertion sort on short
 * runs, runs already in order are not merged), so `is_stable` holds whether asked or not.
 *   - Fast path: a comparator that is one LT or GT compare of the two arguments of one operand
 *     (SIGNED, UNSIGNED, FLOAT or TOTALORDER), also when the float arguments are first
 *     canonicalized (-0 to 0, NaN to one NaN) as JAX writes jnp.sort/argsort. The keys are mapped
 *     once per slice to unsigned integers that order the same way (IEEE totalOrder for floats;
 *     FLOAT compares order -0 with +0 and put NaN last), the (key, position) pairs are sorted,
 *     and every operand is permuted by the positions. Slices are split across the pool.
 *   - Any other comparator runs as a nested plan per comparison.
 *   - When the results are only read by slices of a prefix along the sort dim (lax.top_k reaches
 *     plugins as a sort of (x, iota) whose results are sliced to [.., 0:k]), only that prefix of
 *     each slice is selected and written (select_first: a bounded insertion for a short prefix,
 *     a heap for a longer one, a full sort past a quarter of the slice).
 * chlo.top_k takes the k largest of each last-dim row in totalOrder, ties by lower index
 * (what the upstream decomposition into a stable GT sort gives), by the same selection. */
#include <stdlib.h>
#include <string.h>

#include "cpu/k_gather.h"

typedef struct kpair {
  uint64_t key;
  int64_t idx;
} kpair;

/* ======================================================================== keys */

typedef void (*key_fn)(uint64_t *keys, const char *src, int64_t stride, int64_t n, uint64_t mask);

#define KEY(name, T, EXPR)                                                                   \
  static void key_##name(uint64_t *keys, const char *src, int64_t stride, int64_t n,         \
                         uint64_t mask) {                                                    \
    for (int64_t i = 0; i < n; i++) {                                                        \
      T v;                                                                                   \
      memcpy(&v, src + i * stride, sizeof v);                                                \
      keys[i] = (uint64_t)(EXPR) ^ mask;                                                     \
    }                                                                                        \
  }
KEY(s64, int64_t, (uint64_t)v ^ (1ull << 63))
KEY(u8, uint8_t, v)
KEY(u16, uint16_t, v)
KEY(u32, uint32_t, v)
KEY(u64, uint64_t, v)
KEY(pred, uint8_t, v & 1u)
/* signed keys of up to 32 bits in their own width (lexicographic keys are packed side by
 * side; the radix sort passes over the bytes in which keys differ) */
KEY(ns8, uint8_t, (uint8_t)(v ^ 0x80u))
KEY(ns16, uint16_t, (uint16_t)(v ^ 0x8000u))
KEY(ns32, uint32_t, v ^ 0x80000000u)
/* totalOrder: negative values reversed below the positive ones */
static inline uint64_t tot32(uint32_t u) { return (u & 0x80000000u) ? (uint32_t)~u : (u | 0x80000000u); }
static inline uint64_t tot64(uint64_t u) {
  return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}
static inline uint64_t tot16(uint16_t u) {
  return (u & 0x8000u) ? (uint16_t)~u : (uint16_t)(u | 0x8000u);
}
/* FLOAT order: -0 is +0, every NaN is the positive quiet NaN (last) */
static inline uint32_t canon32(uint32_t u) {
  if ((u & 0x7fffffffu) == 0) return 0;
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc00000u;
  return u;
}
static inline uint64_t canon64(uint64_t u) {
  if ((u & 0x7fffffffffffffffull) == 0) return 0;
  if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return 0x7ff8000000000000ull;
  return u;
}
static inline uint16_t canon16(uint16_t u, uint16_t inf, uint16_t qnan) {
  if ((u & 0x7fffu) == 0) return 0;
  if ((u & 0x7fffu) > inf) return qnan;
  return u;
}
KEY(tf32, uint32_t, tot32(v))
KEY(tf64, uint64_t, tot64(v))
KEY(tf16, uint16_t, tot16(v))
KEY(ff32, uint32_t, tot32(canon32(v)))
KEY(ff64, uint64_t, tot64(canon64(v)))
KEY(fbf16, uint16_t, tot16(canon16(v, 0x7f80u, 0x7fc0u)))
KEY(ff16, uint16_t, tot16(canon16(v, 0x7c00u, 0x7e00u)))

/* a float type's key function for compare_type ct: total, float or none */
static key_fn float_key(int32_t ct, key_fn total, key_fn flt) {
  return ct == CJ_COMPARISON_TYPE_TOTALORDER ? total : ct == CJ_COMPARISON_TYPE_FLOAT ? flt : NULL;
}

/* the key function for compare_type ct on dt, NULL if none */
static key_fn key_lookup(cj_dtype dt, int32_t ct) {
  bool is_f = cj_dtype_is_float(dt);
  if (ct < 0 || ct == CJ_COMPARISON_TYPE_NOTYPE) {
    ct = is_f ? CJ_COMPARISON_TYPE_FLOAT
              : cj_dtype_kindof(dt) == CJ_DK_SINT ? CJ_COMPARISON_TYPE_SIGNED
                                                  : CJ_COMPARISON_TYPE_UNSIGNED;
  }
  switch (dt) {
    case CJ_PRED: return key_pred;
    case CJ_S8: return ct == CJ_COMPARISON_TYPE_UNSIGNED ? key_u8 : key_ns8;
    case CJ_S16: return ct == CJ_COMPARISON_TYPE_UNSIGNED ? key_u16 : key_ns16;
    case CJ_S32: return ct == CJ_COMPARISON_TYPE_UNSIGNED ? key_u32 : key_ns32;
    case CJ_S64: return ct == CJ_COMPARISON_TYPE_UNSIGNED ? key_u64 : key_s64;
    case CJ_U8: return ct == CJ_COMPARISON_TYPE_SIGNED ? key_ns8 : key_u8;
    case CJ_U16: return ct == CJ_COMPARISON_TYPE_SIGNED ? key_ns16 : key_u16;
    case CJ_U32: return ct == CJ_COMPARISON_TYPE_SIGNED ? key_ns32 : key_u32;
    case CJ_U64: return ct == CJ_COMPARISON_TYPE_SIGNED ? key_s64 : key_u64;
    case CJ_F32: return float_key(ct, key_tf32, key_ff32);
    case CJ_F64: return float_key(ct, key_tf64, key_ff64);
    case CJ_BF16: return float_key(ct, key_tf16, key_fbf16);
    case CJ_F16: return float_key(ct, key_tf16, key_ff16);
    default: return NULL;
  }
}

/* ======================================================================== pair sort */

enum { RUN = 16 };

/* (key, position) order: the order of a stable sort by key when positions start in order */
static inline bool kp_lt(kpair a, kpair b) {
  return a.key < b.key || (a.key == b.key && a.idx < b.idx);
}

/* A stable sort of the n elements of type T at a in the order LT(c, x, y) (c: the order's
 * context): insertion sorts of runs of RUN elements, then bottom-up merges between a and tmp (n
 * elements too); the result ends in a. */
#define STABLE_SORT(NAME, T, C, LT)                                                          \
  static void NAME(C c, T *a, T *tmp, int64_t n) {                                           \
    for (int64_t lo = 0; lo < n; lo += RUN) {                                                \
      int64_t m = n - lo < RUN ? n - lo : RUN;                                               \
      T *b = a + lo;                                                                         \
      for (int64_t i = 1; i < m; i++) {                                                      \
        T x = b[i];                                                                          \
        int64_t j = i;                                                                       \
        while (j > 0 && LT(c, x, b[j - 1])) {                                                \
          b[j] = b[j - 1];                                                                   \
          j--;                                                                               \
        }                                                                                    \
        b[j] = x;                                                                            \
      }                                                                                      \
    }                                                                                        \
    T *src = a, *dst = tmp;                                                                  \
    for (int64_t w = RUN; w < n; w *= 2) {                                                   \
      for (int64_t lo = 0; lo < n; lo += 2 * w) {                                            \
        int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;         \
        if (mid >= hi || !LT(c, src[mid], src[mid - 1])) {                                   \
          memcpy(dst + lo, src + lo, sizeof(T) * (size_t)(hi - lo));                         \
          continue;                                                                          \
        }                                                                                    \
        int64_t i = lo, j = mid, k = lo;                                                     \
        while (i < mid && j < hi) dst[k++] = LT(c, src[j], src[i]) ? src[j++] : src[i++];    \
        while (i < mid) dst[k++] = src[i++];                                                 \
        while (j < hi) dst[k++] = src[j++];                                                  \
      }                                                                                      \
      T *t = src;                                                                            \
      src = dst;                                                                             \
      dst = t;                                                                               \
    }                                                                                        \
    if (src != a) memcpy(a, src, sizeof(T) * (size_t)n);                                     \
  }

/* in (key, position) order (stable by key when the positions start in order); a and tmp hold
 * n pairs; the result ends in a */
#define KP_LT(c, x, y) kp_lt(x, y)
STABLE_SORT(pairs_sort_ctx, kpair, const void *, KP_LT)
static void pairs_sort(kpair *a, kpair *tmp, int64_t n) { pairs_sort_ctx(NULL, a, tmp, n); }

/* A least-significant-digit radix sort of n pairs by key, bytes at a time, over the bytes in
 * which the keys differ (at most 4 of them, else false and nothing done): stable, so the
 * (key, position) order when the positions start in order, as pairs_sort. tmp holds n pairs;
 * the result ends in a. (The merge sort cost an argsort of 65536 int32 2x XLA's time.) */
enum { RADIX_MIN = 512 };
static bool radix_pairs(kpair *a, kpair *tmp, int64_t n) {
  uint64_t o = 0, an = ~0ull;
  for (int64_t j = 0; j < n; j++) {
    o |= a[j].key;
    an &= a[j].key;
  }
  uint64_t diff = o ^ an;
  int digits[8], nd = 0;
  for (int b = 0; b < 8; b++)
    if ((diff >> (8 * b)) & 0xffu) digits[nd++] = b;
  if (nd > 4) return false;
  kpair *src = a, *dst = tmp;
  for (int d = 0; d < nd; d++) {
    int sh = 8 * digits[d];
    int64_t cnt[256] = {0};
    for (int64_t j = 0; j < n; j++) cnt[(src[j].key >> sh) & 0xffu]++;
    int64_t sum = 0;
    for (int b = 0; b < 256; b++) {
      int64_t c = cnt[b];
      cnt[b] = sum;
      sum += c;
    }
    for (int64_t j = 0; j < n; j++) dst[cnt[(src[j].key >> sh) & 0xffu]++] = src[j];
    kpair *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, sizeof(kpair) * (size_t)n);
  return true;
}

/* ======================================================================== selection */

/* Max-heap of pairs in (key, position) order: its root is the pair a smaller one replaces. */
static void heap_down(kpair *h, int64_t m, int64_t i) {
  kpair x = h[i];
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= m) break;
    if (c + 1 < m && kp_lt(h[c], h[c + 1])) c++;
    if (!kp_lt(x, h[c])) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

/* The m smallest of keys[0..n) in (key, position) order (what a stable ascending sort puts
 * first) into pairs[0..m), in that order. pairs holds 2n pairs; keys may live in its second
 * half (pairs + n): they are read before that half is written. */
static void select_first(kpair *pairs, const uint64_t *keys, int64_t n, int64_t m) {
  if (m <= 0) return;
  if (m <= 16 && n > 4 * m) {
    /* a sorted list of the best m so far; a later equal key loses (higher position) */
    int64_t have = 0;
    for (int64_t j = 0; j < n; j++) {
      uint64_t key = keys[j];
      if (have == m && key >= pairs[m - 1].key) continue;
      int64_t at = have < m ? have : m - 1;
      while (at > 0 && key < pairs[at - 1].key) {
        pairs[at] = pairs[at - 1];
        at--;
      }
      pairs[at].key = key;
      pairs[at].idx = j;
      if (have < m) have++;
    }
    return;
  }
  if (m * 4 <= n) {
    /* a heap of the best m so far, sorted at the end: O(n log m) */
    for (int64_t j = 0; j < m; j++) {
      pairs[j].key = keys[j];
      pairs[j].idx = j;
    }
    for (int64_t i = m / 2; i-- > 0;) heap_down(pairs, m, i);
    for (int64_t j = m; j < n; j++) {
      if (keys[j] >= pairs[0].key) continue; /* a tie loses: its position is higher */
      pairs[0].key = keys[j];
      pairs[0].idx = j;
      heap_down(pairs, m, 0);
    }
    pairs_sort(pairs, pairs + n, m); /* the keys are no longer needed */
    return;
  }
  for (int64_t j = 0; j < n; j++) {
    pairs[j].key = keys[j];
    pairs[j].idx = j;
  }
  if (n >= RADIX_MIN && radix_pairs(pairs, pairs + n, n)) return;
  pairs_sort(pairs, pairs + n, n);
}

/* ======================================================================== permuting */

typedef void (*perm_fn)(char *dst, int64_t ds, const char *src, int64_t ss, const kpair *p,
                        int64_t n);
#define PERM(ES)                                                                             \
  static void perm_##ES(char *dst, int64_t ds, const char *src, int64_t ss, const kpair *p,  \
                        int64_t n) {                                                         \
    for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + p[i].idx * ss, ES);           \
  }
PERM(1)
PERM(2)
PERM(4)
PERM(8)
PERM(16)
static perm_fn perm_lookup(int es) {
  switch (es) {
    case 1: return perm_1;
    case 2: return perm_2;
    case 4: return perm_4;
    case 8: return perm_8;
    case 16: return perm_16;
    default: return NULL;
  }
}

/* ======================================================================== sort */

enum { LEX_MAX = 8 };

typedef struct sort_params {
  int32_t n;            /* operands */
  int64_t len;          /* slice length */
  int64_t nslices;
  int32_t orank;        /* outer space (dims other than the sort dim) */
  int64_t odims[CJ_MAX_RANK], ostr[CJ_MAX_RANK]; /* element strides */
  int64_t dstr;         /* element stride along the sort dim */
  int32_t *es;          /* element bytes per operand */
  /* fast */
  int32_t keyop;        /* -1: general */
  int64_t keep;         /* the first `keep` of each sorted slice are written (the results are
                         * only read by slices below that; see used_prefix) */
  key_fn key;
  uint64_t mask;
  /* a lexicographic comparator (jnp.lexsort, lax.sort with num_keys > 1): nlex keys of
   * lex_bits[i] bits each (64 in all at most), packed into one key, the first one highest */
  int32_t nlex;
  int32_t lex_op[LEX_MAX], lex_bits[LEX_MAX];
  key_fn lex_key[LEX_MAX];
  uint64_t lex_mask[LEX_MAX];
  perm_fn *perm;
  bool tls;             /* slices may run in parallel with per-thread pairs */
  /* general */
  kg_body body;
  /* slots: in = [inputs n][scratch][body args 2n, ret 1]; out = results n */
} sort_params;

static int64_t outer_off(const sort_params *p, int64_t s) {
  return cj_strided_offset(s, p->orank, p->odims, p->ostr);
}

typedef struct sort_run {
  const sort_params *p;
  cj_exec_ctx *ctx;
  const cj_step *st;
  kpair *pairs; /* serial: 2 * len */
} sort_run;

/* keys (those of the first lexicographic key) shifted up and the later keys' packed below;
 * their scratch is the len words after keys (the pairs' second half holds 2 len words) */
static void lex_keys(const sort_params *p, cj_exec_ctx *ctx, const cj_step *st, uint64_t *keys,
                     int64_t off) {
  uint64_t *next = keys + p->len;
  for (int32_t j = 1; j < p->nlex; j++) {
    int32_t op = p->lex_op[j], es = p->es[op], b = p->lex_bits[j];
    p->lex_key[j](next, CJ_PTR(ctx, st->in[op]) + off * es, p->dstr * es, p->len, p->lex_mask[j]);
    for (int64_t i = 0; i < p->len; i++) keys[i] = keys[i] << b | next[i];
  }
}

static void fast_slices(sort_run *R, kpair *pairs, int64_t s0, int64_t s1) {
  const sort_params *p = R->p;
  cj_exec_ctx *ctx = R->ctx;
  const cj_step *st = R->st;
  uint64_t *keys = (uint64_t *)(pairs + p->len); /* the tmp half holds the keys first */
  const char *kin = CJ_PTR(ctx, st->in[p->keyop]);
  int32_t kes = p->es[p->keyop];
  for (int64_t s = s0; s < s1; s++) {
    int64_t off = outer_off(p, s);
    p->key(keys, kin + off * kes, p->dstr * kes, p->len, p->mask);
    if (p->nlex > 1) lex_keys(p, ctx, st, keys, off);
    select_first(pairs, keys, p->len, p->keep);
    for (int32_t i = 0; i < p->n; i++) {
      int64_t es = p->es[i];
      p->perm[i](CJ_PTR(ctx, st->out[i]) + off * es, p->dstr * es, CJ_PTR(ctx, st->in[i]) + off * es,
                 p->dstr * es, pairs, p->keep);
    }
  }
}

/* Runs body over [0, count) items of len elements each on the pool when the step has per-thread
 * areas (tls) and it is worth it; false when it did not (the caller runs them itself). */
static bool on_pool(cj_exec_ctx *ctx, bool tls, int64_t count, int64_t len, void (*body)(void *, int64_t, int64_t),
                    void *arg) {
  if (!tls || count <= 1 || !ctx->pool || cj_pool_size(ctx->pool) <= 1 || count * len < CJ_PAR_MIN_ELEMS / 4)
    return false;
  int64_t grain = (CJ_PAR_MIN_ELEMS / 8) / len;
  cj_pool_parallel_for(ctx->pool, count, grain < 1 ? 1 : grain, body, arg);
  return true;
}

static void fast_body(void *ctx_, int64_t s0, int64_t s1) {
  sort_run *R = ctx_;
  cj_tls_area *a = cj_tls_claim(R->ctx);
  if (!a) {
    fast_slices(R, R->pairs, s0, s1); /* cannot happen when the pool has areas */
    return;
  }
  fast_slices(R, (kpair *)(void *)a->mem, s0, s1);
  cj_tls_release(R->ctx, a);
}

/* general comparator: a stable merge sort of positions */
typedef struct gen_cmp {
  const sort_params *p;
  cj_exec_ctx *ctx;
  const cj_step *st;
  int64_t off;
  cj_status err;
} gen_cmp;

static bool gless(gen_cmp *g, int64_t a, int64_t b) {
  if (g->err) return false;
  const sort_params *p = g->p;
  cj_exec_ctx *ctx = g->ctx;
  const cj_step *st = g->st;
  const kg_body *body = &p->body;
  for (int32_t i = 0; i < p->n; i++) {
    int64_t es = p->es[i];
    const char *x = CJ_PTR(ctx, st->in[i]) + g->off * es;
    memcpy(KG_ARG(ctx, st, body, 2 * i), x + a * p->dstr * es, (size_t)es);
    memcpy(KG_ARG(ctx, st, body, 2 * i + 1), x + b * p->dstr * es, (size_t)es);
  }
  cj_status s = cj_plan_run(ctx, &body->plan);
  if (s) {
    g->err = s;
    return false;
  }
  return (*KG_RET(ctx, st, body, 0) & 1) != 0;
}

STABLE_SORT(gen_sort, int64_t, gen_cmp *, gless)

static CJ_MUST_USE cj_status k_sort(cj_exec_ctx *ctx, const cj_step *st) {
  const sort_params *p = st->params;
  if (p->len == 0 || p->nslices == 0) return NULL;
  char *scratch = CJ_PTR(ctx, st->in[p->n]);
  if (p->keyop >= 0) {
    sort_run R = {p, ctx, st, (kpair *)(void *)scratch};
    if (!on_pool(ctx, p->tls, p->nslices, p->len, fast_body, &R)) fast_slices(&R, R.pairs, 0, p->nslices);
    return NULL;
  }
  int64_t *perm = (int64_t *)(void *)scratch, *tmp = perm + p->len;
  gen_cmp g = {p, ctx, st, 0, NULL};
  for (int64_t s = 0; s < p->nslices; s++) {
    g.off = outer_off(p, s);
    for (int64_t j = 0; j < p->len; j++) perm[j] = j;
    gen_sort(&g, perm, tmp, p->len);
    if (g.err) return g.err;
    for (int32_t i = 0; i < p->n; i++) {
      int64_t es = p->es[i];
      char *out = CJ_PTR(ctx, st->out[i]) + g.off * es;
      const char *in = CJ_PTR(ctx, st->in[i]) + g.off * es;
      for (int64_t j = 0; j < p->len; j++)
        memcpy(out + j * p->dstr * es, in + perm[j] * p->dstr * es, (size_t)es);
    }
  }
  return NULL;
}

/* a scalar constant's value */
static bool const_scalar(const cj_value *v, double *out) {
  const cj_op *d = v->def;
  if (!d || d->kind != CJ_OP_CONSTANT) return false;
  const cj_attr *a = cj_op_attr(d, "value");
  if (!a || a->kind != CJ_ATTR_DENSE || !cj_dtype_is_float(a->dense.type->dtype)) return false;
  if (!a->dense.splat && cj_dense_num_elements(a) != 1) return false;
  *out = cj_dense_get_f64(a, 0);
  return true;
}

static bool is_cmp(const cj_value *v, int32_t dir) {
  const cj_op *d = v->def;
  int32_t got = -1;
  return d && d->kind == CJ_OP_COMPARE && d->nopnds == 2 &&
         cj_op_get_enum(d, "comparison_direction", CJ_EK_COMPARISON_DIRECTION, &got) && got == dir;
}

/* v == arg (returns 0), or v == arg canonicalized as JAX writes it before a TOTALORDER compare
 * (returns 1): select(arg != arg, NaN, select(arg == 0, 0, arg)), the two layers in either
 * order. -1 otherwise. */
static int canon_of(const cj_value *v, const cj_value *arg) {
  bool nan_layer = false, zero_layer = false;
  for (int depth = 0; depth < 3; depth++) {
    if (v == arg) return (nan_layer && zero_layer) ? 1 : (!nan_layer && !zero_layer) ? 0 : -1;
    const cj_op *s = v->def;
    if (!s || s->kind != CJ_OP_SELECT || s->nopnds != 3) return -1;
    const cj_value *pred = s->operands[0];
    double c;
    if (!const_scalar(s->operands[1], &c)) return -1;
    if (!nan_layer && c != c && is_cmp(pred, CJ_COMPARISON_DIRECTION_NE) &&
        pred->def->operands[0] == arg && pred->def->operands[1] == arg) {
      nan_layer = true;
    } else if (!zero_layer && c == 0 && is_cmp(pred, CJ_COMPARISON_DIRECTION_EQ)) {
      double z;
      const cj_op *e = pred->def;
      if (!((e->operands[0] == arg && const_scalar(e->operands[1], &z)) ||
            (e->operands[1] == arg && const_scalar(e->operands[0], &z))) ||
          z != 0)
        return -1;
      zero_layer = true;
    } else {
      return -1;
    }
    v = s->operands[2];
  }
  return -1;
}

/* Is c one LT/GT compare of arguments 2k and 2k+1 of block b (possibly canonicalized as JAX
 * does for floats)? Sets *k, *desc and *ct (the compare type the keys must follow). */
static bool cmp_term(const cj_op *c, cj_block *b, int32_t *k, bool *desc, int32_t *ct) {
  if (!c || c->block != b || c->kind != CJ_OP_COMPARE || c->nopnds != 2) return false;
  int32_t dir = -1;
  if (!cj_op_get_enum(c, "comparison_direction", CJ_EK_COMPARISON_DIRECTION, &dir)) return false;
  *ct = -1;
  cj_op_get_enum(c, "compare_type", CJ_EK_COMPARISON_TYPE, ct);
  /* find the arguments under the (optional) canonicalization */
  int32_t ix = -1, iy = -1, cx = -1, cy = -1;
  for (uint32_t a = 0; a < b->nargs; a++) {
    int r = canon_of(c->operands[0], &b->args[a]);
    if (r >= 0) ix = (int32_t)a, cx = r;
    r = canon_of(c->operands[1], &b->args[a]);
    if (r >= 0) iy = (int32_t)a, cy = r;
  }
  if (ix < 0 || iy < 0 || ix / 2 != iy / 2 || ix == iy || cx != cy) return false;
  if (cx == 1) {
    if (*ct != CJ_COMPARISON_TYPE_TOTALORDER) return false;
    *ct = CJ_COMPARISON_TYPE_FLOAT; /* canonical totalOrder: the keys of a FLOAT compare */
  }
  bool fwd = ix % 2 == 0; /* compare(lhs, rhs) */
  if (dir == CJ_COMPARISON_DIRECTION_LT)
    *desc = !fwd;
  else if (dir == CJ_COMPARISON_DIRECTION_GT)
    *desc = fwd;
  else
    return false;
  *k = ix / 2;
  return true;
}

/* Is the comparator one LT/GT compare of arguments 2k and 2k+1 (cmp_term)? */
static bool simple_comparator(const cj_op *op, int32_t n, int32_t *k, bool *desc, int32_t *ct) {
  cj_block *b = op->regions[0].first;
  if (!b || b->next || b->nargs != (uint32_t)(2 * n)) return false;
  cj_op *ret = b->last;
  if (!ret || ret->nopnds != 1) return false;
  return cmp_term(ret->operands[0]->def, b, k, desc, ct);
}

/* e is compare(EQ) of the operands of c (in either order) with c's compare type */
static bool eq_of(const cj_op *e, const cj_op *c) {
  int32_t ect = -1, cct = -1;
  if (!e || e->block != c->block || !is_cmp(e->results, CJ_COMPARISON_DIRECTION_EQ)) return false;
  cj_op_get_enum(e, "compare_type", CJ_EK_COMPARISON_TYPE, &ect);
  cj_op_get_enum(c, "compare_type", CJ_EK_COMPARISON_TYPE, &cct);
  if (ect != cct) return false;
  return (e->operands[0] == c->operands[0] && e->operands[1] == c->operands[1]) ||
         (e->operands[0] == c->operands[1] && e->operands[1] == c->operands[0]);
}

/* the two operands of a binary op of kind `kind` in block b, else false */
static bool bin_of(const cj_value *v, cj_block *b, cj_op_kind kind, const cj_value **x,
                   const cj_value **y) {
  const cj_op *d = v->def;
  if (!d || d->block != b || d->kind != kind || d->nopnds != 2) return false;
  *x = d->operands[0], *y = d->operands[1];
  return true;
}

/* A lexicographic comparator as JAX writes it for several keys: v = lt(k0) | (eq(k0) & rest),
 * rest the same form for the later keys or one lt(k): the terms into ks/descs/cts (at most
 * max); their count, 0 if v is not of that form. Every key must order by its bits alone
 * (integers, or floats in TOTALORDER): an EQ of floats then agrees with the key's equality. */
static int lex_terms(const cj_value *v, cj_block *b, int32_t *ks, bool *descs, int32_t *cts,
                     int max) {
  if (max <= 0) return 0;
  const cj_value *x, *y;
  const cj_op *lt = NULL;
  const cj_value *rest = NULL;
  if (bin_of(v, b, CJ_OP_OR, &x, &y)) {
    for (int side = 0; side < 2 && !rest; side++) {
      const cj_value *l = side ? y : x, *a = side ? x : y, *e, *r;
      if (!bin_of(a, b, CJ_OP_AND, &e, &r)) continue;
      if (eq_of(e->def, l->def)) lt = l->def, rest = r;
      else if (eq_of(r->def, l->def)) lt = l->def, rest = e;
    }
    if (!rest) return 0;
  } else {
    lt = v->def;
  }
  if (!cmp_term(lt, b, ks, descs, cts)) return 0;
  int32_t raw = -1;
  cj_op_get_enum(lt, "compare_type", CJ_EK_COMPARISON_TYPE, &raw);
  if (cj_dtype_is_float(cj_kg_scalar_dtype(lt->operands[0]->type)) &&
      raw != CJ_COMPARISON_TYPE_TOTALORDER)
    return 0; /* a FLOAT EQ is false between NaNs whose keys are equal */
  if (!rest) return 1;
  int m = lex_terms(rest, b, ks + 1, descs + 1, cts + 1, max - 1);
  return m ? m + 1 : 0;
}

/* does any op nested in op's regions read a result of `def`? */
static bool nested_use(const cj_op *op, const cj_op *def) {
  for (uint32_t r = 0; r < op->nregions; r++)
    for (cj_block *b = op->regions[r].first; b; b = b->next)
      for (const cj_op *o = b->first; o; o = o->next) {
        for (uint32_t i = 0; i < o->nopnds; i++)
          if (o->operands[i] && o->operands[i]->def == def) return true;
        if (nested_use(o, def)) return true;
      }
  return false;
}

/* How many leading elements of each sorted slice the program reads: when every use of the
 * sort's results is a stablehlo.slice in its block reading only positions below some bound
 * along the sort dim (lax.top_k arrives as a sort of (x, iota) and slices [.., 0:k]), that
 * bound; else len. */
static int64_t used_prefix(const cj_op *op, int64_t dim, int64_t len) {
  int64_t need = 0;
  for (const cj_op *u = op->next; u; u = u->next) {
    bool uses = false;
    for (uint32_t i = 0; i < u->nopnds; i++)
      if (u->operands[i] && u->operands[i]->def == op) uses = true;
    if (nested_use(u, op)) return len;
    if (!uses) continue;
    if (u->kind != CJ_OP_SLICE || u->nopnds != 1 || u->nresults != 1) return len;
    const cj_type *rt = u->results[0].type;
    int64_t start[CJ_MAX_RANK], stride[CJ_MAX_RANK], n1 = 0, n2 = 0;
    if (!cj_type_is_static(rt) || rt->rank <= dim ||
        !cj_op_get_i64s(u, "start_indices", start, CJ_MAX_RANK, &n1) ||
        !cj_op_get_i64s(u, "strides", stride, CJ_MAX_RANK, &n2) || n1 != rt->rank ||
        n2 != rt->rank || start[dim] < 0 || stride[dim] < 1)
      return len;
    if (rt->dims[dim] == 0) continue;
    int64_t hi = start[dim] + (rt->dims[dim] - 1) * stride[dim] + 1;
    if (hi > need) need = hi;
    if (need >= len) return len;
  }
  return need;
}

/* the key width in bits of dtype dt for the packed lexicographic key, 0 if none */
static int32_t lex_bits_of(cj_dtype dt) {
  if (dt == CJ_PRED) return 1;
  int32_t b = cj_dtype_bytes(dt) * 8;
  return b <= 64 && (cj_dtype_is_float(dt) || cj_dtype_kindof(dt) == CJ_DK_SINT ||
                     cj_dtype_kindof(dt) == CJ_DK_UINT)
             ? b
             : 0;
}

/* A lexicographic comparator of several keys whose widths add up to at most 64 bits: the
 * packed key's parts into p (nlex > 1) and its first key operand into *k; false otherwise
 * (one key: simple_comparator; wider: the nested comparator). */
static bool lex_setup(const cj_op *op, sort_params *p, int32_t *k) {
  cj_block *b = op->regions[0].first;
  if (!b || b->next || !b->last || b->last->nopnds != 1) return false;
  int32_t ks[LEX_MAX], cts[LEX_MAX];
  bool descs[LEX_MAX];
  int m = lex_terms(b->last->operands[0], b, ks, descs, cts, LEX_MAX);
  if (m < 2) return false;
  int32_t total = 0;
  for (int i = 0; i < m; i++) {
    cj_dtype dt = cj_kg_scalar_dtype(b->args[2 * ks[i]].type); /* the operand's, checked */
    int32_t bits = lex_bits_of(dt);
    key_fn f = key_lookup(dt, cts[i]);
    if (!bits || !f || !p->perm[ks[i]]) return false;
    total += bits;
    p->lex_op[i] = ks[i], p->lex_bits[i] = bits, p->lex_key[i] = f;
    p->lex_mask[i] = descs[i] ? (bits == 64 ? ~0ull : (1ull << bits) - 1) : 0;
  }
  for (int32_t i = 0; i < p->n; i++)
    if (!p->perm[i]) return false;
  if (total > 64) return false;
  p->nlex = m;
  p->key = p->lex_key[0];
  p->mask = p->lex_mask[0];
  *k = ks[0];
  return true;
}

cj_status cj_lower_sort(cj_lw *L, cj_op *op) {
  int32_t n = (int32_t)op->nopnds;
  if (n == 0 || (int32_t)op->nresults != n || op->nregions != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "sort needs N inputs and N results");
  if (n > KG_MAX_BODY_VALUES / 2)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "more than %d sort operands", KG_MAX_BODY_VALUES / 2);
  sort_params *p = cj_lw_alloc(L, sizeof *p);
  int32_t *ins = cj_lw_alloc(L, sizeof(int32_t) * (size_t)(n + 1 + 2 * n + 1));
  int32_t *outs = cj_lw_alloc(L, sizeof(int32_t) * (size_t)n);
  if (!p || !ins || !outs) return cj_oom();
  p->n = n;
  p->es = cj_lw_alloc(L, sizeof(int32_t) * (size_t)n);
  p->perm = cj_lw_alloc(L, sizeof(perm_fn) * (size_t)n);
  if (!p->es || !p->perm) return cj_oom();
  cj_lw_tensor x0;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x0));
  int64_t dim = -1;
  cj_op_get_i64(op, "dimension", &dim);
  if (dim < 0) dim += x0.rank;
  if (x0.rank == 0 || dim < 0 || dim >= x0.rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad sort dimension");
  int64_t xs[CJ_MAX_RANK];
  cj_row_strides(x0.rank, x0.dims, xs);
  p->len = x0.dims[dim];
  p->dstr = xs[dim];
  p->nslices = 1;
  for (int32_t d = 0; d < x0.rank; d++) {
    if (d == dim) continue;
    p->odims[p->orank] = x0.dims[d];
    p->ostr[p->orank++] = xs[d];
    p->nslices *= x0.dims[d];
  }
  cj_block *blk = op->regions[0].first;
  if (!blk || blk->nargs != (uint32_t)(2 * n))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the comparator needs %d arguments", 2 * n);
  for (int32_t i = 0; i < n; i++) {
    cj_lw_tensor x;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, (uint32_t)i, &x));
    if (x.rank != x0.rank || x.nelems != x0.nelems)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "sort operands differ in shape");
    for (int32_t d = 0; d < x.rank; d++)
      if (x.dims[d] != x0.dims[d])
        return cj_op_error(op, CJ_INVALID_ARGUMENT, "sort operands differ in shape");
    if (cj_kg_scalar_dtype(blk->args[2 * i].type) != x.dtype ||
        cj_kg_scalar_dtype(blk->args[2 * i + 1].type) != x.dtype)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "comparator argument types");
    p->es[i] = cj_dtype_bytes(x.dtype);
    p->perm[i] = perm_lookup(p->es[i]);
    ins[i] = x.buf;
  }
  int32_t k = -1, ct = -1;
  bool desc = false;
  p->keyop = -1;
  p->keep = p->len;
  if (lex_setup(op, p, &k)) {
    p->keyop = k;
    p->keep = used_prefix(op, dim, p->len);
  } else if (simple_comparator(op, n, &k, &desc, &ct)) {
    cj_lw_tensor xk;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, (uint32_t)k, &xk));
    p->key = key_lookup(xk.dtype, ct);
    bool perms = true;
    for (int32_t i = 0; i < n; i++) perms = perms && p->perm[i];
    if (p->key && perms) {
      p->keyop = k;
      p->mask = desc ? ~(uint64_t)0 : 0;
      p->keep = used_prefix(op, dim, p->len);
    }
  }
  double lg = 1;
  for (int64_t m = p->len; m > 1; m /= 2) lg++;
  cj_lw_add_cost(L, (double)x0.nelems * lg, 0);
  if (p->keyop >= 0) {
    int64_t per = (int64_t)sizeof(kpair) * 2 * p->len;
    int32_t scratch = cj_lw_new_buf(L, per, CJ_BK_ARENA);
    if (per <= (1 << 20) && p->nslices > 1) {
      p->tls = true;
      cj_lw_set_tls_bytes(L, per);
    }
    ins[n] = scratch;
    for (int32_t i = 0; i < n; i++) {
      cj_lw_tensor r;
      CJ_RETURN_IF_ERROR(cj_lw_result(L, op, (uint32_t)i, &r));
      outs[i] = r.buf;
    }
    /* the scratch is written by the step: define it there */
    cj_lw_def(L, scratch);
    if (!cj_lw_emit(L, op, k_sort, p, (uint32_t)n + 1, ins, (uint32_t)n, outs)) return cj_oom();
    return NULL;
  }
  /* general comparator */
  int32_t start = cj_lw_advance(L);
  int32_t scratch = cj_lw_new_buf(L, (int64_t)sizeof(int64_t) * 2 * p->len, CJ_BK_ARENA);
  cj_lw_def_at(L, scratch, start);
  ins[n] = scratch;
  for (int32_t i = 0; i < n; i++) {
    cj_lw_tensor r;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, (uint32_t)i, &r));
    outs[i] = r.buf;
    cj_lw_def_at(L, r.buf, start);
  }
  CJ_RETURN_IF_ERROR(cj_kg_body_lower(L, op, 0, start, &p->body, ins + n + 1));
  if (p->body.nrets != 1 || p->body.ret_types[0]->dtype != CJ_PRED)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the comparator must return one i1");
  p->body.slot0 = (uint32_t)n + 1;
  if (!cj_lw_emit(L, op, k_sort, p, (uint32_t)(n + 1 + 2 * n + 1), ins, (uint32_t)n, outs))
    return cj_oom();
  cj_lw_extend_region(L, start);
  return NULL;
}

/* ======================================================================== top_k */

typedef void (*idx_write_fn)(char *dst, int64_t v);
#define IW(name, T) \
  static void iw_##name(char *dst, int64_t v) { T t = (T)v; memcpy(dst, &t, sizeof t); }
IW(s8, int8_t)
IW(s16, int16_t)
IW(s32, int32_t)
IW(s64, int64_t)

typedef struct topk_params {
  int64_t rows, n, k;
  int32_t es, ies;
  key_fn key;
  perm_fn perm;
  idx_write_fn iw;
  bool tls;
} topk_params;

typedef struct topk_run {
  const topk_params *p;
  char *vals, *idxs;
  const char *x;
  kpair *scratch;
  cj_exec_ctx *ctx;
} topk_run;

static void topk_rows(const topk_run *R, kpair *pairs, int64_t r0, int64_t r1) {
  const topk_params *p = R->p;
  int64_t n = p->n, k = p->k;
  uint64_t *keys = (uint64_t *)(pairs + n);
  for (int64_t r = r0; r < r1; r++) {
    const char *x = R->x + r * n * p->es;
    p->key(keys, x, p->es, n, ~(uint64_t)0); /* descending */
    int64_t m = k;
    select_first(pairs, keys, n, k);
    p->perm(R->vals + r * k * p->es, p->es, x, p->es, pairs, m);
    for (int64_t j = 0; j < m; j++) p->iw(R->idxs + (r * k + j) * p->ies, pairs[j].idx);
  }
}

static void topk_body(void *ctx_, int64_t r0, int64_t r1) {
  topk_run *R = ctx_;
  cj_tls_area *a = cj_tls_claim(R->ctx);
  if (!a) {
    topk_rows(R, R->scratch, r0, r1);
    return;
  }
  topk_rows(R, (kpair *)(void *)a->mem, r0, r1);
  cj_tls_release(R->ctx, a);
}

static CJ_MUST_USE cj_status k_topk(cj_exec_ctx *ctx, const cj_step *st) {
  const topk_params *p = st->params;
  topk_run R = {p, CJ_PTR(ctx, st->out[0]), CJ_PTR(ctx, st->out[1]), CJ_PTR(ctx, st->in[0]),
                (kpair *)(void *)CJ_PTR(ctx, st->in[1]), ctx};
  if (p->rows == 0 || p->k == 0) return NULL;
  if (!on_pool(ctx, p->tls, p->rows, p->n, topk_body, &R)) topk_rows(&R, R.scratch, 0, p->rows);
  return NULL;
}

cj_status cj_lower_top_k(cj_lw *L, cj_op *op) {
  if (op->nopnds != 1 || op->nresults != 2)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "top_k needs 1 operand and 2 results");
  cj_lw_tensor x, v, ix;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  int64_t k = 0;
  if (!cj_op_get_i64(op, "k", &k) || k < 0) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad k");
  if (x.rank < 1) return cj_op_error(op, CJ_INVALID_ARGUMENT, "top_k needs rank >= 1");
  int64_t n = x.dims[x.rank - 1];
  int64_t kk = k < n ? k : n;
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &v));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 1, &ix));
  if (v.dtype != x.dtype || v.rank != x.rank || ix.rank != x.rank ||
      v.dims[x.rank - 1] != kk || ix.dims[x.rank - 1] != kk || v.nelems != ix.nelems)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "top_k result shapes must end in %lld",
                       (long long)kk);
  topk_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->n = n;
  p->k = kk;
  p->rows = n ? x.nelems / n : 0;
  if (v.nelems != p->rows * kk)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "top_k result shape");
  p->es = cj_dtype_bytes(x.dtype);
  p->ies = cj_dtype_bytes(ix.dtype);
  p->key = key_lookup(x.dtype, CJ_COMPARISON_TYPE_TOTALORDER);
  if (!cj_dtype_is_float(x.dtype)) p->key = key_lookup(x.dtype, -1);
  p->perm = perm_lookup(p->es);
  switch (ix.dtype) {
    case CJ_S8: case CJ_U8: p->iw = iw_s8; break;
    case CJ_S16: case CJ_U16: p->iw = iw_s16; break;
    case CJ_S32: case CJ_U32: p->iw = iw_s32; break;
    case CJ_S64: case CJ_U64: p->iw = iw_s64; break;
    default: p->iw = NULL;
  }
  if (!p->key || !p->perm || !p->iw)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "top_k of %s values with %s indices",
                       cj_dtype_get(x.dtype)->id, cj_dtype_get(ix.dtype)->id);
  int64_t per = (int64_t)sizeof(kpair) * 2 * (n ? n : 1);
  if (per <= (1 << 20) && p->rows > 1) {
    p->tls = true;
    cj_lw_set_tls_bytes(L, per);
  }
  double lg = 1;
  for (int64_t m = n; m > 1; m /= 2) lg++;
  cj_lw_add_cost(L, (double)x.nelems * lg, 0);
  int32_t scratch = cj_lw_new_buf(L, per, CJ_BK_ARENA);
  cj_lw_def(L, scratch);
  int32_t ins[2] = {x.buf, scratch}, outs[2] = {v.buf, ix.buf};
  if (!cj_lw_emit(L, op, k_topk, p, 2, ins, 2, outs)) return cj_oom();
  return NULL;
}
