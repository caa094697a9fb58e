/* cjrt: the chain kernel (ew_chain.h) for one element type, a template included by
 * ew_chain_kern.h for f32 and f64, with
 *   CH_VBYTES  bytes per vector (64, 32, 16)
 *   CH_NV      vectors per strip (accumulators held in registers)
 *   CH_T, CH_I the element type and the integer type of its width, CH_S the name suffix
 *   CH_SQRT(v) the vector square root, CH_SPLAT(x) a vector of copies of x (optional: else
 *              one lane at a time)
 *   CH_H       (optional, f32 only) a 16-bit chain's type (ew_chain.h: hk), 1: bf16 (on the
 *              bits, as ew.c's ROUND and ew_cvt.c's converts), 2: f16 with CH_F16_IN(h) /
 *              CH_F16_OUT(v), the instruction set's conversions of a vector of halves to
 *              floats and back (F16C's, which ew.c's and ew_cvt.c's use on these CPUs);
 *              optional CH_BF16_IN(h) / CH_BF16_PACK(r): bf16 halves to floats, and 32-bit
 *              lanes holding 16-bit values narrowed, in the instruction set's instructions
 *              (GCC split the generic vector conversions into quarters)
 * The vectors are GCC's generic vectors; every step is written as the array kernel's
 * expression (ew.c) on whole vectors, so that each lane computes what the kernel computes. */
#define CH_CAT_(a, b) a##b
#define CH_CAT(a, b) CH_CAT_(a, b)
#define CH_VT CH_CAT(ch_v_, CH_S)
#define CH_VI CH_CAT(ch_vi_, CH_S)
#define CH_W ((int)(CH_VBYTES / sizeof(CH_T)))

typedef CH_T CH_VT __attribute__((vector_size(CH_VBYTES)));
typedef CH_I CH_VI __attribute__((vector_size(CH_VBYTES)));

static inline CH_VT CH_CAT(ch_ld_, CH_S)(const CH_T *p) {
  CH_VT v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void CH_CAT(ch_st_, CH_S)(CH_T *p, CH_VT v) { memcpy(p, &v, sizeof v); }
static inline CH_VT CH_CAT(ch_splat_, CH_S)(CH_T x) {
#ifdef CH_SPLAT
  return (CH_VT)CH_SPLAT(x);
#else
  CH_VT v; /* (not 0 + x, which turns -0 into +0) */
  for (int l = 0; l < CH_W; l++) v[l] = x;
  return v;
#endif
}
#ifdef CH_H
/* 16-bit chains: a vector of halves, its conversions (load, store, round) */
#define CH_VH CH_CAT(ch_vh_, CH_S)
#define CH_VU CH_CAT(ch_vu_, CH_S)
typedef uint16_t CH_VH __attribute__((vector_size(CH_VBYTES / 2)));
typedef uint32_t CH_VU __attribute__((vector_size(CH_VBYTES)));
static inline CH_VT CH_CAT(ch_cvh_, CH_S)(CH_VH h) {
#if CH_H == 1 && defined(CH_BF16_IN)
  return (CH_VT)CH_BF16_IN(h);
#elif CH_H == 1
  return (CH_VT)(__builtin_convertvector(h, CH_VU) << 16);
#else
  return (CH_VT)CH_F16_IN(h);
#endif
}
/* to nearest even; a bf16 NaN keeps its top bits, made quiet (cj_f32_to_bf16) */
static inline CH_VH CH_CAT(ch_toh_, CH_S)(CH_VT v) {
#if CH_H == 1
  CH_VU u = (CH_VU)v, hi = u >> 16;
  CH_VU r = (u + 0x7fffu + (hi & 1u)) >> 16;
  CH_VU nan = (CH_VU)((u & 0x7fffffffu) > 0x7f800000u);
  r = (r & ~nan) | ((hi | 0x40u) & nan);
#ifdef CH_BF16_PACK
  return (CH_VH)CH_BF16_PACK(r);
#else
  return __builtin_convertvector(r, CH_VH);
#endif
#else
  return (CH_VH)CH_F16_OUT(v);
#endif
}
static inline CH_VT CH_CAT(ch_ldh_, CH_S)(const uint16_t *p) {
  CH_VH h;
  memcpy(&h, p, sizeof h);
  return CH_CAT(ch_cvh_, CH_S)(h);
}
static inline void CH_CAT(ch_sth_, CH_S)(uint16_t *p, CH_VT v) {
  CH_VH h = CH_CAT(ch_toh_, CH_S)(v);
  memcpy(p, &h, sizeof h);
}
/* rounded to the 16-bit type and back (ew.c's ROUND) */
static inline CH_VT CH_CAT(ch_round_, CH_S)(CH_VT v) {
#if CH_H == 1
  CH_VU u = (CH_VU)v;
  CH_VU r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  CH_VU nan = (CH_VU)((u & 0x7fffffffu) > 0x7f800000u);
  return (CH_VT)((r & ~nan) | ((u | 0x00400000u) & 0xffff0000u & nan));
#else
  return CH_CAT(ch_cvh_, CH_S)(CH_CAT(ch_toh_, CH_S)(v));
#endif
}
/* one element (a scalar operand), as the vectors convert it */
static inline CH_T CH_CAT(ch_h1_, CH_S)(const void *p) {
  CH_VH h = {0};
  memcpy(&h, p, sizeof(uint16_t));
  return CH_CAT(ch_cvh_, CH_S)(h)[0];
}
/* the k < CH_W elements at p, the other lanes 0 (a tail) */
static inline CH_VT CH_CAT(ch_ldhk_, CH_S)(const uint16_t *p, int64_t k) {
  CH_VH h = {0};
  memcpy(&h, p, (size_t)k * sizeof(uint16_t));
  return CH_CAT(ch_cvh_, CH_S)(h);
}
/* a step's array operand at vector offset o (its entry 16-bit when hs_), its scalar operand */
#define CH_LDA(o) (hs_ ? LDH(hqi_ + (o)) : LD(qi + (o)))
#define CH_SC(p) (hs_ ? CH_CAT(ch_h1_, CH_S)(p) : *(p))
/* the operand of what follows: 16-bit when H, at table entry T */
#define CH_HDECL bool hs_; const uint16_t *hqi_
#define CH_HSET(H, T)                                                       \
  do {                                                                      \
    hs_ = (H);                                                              \
    hqi_ = (const uint16_t *)(const void *)tab[T] + i;                      \
    CH_OPAQUE(hqi_);                                                        \
  } while (0)
/* the result's vector v */
#define CH_STO(v)                                                           \
  do {                                                                      \
    if (c->dst_h) STH((uint16_t *)(void *)out + i + (v) * CH_W, acc[v]);     \
    else ST(out + i + (v) * CH_W, acc[v]);                                  \
  } while (0)
#define CH_ROUND_CASE                                                       \
  case CJ_CH_ROUND:                                                         \
    for (int v = 0; v < NV; v++) acc[v] = CH_CAT(ch_round_, CH_S)(acc[v]);  \
    break;
#else
#define CH_LDA(o) LD(qi + (o))
#define CH_SC(p) (*(p))
#define CH_HDECL
#define CH_HSET(H, T) (void)0
#define CH_STO(v) ST(out + i + (v) * CH_W, acc[v])
#define CH_ROUND_CASE
#endif

/* m ? x : y on the bits */
static inline CH_VI CH_CAT(ch_sel_, CH_S)(CH_VI m, CH_VI x, CH_VI y) { return (x & m) | (y & ~m); }
/* cj_max / cj_min (scalar.h): a NaN operand gives that NaN (a's when both are), equal
 * operands give the and (max) / or (min) of their bits: max(-0, +0) = +0 */
static inline CH_VT CH_CAT(ch_max_, CH_S)(CH_VT a, CH_VT b) {
  CH_VI ia = (CH_VI)a, ib = (CH_VI)b;
  CH_VI m = CH_CAT(ch_sel_, CH_S)((CH_VI)(a > b), ia, ib);
  m = CH_CAT(ch_sel_, CH_S)((CH_VI)(a == b), ia & ib, m);
  m = CH_CAT(ch_sel_, CH_S)((CH_VI)(b != b), ib, m);
  return (CH_VT)CH_CAT(ch_sel_, CH_S)((CH_VI)(a != a), ia, m);
}
static inline CH_VT CH_CAT(ch_min_, CH_S)(CH_VT a, CH_VT b) {
  CH_VI ia = (CH_VI)a, ib = (CH_VI)b;
  CH_VI m = CH_CAT(ch_sel_, CH_S)((CH_VI)(a < b), ia, ib);
  m = CH_CAT(ch_sel_, CH_S)((CH_VI)(a == b), ia | ib, m);
  m = CH_CAT(ch_sel_, CH_S)((CH_VI)(b != b), ib, m);
  return (CH_VT)CH_CAT(ch_sel_, CH_S)((CH_VI)(a != a), ia, m);
}
static inline CH_VT CH_CAT(ch_abs_, CH_S)(CH_VT a) {
  const CH_I mag = (CH_I)(((unsigned long long)-1) >> (65 - 8 * sizeof(CH_T)));
  return (CH_VT)((CH_VI)a & mag);
}
static inline CH_VT CH_CAT(ch_sqrt_, CH_S)(CH_VT a) {
#ifdef CH_SQRT
  return CH_SQRT(a);
#else
  CH_VT r;
  for (int l = 0; l < CH_W; l++) r[l] = sizeof(CH_T) == 4 ? __builtin_sqrtf((float)a[l]) : __builtin_sqrt((double)a[l]);
  return r;
#endif
}

/* the lanes of a predicate of k <= CH_W bytes at p: all ones where the byte is nonzero (the
 * lanes past k: false) */
typedef uint8_t CH_CAT(ch_vb_, CH_S) __attribute__((vector_size(CH_W)));
static inline CH_VI CH_CAT(ch_ldm_, CH_S)(const uint8_t *p, int64_t k) {
  CH_CAT(ch_vb_, CH_S) b = {0};
  memcpy(&b, p, (size_t)k);
  return (CH_VI)(__builtin_convertvector(b, CH_VI) != 0);
}

/* max / min with a scalar that is neither NaN nor zero, either order: the scalar when it is
 * greater (less) than the accumulator, else the accumulator (a NaN, or equal bits), one compare
 * where ch_max / ch_min take four */
static inline bool CH_CAT(ch_plain_, CH_S)(CH_T x) { return x == x && x != 0; }
static inline CH_VT CH_CAT(ch_maxk_, CH_S)(CH_VT a, CH_VT k) {
  return (CH_VT)CH_CAT(ch_sel_, CH_S)((CH_VI)(k > a), (CH_VI)k, (CH_VI)a);
}
static inline CH_VT CH_CAT(ch_mink_, CH_S)(CH_VT a, CH_VT k) {
  return (CH_VT)CH_CAT(ch_sel_, CH_S)((CH_VI)(k < a), (CH_VI)k, (CH_VI)a);
}

/* one binary operation in its six forms (ew_chain.h); K: FK is its form for a plain scalar */
#define CH_BIN(CODE, F, FK, K)                                                \
  case CODE:                                                                  \
    for (int v = 0; v < NV; v++) acc[v] = F(acc[v], CH_LDA(v * CH_W));       \
    break;                                                                    \
  case CODE + 1: {                                                            \
    const CH_T k_ = CH_SC(q);                                                 \
    CH_VT x = CH_CAT(ch_splat_, CH_S)(k_);                                    \
    if (K && CH_CAT(ch_plain_, CH_S)(k_))                                     \
      for (int v = 0; v < NV; v++) acc[v] = FK(acc[v], x);                    \
    else                                                                      \
      for (int v = 0; v < NV; v++) acc[v] = F(acc[v], x);                     \
  } break;                                                                    \
  case CODE + 2:                                                              \
    for (int v = 0; v < NV; v++) acc[v] = F(CH_LDA(v * CH_W), acc[v]);       \
    break;                                                                    \
  case CODE + 3: {                                                            \
    const CH_T k_ = CH_SC(q);                                                 \
    CH_VT x = CH_CAT(ch_splat_, CH_S)(k_);                                    \
    if (K && CH_CAT(ch_plain_, CH_S)(k_))                                     \
      for (int v = 0; v < NV; v++) acc[v] = FK(acc[v], x);                    \
    else                                                                      \
      for (int v = 0; v < NV; v++) acc[v] = F(x, acc[v]);                     \
  } break;                                                                    \
  case CODE + 4:                                                              \
    for (int v = 0; v < NV; v++) acc[v] = F(acc[v], side[v]);                            \
    break;                                                                    \
  case CODE + 5:                                                              \
    for (int v = 0; v < NV; v++) acc[v] = F(side[v], acc[v]);                            \
    break;                                                                    \
  case CODE + 6: {                                                            \
    if (!BOX) break;                                                          \
    CH_BOX_AT(c->step[s].box);                                                \
    for (int v = 0; v < NV; v++) acc[v] = F(acc[v], CH_LDB(qi + v * CH_W, v)); \
  } break;                                                                    \
  case CODE + 7: {                                                            \
    if (!BOX) break;                                                          \
    CH_BOX_AT(c->step[s].box);                                                \
    for (int v = 0; v < NV; v++) acc[v] = F(CH_LDB(qi + v * CH_W, v), acc[v]); \
  } break;
#define CH_ADD(a, b) ((a) + (b))
#define CH_SUB(a, b) ((a) - (b))
#define CH_MUL(a, b) ((a) * (b))
#define CH_DIV(a, b) ((a) / (b))

/* a boxed operand (ew_chain.h): the vector x, the lanes not set in bits replaced by pad */
static inline CH_VT CH_CAT(ch_boxsel_, CH_S)(CH_VT x, uint32_t bits, CH_VT pad) {
  CH_VI lane;
  for (int l = 0; l < CH_W; l++) lane[l] = (CH_I)1 << l;
  return (CH_VT)CH_CAT(ch_sel_, CH_S)((CH_VI)((lane & (CH_I)bits) != 0), (CH_VI)x, (CH_VI)pad);
}
/* box b of a boxed step: its padding in pad_ and its lane bits for the strip's vectors at kb_
 * (kb_[v * CH_W]: vector v's; c0: the column of the strip's first element) */
#define CH_BOX_AT(b)                                                            \
  CH_T pad1_;                                                                   \
  memcpy(&pad1_, &c->box[b].pad, sizeof pad1_);                                 \
  const CH_VT pad_ = CH_CAT(ch_splat_, CH_S)(pad1_);                            \
  const uint16_t *kb_ = c->kbits + (int64_t)(b) * c->kb_stride + c0
/* vector v of a boxed operand at p: a vector wholly inside the box (a row's inner ones) is
 * loaded as it is (a predictable branch: the strips repeat their places), the others blended
 * by MLD, the instruction set's masked blend where it has one (CH_MASKLD), else ch_boxsel */
#define CH_LDB(p, v)                                               \
  (kb_[(v) * CH_W] == (uint16_t)((1u << CH_W) - 1) ? LD(p)         \
                                                   : MLD(p, kb_[(v) * CH_W], pad_))

/* the operands' vectors are read at a pointer to the strip and a constant displacement each,
 * the pointer made opaque to the compiler: else it keeps the NV offsets of a strip's vectors in
 * registers across the steps and spills them (a 5-step stencil chain ran 30% slower) */
#if defined(__GNUC__)
#define CH_OPAQUE(p) __asm__("" : "+r"(p))
#else
#define CH_OPAQUE(p) (void)0
#endif
/* the steps over NV vectors at element i of every entry, the accumulators (and the side ones)
 * in registers; LD(p) loads a vector at p, ST(p, v) stores one; c0: for boxed steps, the column
 * of element i's vector in its row (ew_chain.h: kbits) */
#define CH_STRIP_BODY()                                                                  \
  do {                                                                                   \
    CH_VT acc[NV], side[NV];                                                             \
    const CH_T *q = (const CH_T *)(const void *)tab[c->first], *qi = q + i;              \
    CH_HDECL;                                                                            \
    CH_OPAQUE(qi);                                                                       \
    CH_HSET(c->first_h, c->first);                                                       \
    if (BOX && c->first_box >= 0) {                                                      \
      CH_BOX_AT(c->first_box);                                                           \
      for (int v = 0; v < NV; v++) acc[v] = CH_LDB(qi + v * CH_W, v);                \
    } else if (c->first_scalar) {                                                        \
      CH_VT x = CH_CAT(ch_splat_, CH_S)(CH_SC(q));                                       \
      for (int v = 0; v < NV; v++) acc[v] = x;                                           \
    } else {                                                                             \
      for (int v = 0; v < NV; v++) acc[v] = CH_LDA(v * CH_W);                            \
    }                                                                                    \
    for (int v = 0; v < NV; v++) side[v] = acc[v]; /* (before a push: unused) */         \
    for (int s = 0; s < c->nsteps; s++) {                                                \
      int op = c->step[s].op;                                                            \
      q = (const CH_T *)(const void *)tab[c->step[s].src];                               \
      qi = q + i;                                                                        \
      CH_OPAQUE(qi);                                                                     \
      CH_HSET(c->step[s].h, c->step[s].src);                                             \
      switch (op) {                                                                      \
        CH_BIN(CJ_CH_ADD, CH_ADD, CH_ADD, 0)                                             \
        CH_BIN(CJ_CH_SUB, CH_SUB, CH_SUB, 0)                                             \
        CH_BIN(CJ_CH_MUL, CH_MUL, CH_MUL, 0)                                             \
        CH_BIN(CJ_CH_DIV, CH_DIV, CH_DIV, 0)                                             \
        CH_BIN(CJ_CH_MAX, CH_CAT(ch_max_, CH_S), CH_CAT(ch_maxk_, CH_S), 1)              \
        CH_BIN(CJ_CH_MIN, CH_CAT(ch_min_, CH_S), CH_CAT(ch_mink_, CH_S), 1)              \
        case CJ_CH_NEG:                                                                  \
          for (int v = 0; v < NV; v++) acc[v] = -acc[v];                                 \
          break;                                                                         \
        case CJ_CH_ABS:                                                                  \
          for (int v = 0; v < NV; v++) acc[v] = CH_CAT(ch_abs_, CH_S)(acc[v]);           \
          break;                                                                         \
        case CJ_CH_SQRT:                                                                 \
          for (int v = 0; v < NV; v++) acc[v] = CH_CAT(ch_sqrt_, CH_S)(acc[v]);          \
          break;                                                                         \
        case CJ_CH_SQUARE:                                                               \
          for (int v = 0; v < NV; v++) acc[v] = acc[v] * acc[v];                         \
          break;                                                                         \
        case CJ_CH_PUSH:                                                                 \
          for (int v = 0; v < NV; v++) side[v] = acc[v];                                 \
          for (int v = 0; v < NV; v++) acc[v] = CH_LDA(v * CH_W);                        \
          break;                                                                         \
        case CJ_CH_PUSH_SCALAR: {                                                        \
          CH_VT x = CH_CAT(ch_splat_, CH_S)(CH_SC(q));                                   \
          for (int v = 0; v < NV; v++) side[v] = acc[v];                                 \
          for (int v = 0; v < NV; v++) acc[v] = x;                                       \
        } break;                                                                         \
        case CJ_CH_TEE: {                                                                \
          CH_T *o_ = (CH_T *)(void *)tab[c->step[s].src];                                \
          for (int v = 0; v < NV; v++) ST(o_ + i + v * CH_W, acc[v]);                      \
        } break;                                                                         \
        CH_ROUND_CASE                                                                    \
        case CJ_CH_MASK: {                                                               \
          const uint8_t *m_ = (const uint8_t *)tab[c->step[s].src] + i;                  \
          for (int v = 0; v < NV; v++) side[v] = (CH_VT)LDM(m_ + v * CH_W);              \
        } break;                                                                         \
        case CJ_CH_SELT:                                                                 \
          for (int v = 0; v < NV; v++)                                                   \
            acc[v] = (CH_VT)CH_CAT(ch_sel_, CH_S)((CH_VI)side[v], (CH_VI)CH_LDA(v * CH_W),    \
                                                  (CH_VI)acc[v]);                        \
          break;                                                                         \
        case CJ_CH_SELF:                                                                 \
          for (int v = 0; v < NV; v++)                                                   \
            acc[v] = (CH_VT)CH_CAT(ch_sel_, CH_S)((CH_VI)side[v], (CH_VI)acc[v],         \
                                                  (CH_VI)CH_LDA(v * CH_W));              \
          break;                                                                         \
        case CJ_CH_SELT_SCALAR: {                                                        \
          CH_VI x = (CH_VI)CH_CAT(ch_splat_, CH_S)(CH_SC(q));                             \
          for (int v = 0; v < NV; v++)                                                   \
            acc[v] = (CH_VT)CH_CAT(ch_sel_, CH_S)((CH_VI)side[v], x, (CH_VI)acc[v]);     \
        } break;                                                                         \
        case CJ_CH_SELF_SCALAR: {                                                        \
          CH_VI x = (CH_VI)CH_CAT(ch_splat_, CH_S)(CH_SC(q));                             \
          for (int v = 0; v < NV; v++)                                                   \
            acc[v] = (CH_VT)CH_CAT(ch_sel_, CH_S)((CH_VI)side[v], (CH_VI)acc[v], x);     \
        } break;                                                                         \
        default: break;                                                                  \
      }                                                                                  \
    }                                                                                    \
    for (int v = 0; v < NV; v++) CH_STO(v);                                              \
  } while (0)

/* strips of NVS whole vectors (CH_NV, CH_NV / 2 or 1); BOX: the chain has boxed steps (a
 * constant in each copy: the others track no places in rows) */
static inline __attribute__((always_inline)) void CH_CAT(ch_strips_, CH_S)(
    const cj_ew_chain *c, char *const *tab, CH_T *out, int64_t i0, int64_t i1, const int NVS,
    const bool BOX) {
#define LD(q) CH_CAT(ch_ld_, CH_S)(q)
#define ST(q, v) CH_CAT(ch_st_, CH_S)(q, v)
#define LDH(q) CH_CAT(ch_ldh_, CH_S)(q)
#define STH(q, v) CH_CAT(ch_sth_, CH_S)(q, v)
#define LDM(q) CH_CAT(ch_ldm_, CH_S)(q, CH_W)
#ifdef CH_MASKLD
#define MLD(q, bits, pad) CH_MASKLD(q, bits, pad)
#else
#define MLD(q, bits, pad) CH_CAT(ch_boxsel_, CH_S)(LD(q), bits, pad)
#endif
  int64_t w = BOX ? c->box_w : 1, c0 = BOX ? i0 % w : 0;
  if (NVS == CH_NV) {
    enum { NV = CH_NV };
    for (int64_t i = i0; i + NV * CH_W <= i1; i += NV * CH_W) {
      CH_STRIP_BODY();
      for (c0 += NV * CH_W; BOX && c0 >= w;) c0 -= w;
    }
  } else if (NVS == CH_NV / 2) {
    enum { NV = CH_NV / 2 };
    for (int64_t i = i0; i + NV * CH_W <= i1; i += NV * CH_W) {
      CH_STRIP_BODY();
      for (c0 += NV * CH_W; BOX && c0 >= w;) c0 -= w;
    }
  } else {
    enum { NV = 1 };
    for (int64_t i = i0; i + CH_W <= i1; i += CH_W) {
      CH_STRIP_BODY();
      for (c0 += CH_W; BOX && c0 >= w;) c0 -= w;
    }
  }
#undef LD
#undef ST
#undef LDH
#undef STH
#undef LDM
#undef MLD
}
static void CH_CAT(ch_nv_, CH_S)(const cj_ew_chain *c, char *const *tab, CH_T *out, int64_t i0,
                                 int64_t i1) {
  CH_CAT(ch_strips_, CH_S)(c, tab, out, i0, i1, CH_NV, false);
}
static void CH_CAT(ch_nv_box_, CH_S)(const cj_ew_chain *c, char *const *tab, CH_T *out,
                                     int64_t i0, int64_t i1) {
  CH_CAT(ch_strips_, CH_S)(c, tab, out, i0, i1, CH_NV, true);
}
/* a strip's remainder (a row of a flat group's edge, rows shorter than a strip): half strips
 * hold the accumulators of more vectors per step than single vectors */
static void CH_CAT(ch_half_, CH_S)(const cj_ew_chain *c, char *const *tab, CH_T *out, int64_t i0,
                                   int64_t i1) {
  CH_CAT(ch_strips_, CH_S)(c, tab, out, i0, i1, CH_NV / 2, c->box_w > 0);
}
static void CH_CAT(ch_vecs_, CH_S)(const cj_ew_chain *c, char *const *tab, CH_T *out, int64_t i0,
                                   int64_t i1) {
  CH_CAT(ch_strips_, CH_S)(c, tab, out, i0, i1, 1, c->box_w > 0);
}
/* the last k < CH_W elements, through a vector of copies (the other lanes compute on zeros) */
static inline CH_VT CH_CAT(ch_ldk_, CH_S)(const CH_T *p, int64_t k) {
  CH_VT v = {0};
  memcpy(&v, p, (size_t)k * sizeof(CH_T));
  return v;
}
static void CH_CAT(ch_tail_, CH_S)(const cj_ew_chain *c, char *const *tab, CH_T *out, int64_t i,
                                   int64_t k) {
  enum { NV = 1 };
#define LD(q) CH_CAT(ch_ldk_, CH_S)(q, k)
#define ST(q, v)                                       \
  do {                                                 \
    CH_VT t_ = (v);                                    \
    memcpy((q), &t_, (size_t)k * sizeof(CH_T));        \
  } while (0)
#define MLD(q, bits, pad) CH_CAT(ch_boxsel_, CH_S)(LD(q), bits, pad)
#define LDH(q) CH_CAT(ch_ldhk_, CH_S)(q, k)
#define STH(q, v)                                      \
  do {                                                 \
    CH_VH t_ = CH_CAT(ch_toh_, CH_S)(v);               \
    memcpy((q), &t_, (size_t)k * sizeof(uint16_t));    \
  } while (0)
#define LDM(q) CH_CAT(ch_ldm_, CH_S)(q, k)
  const bool BOX = c->box_w > 0;
  int64_t c0 = BOX ? i % c->box_w : 0;
  CH_STRIP_BODY();
#undef LD
#undef ST
#undef LDH
#undef STH
#undef LDM
#undef MLD
}

static void CH_CAT(ch_run_, CH_S)(const cj_ew_chain *c, char *const *tab, int64_t n) {
  CH_T *out = (CH_T *)(void *)tab[c->dst];
  int64_t strips = n / (CH_NV * CH_W) * (CH_NV * CH_W), whole = n / CH_W * CH_W;
  if (strips && c->box_w) CH_CAT(ch_nv_box_, CH_S)(c, tab, out, 0, strips);
  else if (strips) CH_CAT(ch_nv_, CH_S)(c, tab, out, 0, strips);
  int64_t halves = strips + (n - strips) / (CH_NV / 2 * CH_W) * (CH_NV / 2 * CH_W);
  if (halves > strips) CH_CAT(ch_half_, CH_S)(c, tab, out, strips, halves);
  if (whole > halves) CH_CAT(ch_vecs_, CH_S)(c, tab, out, halves, whole);
  if (n > whole) CH_CAT(ch_tail_, CH_S)(c, tab, out, whole, n - whole);
}

#undef CH_BIN
#undef CH_LDA
#undef CH_SC
#undef CH_HDECL
#undef CH_HSET
#undef CH_STO
#undef CH_ROUND_CASE
#ifdef CH_H
#undef CH_VH
#undef CH_VU
#endif
#undef CH_OPAQUE
#undef CH_LDB
#undef CH_BOX_AT
#undef CH_STRIP_BODY
#undef CH_VT
#undef CH_VI
#undef CH_W
