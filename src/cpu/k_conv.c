/* cjrt: convolution and dynamic_conv (see k_conv.h for the geometry).
 *
 * This file: reading the op into a kc_geom, the element conversions (plain converts,
 * dequantization), the canonical weights, the prep steps, the generic compute kernel for every
 * element type and the finalizers (convert, quantize). The f32 GEMM path is k_conv_gemm.c.
 *
 * Quantized convolutions follow what the reference interpreter runs, which the corpus' expected
 * values come from (StableHLO's quant-to-math lowering):
 *   - "integer" form, when lhs is per-tensor, rhs and result are both per-tensor or both
 *     per-axis with rhs zero points 0 (and per-axis result zero points 0, one rhs/result scale
 *     ratio), no lhs dilation, and the layout is NHWC/NCHW/NDHWC/NCDHW: the sum of
 *     (lhs - zp_lhs) * rhs in integers, then the combined scale s_l * s_r / s_res applied in f32
 *     (skipped when within 0.001 of 1) to the sum and to the zero-point offset separately, plus
 *     the result zero point, wrapped into the storage type;
 *   - "hybrid" (float lhs, quantized rhs, float result): rhs dequantized, then a float
 *     convolution;
 *   - otherwise dequantize, convolve in f32, and quantize the result (divide by the scale, add
 *     the zero point, clamp to the storage range, round to nearest even).
 * precision_config is not consulted: f32 (and smaller floats) accumulate in f32, f64 in f64,
 * which is what HIGHEST asks and what XLA:CPU does for every precision.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/k_conv.h"
#include "cpu/k_dot_bf.h"
#include "cpu/k_linalg.h"


/* ======================================================================== small helpers */

static cj_dtype acc_dtype(kc_acc a) {
  switch (a) {
    case KA_F32: return CJ_F32;
    case KA_F64: return CJ_F64;
    case KA_I64: return CJ_S64;
    case KA_C64: return CJ_C64;
    default: return CJ_C128;
  }
}

static int32_t sat_i32(float f) {
  if (f != f) return 0;
  if (f >= 2147483648.0f) return INT32_MAX;
  if (f < -2147483648.0f) return INT32_MIN;
  return (int32_t)f;
}

/* Describes a static tensor value (quantized ones as their storage). */
static CJ_MUST_USE cj_status kc_tensor(cj_lw *L, cj_op *op, cj_value *v, cj_lw_tensor *out) {
  return cj_lw_storage_tensor_of(L, op, v, out);
}

static CJ_MUST_USE cj_status kc_result(cj_lw *L, cj_op *op, cj_lw_tensor *out) {
  cj_value *v = &op->results[0];
  if (!cj_type_is_quant(v->type)) return cj_lw_result(L, op, 0, out);
  int64_t bytes = cj_lw_type_bytes(v->type);
  if (bytes < 0) return cj_op_error(op, CJ_UNIMPLEMENTED, "the result has a dynamic shape");
  int32_t b = cj_lw_new_buf(L, bytes, CJ_BK_ARENA);
  CJ_RETURN_IF_ERROR(cj_lw_bind(L, v, 1, &b));
  return kc_tensor(L, op, v, out);
}

static const cj_quant *quant_of(const cj_type *t) {
  return t && t->elem && t->elem->kind == CJ_TYPE_QUANT ? t->elem->quant : NULL;
}

/* ======================================================================== conversions */

/* How elements of the lhs or rhs become accumulation-type values. */
enum { CV_FN, CV_DEQ, CV_ZSUB };

typedef struct kc_cvt {
  int mode;
  cj_ew_fn fn;         /* CV_FN */
  cj_ew_aux aux;
  cj_dtype src;        /* storage dtype */
  int32_t zp;          /* CV_DEQ / CV_ZSUB, per-tensor */
  float scale;         /* CV_DEQ, per-tensor */
  const int32_t *zps;  /* per-axis (indexed by the global output feature), else NULL */
  const float *scales;
} kc_cvt;

/* n integers of storage type dt starting at src, as int64 into dst */
static void load_ints(cj_dtype dt, const void *src, int64_t n, int64_t *dst) {
  switch (dt) {
#define LD(D, T)                                                   \
  case CJ_##D: {                                                   \
    const T *s = src;                                              \
    for (int64_t i = 0; i < n; i++) dst[i] = (int64_t)s[i];        \
    break;                                                         \
  }
    LD(S8, int8_t)
    LD(U8, uint8_t)
    LD(S16, int16_t)
    LD(U16, uint16_t)
    LD(S32, int32_t)
    LD(U32, uint32_t)
    LD(S64, int64_t)
    LD(U64, uint64_t)
#undef LD
    default:
      for (int64_t i = 0; i < n; i++) dst[i] = cj_elem_get_i64(dt, src, (size_t)i);
  }
}

/* Converts n elements; o0 is the global output feature of element 0 (per-axis rows). */
static void kc_convert(const kc_cvt *c, void *dst, const void *src, int64_t n, int64_t o0) {
  if (c->mode == CV_FN) {
    c->fn(dst, src, NULL, NULL, n, &c->aux);
    return;
  }
  int64_t buf[256];
  int esz = cj_dtype_bytes(c->src);
  for (int64_t i0 = 0; i0 < n; i0 += 256) {
    int64_t m = n - i0 < 256 ? n - i0 : 256;
    load_ints(c->src, (const char *)src + i0 * esz, m, buf);
    if (c->mode == CV_DEQ) {
      float *d = (float *)dst + i0;
      if (c->scales)
        for (int64_t i = 0; i < m; i++)
          d[i] = (float)((int32_t)buf[i] - c->zps[o0 + i0 + i]) * c->scales[o0 + i0 + i];
      else
        for (int64_t i = 0; i < m; i++) d[i] = (float)((int32_t)buf[i] - c->zp) * c->scale;
    } else {
      int64_t *d = (int64_t *)dst + i0;
      for (int64_t i = 0; i < m; i++) d[i] = buf[i] - c->zp;
    }
  }
}

/* Sets up a dequantizing converter from a quantized type (scales rounded to f32, as the
 * reference lowering's constants are). */
static CJ_MUST_USE cj_status deq_cvt(cj_lw *L, const cj_quant *q, int mode, kc_cvt *c) {
  memset(c, 0, sizeof *c);
  c->mode = mode;
  c->src = q->storage;
  if (q->axis < 0) {
    c->zp = (int32_t)q->zero_points[0];
    c->scale = (float)q->scales[0];
    return NULL;
  }
  int32_t *zps = cj_lw_alloc(L, sizeof(int32_t) * (size_t)q->nscales);
  float *scales = cj_lw_alloc(L, sizeof(float) * (size_t)q->nscales);
  if (!zps || !scales) return cj_oom();
  for (int32_t i = 0; i < q->nscales; i++) {
    zps[i] = (int32_t)q->zero_points[i];
    scales[i] = (float)q->scales[i];
  }
  c->zps = zps;
  c->scales = scales;
  return NULL;
}

static CJ_MUST_USE cj_status fn_cvt(const cj_op *op, cj_dtype src, cj_dtype dst, kc_cvt *c) {
  memset(c, 0, sizeof *c);
  c->mode = CV_FN;
  c->src = src;
  c->fn = cj_cvt_lookup(src, dst);
  c->aux.src = src;
  c->aux.dt = dst;
  if (!c->fn)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "no conversion from %s to %s",
                       cj_dtype_get(src)->id, cj_dtype_get(dst)->id);
  return NULL;
}

/* ======================================================================== the geometry */

typedef struct kc_dims {
  int64_t ib, ifd, is[KC_MAXS], kif, kof, ks[KC_MAXS], ob, ofd, os[KC_MAXS];
  int64_t stride[KC_MAXS], ldil[KC_MAXS], rdil[KC_MAXS], lo[KC_MAXS];
  bool rev[KC_MAXS];
  int64_t fgc, bgc;
} kc_dims;

static CJ_MUST_USE cj_status read_list(const cj_op *op, const char *name, int32_t ns, int64_t *out) {
  for (int32_t i = 0; i < ns; i++) out[i] = 1;
  const cj_attr *a = cj_op_attr(op, name);
  if (!a) return NULL;
  int64_t v[KC_MAXS], n = 0;
  if (!cj_attr_get_i64s(a, v, KC_MAXS, &n)) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad %s", name);
  if (n == 0) return NULL;
  if (n != ns)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "%s has %lld entries, expected %d", name,
                       (long long)n, ns);
  for (int32_t i = 0; i < ns; i++) {
    if (v[i] < 1) return cj_op_error(op, CJ_INVALID_ARGUMENT, "%s[%d] must be positive", name, i);
    out[i] = v[i];
  }
  return NULL;
}

static CJ_MUST_USE cj_status read_dims(const cj_op *op, int32_t rank, kc_dims *d) {
  memset(d, 0, sizeof *d);
  int32_t ns = rank - 2;
  if (rank < 2 || ns > KC_MAXS)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "convolution of rank %d is not supported", rank);
  const cj_attr *dn = cj_op_attr(op, "dimension_numbers");
  if (!dn || dn->kind != CJ_ATTR_STRUCT)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing dimension_numbers");
#define F(name) cj_attr_field(dn, CJ_SK_CONV, CJ_SF_CONV_##name)
  int64_t n1 = 0, n2 = 0, n3 = 0;
  /* absent (NULL) fields are their default: 0, or an empty list */
  int64_t *one[6] = {&d->ib, &d->ifd, &d->kif, &d->kof, &d->ob, &d->ofd};
  const cj_attr *fa[6] = {F(input_batch_dimension), F(input_feature_dimension),
                          F(kernel_input_feature_dimension), F(kernel_output_feature_dimension),
                          F(output_batch_dimension), F(output_feature_dimension)};
  bool ok = true;
  for (int k = 0; k < 6; k++) {
    *one[k] = 0;
    if (fa[k]) ok = ok && cj_attr_get_i64(fa[k], one[k]);
  }
  if (F(input_spatial_dimensions)) ok = ok && cj_attr_get_i64s(F(input_spatial_dimensions), d->is, KC_MAXS, &n1);
  if (F(kernel_spatial_dimensions)) ok = ok && cj_attr_get_i64s(F(kernel_spatial_dimensions), d->ks, KC_MAXS, &n2);
  if (F(output_spatial_dimensions)) ok = ok && cj_attr_get_i64s(F(output_spatial_dimensions), d->os, KC_MAXS, &n3);
#undef F
  if (!ok || n1 != ns || n2 != ns || n3 != ns)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad dimension_numbers for rank %d", rank);
  int64_t all[3][CJ_MAX_RANK];
  for (int32_t i = 0; i < ns; i++) {
    all[0][i] = d->is[i];
    all[1][i] = d->ks[i];
    all[2][i] = d->os[i];
  }
  all[0][ns] = d->ib, all[0][ns + 1] = d->ifd;
  all[1][ns] = d->kif, all[1][ns + 1] = d->kof;
  all[2][ns] = d->ob, all[2][ns + 1] = d->ofd;
  for (int k = 0; k < 3; k++) {
    bool seen[CJ_MAX_RANK] = {false};
    for (int32_t i = 0; i < rank; i++) {
      int64_t x = all[k][i];
      if (x < 0 || x >= rank || seen[x])
        return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad dimension_numbers for rank %d", rank);
      seen[x] = true;
    }
  }
  CJ_RETURN_IF_ERROR(read_list(op, "window_strides", ns, d->stride));
  CJ_RETURN_IF_ERROR(read_list(op, "lhs_dilation", ns, d->ldil));
  CJ_RETURN_IF_ERROR(read_list(op, "rhs_dilation", ns, d->rdil));
  const cj_attr *rv = cj_op_attr(op, "window_reversal");
  if (rv && rv->kind == CJ_ATTR_DENSE_ARRAY && rv->darr.n) {
    if (rv->darr.n != ns || cj_dtype_bytes(rv->darr.dtype) != 1)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad window_reversal");
    for (int32_t i = 0; i < ns; i++) d->rev[i] = ((const uint8_t *)rv->darr.data)[i] != 0;
  }
  d->fgc = d->bgc = 1;
  cj_op_get_i64(op, "feature_group_count", &d->fgc);
  cj_op_get_i64(op, "batch_group_count", &d->bgc);
  if (d->fgc < 1 || d->bgc < 1 || (d->fgc > 1 && d->bgc > 1))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad feature_group_count / batch_group_count");
  return NULL;
}

/* Sizes of the geometry (tables are built later, when the lhs buffer's strides are known). */
static CJ_MUST_USE cj_status geom_sizes(const cj_op *op, const kc_dims *d, const cj_type *lt, const cj_type *rt,
                            const cj_type *ot, kc_geom *g) {
  memset(g, 0, sizeof *g);
  int32_t rank = lt->rank, ns = rank - 2;
  if (rt->rank != rank || ot->rank != rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "operands and result must have one rank");
  g->ns = ns;
  g->bgroups = d->bgc > 1;
  g->G = d->bgc > 1 ? d->bgc : d->fgc;
  g->Bout = ot->dims[d->ob];
  g->Cg = rt->dims[d->kif];
  int64_t kout = rt->dims[d->kof];
  if (kout != ot->dims[d->ofd] || kout % g->G)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "kernel output features %lld do not match the result's %lld",
                       (long long)kout, (long long)ot->dims[d->ofd]);
  g->Og = kout / g->G;
  if (lt->dims[d->ib] != g->Bout * d->bgc || lt->dims[d->ifd] != g->Cg * d->fgc)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "batch or feature sizes do not match the groups");
  g->P = g->Q = 1;
  for (int32_t i = 0; i < ns; i++) {
    g->odim[i] = ot->dims[d->os[i]];
    g->kdim[i] = rt->dims[d->ks[i]];
    g->P *= g->odim[i];
    g->Q *= g->kdim[i];
  }
  g->K = g->Q * g->Cg;
  g->M = g->Bout * g->P;
  int64_t ostr[CJ_MAX_RANK] = {0};
  cj_row_strides(rank, ot->dims, ostr);
  g->ob = ostr[d->ob];
  g->of = ostr[d->ofd];
  for (int32_t i = 0; i < ns; i++) g->os[i] = ostr[d->os[i]];
  return NULL;
}

/* The spatial tables for a lhs buffer whose spatial strides are xs[i] (elements). */
static CJ_MUST_USE cj_status geom_tables(cj_lw *L, const kc_dims *d, const cj_type *lt, const int64_t *xs,
                             kc_geom *g) {
  for (int32_t i = 0; i < g->ns; i++) {
    int64_t no = g->odim[i], nk = g->kdim[i];
    int64_t *t = cj_lw_alloc(L, sizeof(int64_t) * (size_t)(no * nk > 0 ? no * nk : 1));
    if (!t) return cj_oom();
    int64_t in = lt->dims[d->is[i]];
    int64_t dilated = in > 0 ? (in - 1) * d->ldil[i] + 1 : 0;
    for (int64_t o = 0; o < no; o++)
      for (int64_t k = 0; k < nk; k++) {
        int64_t kk = d->rev[i] ? nk - 1 - k : k;
        int64_t pos = o * d->stride[i] + kk * d->rdil[i] - d->lo[i];
        int64_t v = -1;
        if (pos >= 0 && pos < dilated && pos % d->ldil[i] == 0) v = (pos / d->ldil[i]) * xs[i];
        t[o * nk + k] = v;
      }
    g->tab[i] = t;
  }
  return NULL;
}

/* ======================================================================== canonical weights */

/* Where the rhs elements are: element offset of (kernel spatial coords, c, global o). */
typedef struct kc_rhs {
  int64_t sstr[KC_MAXS]; /* strides of the kernel spatial dims */
  int64_t cstr, ostr;
  cj_dtype dt;           /* storage dtype */
} kc_rhs;

typedef struct kc_wprep {
  kc_geom g;
  kc_rhs r;
  kc_cvt cvt;            /* storage -> accumulation type, rows of Og */
  cj_dtype acc_dt;
  bool pack;             /* GEMM panels */
  bool dw;               /* depthwise: W[g][q][0][j] as Wd[q][g * Og + j] (f32) */
  bool zpoff;            /* integer quantized form: per output feature lhs_zp * sum(rhs) */
  int32_t lhs_zp;
} kc_wprep;

/* raw gather into W[g][q][c][o] (storage dtype) */
static void rhs_gather(const kc_wprep *w, const char *src, char *raw) {
  const kc_geom *g = &w->g;
  int esz = cj_dtype_bytes(w->r.dt);
  int64_t kc[KC_MAXS] = {0};
  for (int64_t q = 0; q < g->Q; q++) {
    int64_t so = 0;
    for (int32_t i = 0; i < g->ns; i++) so += kc[i] * w->r.sstr[i];
    for (int64_t grp = 0; grp < g->G; grp++)
      for (int64_t c = 0; c < g->Cg; c++) {
        char *d = raw + (((grp * g->Q + q) * g->Cg + c) * g->Og) * esz;
        const char *s = src + (so + c * w->r.cstr + grp * g->Og * w->r.ostr) * esz;
        if (w->r.ostr == 1) {
          memcpy(d, s, (size_t)(g->Og * esz));
        } else if (esz == 2) {
          for (int64_t o = 0; o < g->Og; o++) ((uint16_t *)d)[o] = ((const uint16_t *)s)[o * w->r.ostr];
        } else if (esz == 4) {
          for (int64_t o = 0; o < g->Og; o++) ((uint32_t *)d)[o] = ((const uint32_t *)s)[o * w->r.ostr];
        } else {
          for (int64_t o = 0; o < g->Og; o++) memcpy(d + o * esz, s + o * w->r.ostr * esz, (size_t)esz);
        }
      }
    for (int32_t i = g->ns - 1; i >= 0; i--) {
      if (++kc[i] < g->kdim[i]) break;
      kc[i] = 0;
    }
  }
}

/* f32 weights straight into the GEMM's panels Wp[G][npan][K][KC_NR] (as rhs_gather, the row
 * conversion and cj_kc_gemm_pack would leave them) in one pass. Per panel and input feature the
 * kernel positions go in order, so an rhs whose output features lie far apart (the kernel
 * gradient of a convolution, whose "weights" are an activation gradient) is read along its
 * contiguous spatial dimension, KC_NR streams at a time. */
/* Units [b, e) of the f32 packing, a unit being one (group, panel, input feature): its K rows
 * of the panel (q = 0 .. Q - 1), disjoint from every other unit's */
static void rhs_pack_f32_units(const kc_wprep *w, const float *src, float *wp, int64_t b, int64_t e) {
  const kc_geom *g = &w->g;
  int64_t npan = (g->Og + KC_NR - 1) / KC_NR, ostr = w->r.ostr;
  for (int64_t u = b; u < e; u++) {
    int64_t c = u % g->Cg, j = u / g->Cg % npan, grp = u / g->Cg / npan;
    int64_t o0 = j * KC_NR, n = g->Og - o0 < KC_NR ? g->Og - o0 : KC_NR;
    float *pan = wp + (grp * npan + j) * g->K * KC_NR;
    const float *sb = src + (grp * g->Og + o0) * ostr;
    int64_t kc[KC_MAXS] = {0};
    for (int64_t q = 0; q < g->Q; q++) {
      int64_t so = c * w->r.cstr;
      for (int32_t i = 0; i < g->ns; i++) so += kc[i] * w->r.sstr[i];
      float *d = pan + (q * g->Cg + c) * KC_NR;
      const float *s = sb + so;
      if (ostr == 1) {
        memcpy(d, s, sizeof(float) * (size_t)n);
      } else {
        for (int64_t o = 0; o < n; o++) d[o] = s[o * ostr];
      }
      if (n < KC_NR) memset(d + n, 0, sizeof(float) * (size_t)(KC_NR - n));
      for (int32_t i = g->ns - 1; i >= 0; i--) {
        if (++kc[i] < g->kdim[i]) break;
        kc[i] = 0;
      }
    }
  }
}

static int64_t rhs_pack_units(const kc_wprep *w) {
  return w->g.G * ((w->g.Og + KC_NR - 1) / KC_NR) * w->g.Cg;
}

static void rhs_pack_f32(const kc_wprep *w, const float *src, float *wp) {
  rhs_pack_f32_units(w, src, wp, 0, rhs_pack_units(w));
}

/* the prep step's units [b, e) (f32 panels: in[0] the weights, out[2] the panels) */
typedef struct rhs_pack_run {
  cj_exec_ctx *ctx;
  const cj_step *st;
} rhs_pack_run;

static void rhs_pack_body(void *vr, int64_t b, int64_t e) {
  const rhs_pack_run *R = vr;
  rhs_pack_f32_units(R->st->params, (const float *)CJ_PTR(R->ctx, R->st->in[0]),
                     (float *)CJ_PTR(R->ctx, R->st->out[2]), b, e);
}

/* Full preparation: raw gather, row conversion, zero-point offsets, packing. `raw` holds
 * G*K*Og storage elements, `w` G*K*Og accumulation elements, `wp` the packed panels (for f32
 * panels the only output: raw and w are left alone). */
static void rhs_prepare(const kc_wprep *p, const char *src, char *raw, char *w, float *wp,
                        int32_t *zpoff) {
  const kc_geom *g = &p->g;
  if (p->pack && !p->zpoff && p->r.dt == CJ_F32 && p->acc_dt == CJ_F32) {
    rhs_pack_f32(p, (const float *)src, wp);
    return;
  }
  rhs_gather(p, src, raw);
  int esz = cj_dtype_bytes(p->r.dt), asz = cj_dtype_bytes(p->acc_dt);
  int64_t rows = g->G * g->K;
  for (int64_t r = 0; r < rows; r++)
    kc_convert(&p->cvt, w + r * g->Og * asz, raw + r * g->Og * esz, g->Og, (r / g->K) * g->Og);
  if (p->zpoff) {
    /* lhs_zp * sum over spatial and input features of the storage values, in i32 */
    int64_t tmp[256];
    for (int64_t grp = 0; grp < g->G; grp++) {
      uint32_t *acc = (uint32_t *)zpoff + grp * g->Og;
      for (int64_t o = 0; o < g->Og; o++) acc[o] = 0;
      for (int64_t k = 0; k < g->K; k++) {
        const char *row = raw + ((grp * g->K + k) * g->Og) * esz;
        for (int64_t o0 = 0; o0 < g->Og; o0 += 256) {
          int64_t m = g->Og - o0 < 256 ? g->Og - o0 : 256;
          load_ints(p->r.dt, row + o0 * esz, m, tmp);
          for (int64_t o = 0; o < m; o++) acc[o0 + o] += (uint32_t)tmp[o];
        }
      }
      for (int64_t o = 0; o < g->Og; o++) acc[o] = (uint32_t)p->lhs_zp * acc[o];
    }
  }
  if (p->pack) cj_kc_gemm_pack(g, (const float *)w, wp);
  if (p->dw) {
    const float *wf = (const float *)w;
    for (int64_t grp = 0; grp < g->G; grp++)
      for (int64_t q = 0; q < g->Q; q++)
        for (int64_t j = 0; j < g->Og; j++)
          wp[q * g->G * g->Og + grp * g->Og + j] = wf[(grp * g->Q + q) * g->Og + j];
  }
}

/* runtime preparation: in[0] = rhs; out[0] = W, out[1] = raw, then packed, then zpoff */
static CJ_MUST_USE cj_status k_conv_prep_rhs(cj_exec_ctx *ctx, const cj_step *st) {
  const kc_wprep *p = st->params;
  uint32_t k = 2;
  float *wp = NULL;
  int32_t *zp = NULL;
  if (p->pack || p->dw) {
    wp = (float *)CJ_PTR(ctx, st->out[k]);
    k++;
  }
  if (p->zpoff) zp = (int32_t *)CJ_PTR(ctx, st->out[k]);
  /* runtime f32 weights packed straight into panels (a kernel gradient's: the output gradient,
   * often the largest operand, whose copy cost more than the products): over the pool */
  int64_t units = rhs_pack_units(p);
  if (p->pack && !p->zpoff && p->r.dt == CJ_F32 && p->acc_dt == CJ_F32 && ctx->pool &&
      cj_pool_size(ctx->pool) > 1 && units > 1 && p->g.G * p->g.K * p->g.Og >= CJ_PAR_MIN_ELEMS) {
    rhs_pack_run R = {ctx, st}; /* (wp is out[2]) */
    cj_pool_parallel_for(ctx->pool, units, 1, rhs_pack_body, &R);
    return NULL;
  }
  rhs_prepare(p, CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->out[1]), CJ_PTR(ctx, st->out[0]), wp, zp);
  return NULL;
}

/* ======================================================================== lhs preparation */

typedef struct kc_xprep {
  kc_cvt cvt;
  int64_t n;       /* elements */
  int esz, asz;
} kc_xprep;

typedef struct xprep_run {
  const kc_xprep *p;
  const char *src;
  char *dst;
} xprep_run;

static void xprep_body(void *vctx, int64_t b, int64_t e) {
  xprep_run *r = vctx;
  const kc_xprep *p = r->p;
  int64_t lo = b * 4096, hi = e * 4096 < p->n ? e * 4096 : p->n;
  if (lo < hi) kc_convert(&p->cvt, r->dst + lo * p->asz, r->src + lo * p->esz, hi - lo, 0);
}

static CJ_MUST_USE cj_status k_conv_prep_lhs(cj_exec_ctx *ctx, const cj_step *st) {
  const kc_xprep *p = st->params;
  xprep_run r = {p, CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->out[0])};
  int64_t chunks = (p->n + 4095) / 4096;
  if (ctx->pool && p->n >= CJ_PAR_MIN_ELEMS)
    cj_pool_parallel_for(ctx->pool, chunks, 4, xprep_body, &r);
  else
    xprep_body(&r, 0, chunks);
  return NULL;
}

/* GEMM path: any lhs layout / f32, bf16, f16 into [batch][spatial...][feature] f32 */
/* The innermost spatial dim of a prepared lhs when kernel taps merge into the features (see
 * conv_merge_ok): plo / phi zero positions around the input, and the padded positions stored
 * deinterleaved by the kernel dilation r (position p at (p % r) * wq + p / r, wq = ceil(width /
 * r)), so that taps r apart are adjacent. r = 0: no merge. */
typedef struct kc_merge {
  int64_t plo, phi, r, wq;
} kc_merge;

/* stored position of padded position pp */
static inline int64_t kc_merge_pos(const kc_merge *m, int64_t pp) {
  return (pp % m->r) * m->wq + pp / m->r;
}

typedef struct kc_tprep {
  int32_t ns;
  cj_dtype src;
  int64_t nb, nc, sb, sc, npos;
  int64_t sdim[KC_MAXS], sstr[KC_MAXS];
  kc_merge mg;
} kc_tprep;

typedef struct tprep_run {
  const kc_tprep *p;
  const char *src;
  float *dst;
} tprep_run;

/* One position: nc features from stride sc to contiguous f32. */
static inline void tprep_pos(const kc_tprep *p, float *d, const char *src, int64_t off) {
  if (p->src == CJ_F32) {
    const float *s = (const float *)src + off;
    for (int64_t c = 0; c < p->nc; c++) d[c] = s[c * p->sc];
  } else if (p->src == CJ_BF16) {
    const uint16_t *s = (const uint16_t *)src + off;
    for (int64_t c = 0; c < p->nc; c++) d[c] = cj_bf16_to_f32(s[c * p->sc]);
  } else {
    const uint16_t *s = (const uint16_t *)src + off;
    for (int64_t c = 0; c < p->nc; c++) d[c] = cj_f16_to_f32(s[c * p->sc]);
  }
}

/* An f32 1-D lhs whose batch is its contiguous dimension (the kernel gradient of a NWC conv,
 * where the batch is the forward's channels): rows go in blocks, each position's run of the
 * block's batch elements is read once per feature, instead of one row (and so every cache line
 * of the input) at a time. */
static bool tprep_batch_inner(const kc_tprep *p) {
  return p->src == CJ_F32 && p->ns == 1 && p->sb == 1 && p->sstr[0] > 1 && p->sc > 1;
}

static void tprep_rows_block(const kc_tprep *p, const float *src, float *dst, int64_t b, int64_t e) {
  const kc_merge *m = &p->mg;
  int64_t in = p->sdim[0], istr = p->sstr[0], nc = p->nc;
  int64_t w = m->r ? m->wq * m->r : in;
  int64_t r = m->r ? m->r : 1, ph = m->r ? m->plo % r : 0, q = m->r ? m->plo / r : 0;
  int64_t wq = m->r ? m->wq : 0;
  for (int64_t j = 0; j < in; j++) {
    float *d = dst + (b * w + ph * wq + q) * nc;
    for (int64_t c = 0; c < nc; c++) {
      const float *sp = src + j * istr + c * p->sc + b;
      for (int64_t rr = 0; rr < e - b; rr++) d[rr * w * nc + c] = sp[rr];
    }
    if (++ph == r) {
      ph = 0;
      q++;
    }
  }
}

/* Rows [b, e) of the innermost spatial dim (one position per batch without spatial dims): the
 * row's coordinates are decoded once, its positions walked with running offsets. */
static void tprep_body(void *vctx, int64_t b, int64_t e) {
  tprep_run *R = vctx;
  const kc_tprep *p = R->p;
  if (tprep_batch_inner(p)) {
    for (int64_t b0 = b; b0 < e; b0 += 16)
      tprep_rows_block(p, (const float *)R->src, R->dst, b0, e - b0 < 16 ? e : b0 + 16);
    return;
  }
  const kc_merge *m = &p->mg;
  int32_t in_d = p->ns - 1;
  int64_t in = p->ns ? p->sdim[in_d] : 1, istr = p->ns ? p->sstr[in_d] : 0;
  int64_t w = m->r ? m->wq * m->r : in; /* stored positions per row */
  cj_la_cvi cvi = cj_la_cvi_pick();
  for (int64_t row = b; row < e; row++) {
    int64_t rem = row, off = 0;
    for (int32_t i = in_d - 1; i >= 0; i--) {
      off += (rem % p->sdim[i]) * p->sstr[i];
      rem /= p->sdim[i];
    }
    off += rem * p->sb;
    float *drow = R->dst + row * w * p->nc;
    if (!m->r && p->sc == 1 && istr == p->nc && p->src != CJ_F32) { /* one contiguous row: */
      cvi((const uint16_t *)R->src + off, 0, drow, 0, 1, in * p->nc, p->src == CJ_BF16);
      continue; /* converted a vector at a time (an element at a time cost bf16 CNNs 7%) */
    }
    int64_t r = m->r ? m->r : 1, ph = m->r ? m->plo % r : 0, q = m->r ? m->plo / r : 0;
    int64_t wq = m->r ? m->wq : 0;
    for (int64_t j = 0; j < in; j++, off += istr) {
      tprep_pos(p, drow + (ph * wq + q) * p->nc, R->src, off);
      if (++ph == r) { /* next position: deinterleaved by r (r = 1: in order) */
        ph = 0;
        q++;
      }
    }
  }
}

static CJ_MUST_USE cj_status k_conv_prep_nhwc(cj_exec_ctx *ctx, const cj_step *st) {
  const kc_tprep *p = st->params;
  tprep_run R = {p, CJ_PTR(ctx, st->in[0]), (float *)CJ_PTR(ctx, st->out[0])};
  const kc_merge *m = &p->mg;
  int64_t in = p->ns ? p->sdim[p->ns - 1] : 1, rows = in > 0 ? p->npos / in : 0;
  if (m->r && (m->plo | m->phi)) { /* the padding positions */
    int64_t w = m->wq * m->r;
    for (int64_t r = 0; r < rows; r++)
      for (int64_t pp = 0; pp < in + m->plo + m->phi; pp++) {
        if (pp == m->plo) pp += in;
        if (pp >= in + m->plo + m->phi) break;
        memset(R.dst + (r * w + kc_merge_pos(m, pp)) * p->nc, 0, sizeof(float) * (size_t)p->nc);
      }
  }
  int64_t per_row = in * (p->nc > 0 ? p->nc : 1);
  int64_t grain = 4096 / (per_row > 0 ? per_row : 1) + 1;
  if (tprep_batch_inner(p) && grain < 16) grain = 16;
  if (ctx->pool && p->npos * p->nc >= CJ_PAR_MIN_ELEMS)
    cj_pool_parallel_for(ctx->pool, rows, grain, tprep_body, &R);
  else
    tprep_body(&R, 0, rows);
  return NULL;
}

/* ======================================================================== finalizers */

enum { FIN_CVT, FIN_QINT, FIN_QFLT };

typedef struct kc_fin {
  int mode;
  cj_ew_fn fn;       /* acc (or the quantized intermediate) -> result dtype */
  cj_ew_aux aux;
  int osz;           /* result element bytes */
  /* FIN_QINT */
  int32_t zo;
  bool scaled, has_zpoff;
  float cs;
  /* FIN_QFLT */
  float scale, zp, qmin, qmax;
  const float *scales, *zps; /* per-axis, indexed by global output feature */
} kc_fin;

/* Writes n accumulators (global output features o0..) to out (stride `of` elements). `tmp`
 * has room for n 8-byte values, `tmp2` for n 16-byte values. */
static void finalize_row(const kc_fin *f, const void *acc, int64_t n, int64_t o0, const int32_t *zpoff,
                         char *out, int64_t of, void *tmp, void *tmp2) {
  const void *src = acc;
  if (f->mode == FIN_QINT) {
    const int64_t *a = acc;
    int64_t *t = tmp;
    for (int64_t o = 0; o < n; o++) {
      uint32_t v;
      if (!f->scaled) {
        v = (uint32_t)a[o] + (uint32_t)f->zo;
      } else {
        int32_t zpo = f->has_zpoff ? zpoff[o0 + o] : 0;
        int32_t at = (int32_t)((uint32_t)a[o] + (uint32_t)zpo);
        int32_t r = sat_i32((float)at * f->cs), z = sat_i32((float)zpo * f->cs);
        v = (uint32_t)r + (uint32_t)f->zo - (uint32_t)z;
      }
      t[o] = (int64_t)(int32_t)v;
    }
    src = tmp;
  } else if (f->mode == FIN_QFLT) {
    const float *a = acc;
    float *t = tmp;
    for (int64_t o = 0; o < n; o++) {
      float s = f->scales ? f->scales[o0 + o] : f->scale, z = f->scales ? f->zps[o0 + o] : f->zp;
      float x = a[o] / s + z;
      x = x > f->qmin ? x : f->qmin; /* clamp(min, x, max) = min(max(x, min), max) */
      x = x < f->qmax ? x : f->qmax;
      t[o] = rintf(x);
    }
    src = tmp;
  }
  if (of == 1) {
    f->fn(out, src, NULL, NULL, n, &f->aux);
    return;
  }
  char *c = (char *)tmp2;
  f->fn(c, src, NULL, NULL, n, &f->aux);
  for (int64_t o = 0; o < n; o++) memcpy(out + o * of * f->osz, c + o * f->osz, (size_t)f->osz);
}

/* ======================================================================== generic kernel */

typedef struct kc_gen {
  kc_geom g;
  kc_acc acc;
  int asz;
  kc_fin fin;
  bool has_zpoff;
} kc_gen;

typedef struct gen_run {
  const kc_gen *p;
  const char *x, *w;
  const int32_t *zpoff;
  char *out;
  cj_exec_ctx *ctx;
} gen_run;

/* offset of kernel position kc (coords) for row r, or -1 */
static inline int64_t row_off(const kc_geom *g, const kc_rowinfo *r, const int64_t *kc) {
  int64_t off = 0;
  for (int32_t i = 0; i < g->ns; i++) {
    int64_t t = r->rt[i][kc[i]];
    if (t < 0) return -1;
    off += t;
  }
  return off;
}

static inline void odometer(const kc_geom *g, int64_t *kc) {
  for (int32_t i = g->ns - 1; i >= 0; i--) {
    if (++kc[i] < g->kdim[i]) return;
    kc[i] = 0;
  }
}

#define GEN_KERNEL(NAME, T, MAC)                                                              \
  static void NAME(const kc_geom *g, int64_t grp, const kc_rowinfo *r, const T *x,          \
                   const T *w, T *acc) {                                                      \
    int64_t kc[KC_MAXS] = {0};                                                                \
    for (int64_t q = 0; q < g->Q; q++, odometer(g, kc)) {                                     \
      int64_t off = row_off(g, r, kc);                                                        \
      if (off < 0) continue;                                                                  \
      const T *xp = x + r->xbase + off;                                                       \
      const T *wq = w + (grp * g->Q + q) * g->Cg * g->Og;                                     \
      for (int64_t c = 0; c < g->Cg; c++) {                                                   \
        const T xv = xp[c * g->xc];                                                           \
        const T *wr = wq + c * g->Og;                                                         \
        for (int64_t o = 0; o < g->Og; o++) MAC;                                              \
      }                                                                                       \
    }                                                                                         \
  }

GEN_KERNEL(gen_f32, float, acc[o] += xv * wr[o])
GEN_KERNEL(gen_f64, double, acc[o] += xv * wr[o])
GEN_KERNEL(gen_i64, uint64_t, acc[o] += xv * wr[o])

typedef struct cf32 {
  float re, im;
} cf32;
typedef struct cf64 {
  double re, im;
} cf64;
#define CMAC                                     \
  {                                              \
    acc[o].re += xv.re * wr[o].re - xv.im * wr[o].im; \
    acc[o].im += xv.re * wr[o].im + xv.im * wr[o].re; \
  }
GEN_KERNEL(gen_c64, cf32, CMAC)
GEN_KERNEL(gen_c128, cf64, CMAC)
#undef CMAC

static void gen_body(void *vctx, int64_t b, int64_t e) {
  gen_run *R = vctx;
  const kc_gen *p = R->p;
  const kc_geom *g = &p->g;
  cj_tls_area *a = cj_tls_claim(R->ctx);
  if (!a) return;
  int64_t rowb = (g->Og * 16 + 63) & ~(int64_t)63;
  char *acc = a->mem, *tmp = a->mem + rowb, *tmp2 = tmp + rowb;
  int osz = p->fin.osz;
  for (int64_t t = b; t < e; t++) {
    int64_t grp = t / g->M, m = t % g->M;
    kc_rowinfo r;
    kc_row_info(g, grp, m, &r);
    memset(acc, 0, (size_t)(g->Og * p->asz));
    switch (p->acc) {
      case KA_F32: gen_f32(g, grp, &r, (const float *)R->x, (const float *)R->w, (float *)acc); break;
      case KA_F64: gen_f64(g, grp, &r, (const double *)R->x, (const double *)R->w, (double *)acc); break;
      case KA_I64: gen_i64(g, grp, &r, (const uint64_t *)R->x, (const uint64_t *)R->w, (uint64_t *)acc); break;
      case KA_C64: gen_c64(g, grp, &r, (const cf32 *)R->x, (const cf32 *)R->w, (cf32 *)acc); break;
      case KA_C128: gen_c128(g, grp, &r, (const cf64 *)R->x, (const cf64 *)R->w, (cf64 *)acc); break;
    }
    finalize_row(&p->fin, acc, g->Og, grp * g->Og, R->zpoff, R->out + r.obase * osz, g->of, tmp,
                 tmp2);
  }
  cj_tls_release(R->ctx, a);
}

/* Depthwise (feature groups of one input feature each, f32): every output row accumulates
 * all G * Og features at once, vectorized over features; per output it sums over kernel
 * positions in order, exactly as the generic kernel does (Cg = 1). W is Wd[q][G * Og]. */
static void dw_body(void *vctx, int64_t b, int64_t e) {
  gen_run *R = vctx;
  const kc_gen *p = R->p;
  const kc_geom *g = &p->g;
  cj_tls_area *a = cj_tls_claim(R->ctx);
  if (!a) return;
  int64_t nf = g->G * g->Og, m = g->Og;
  int64_t rowb = (nf * 16 + 63) & ~(int64_t)63;
  float *acc = (float *)a->mem;
  char *tmp = a->mem + rowb, *tmp2 = tmp + rowb;
  const float *x = (const float *)R->x, *w = (const float *)R->w;
  for (int64_t mm = b; mm < e; mm++) {
    kc_rowinfo r;
    kc_row_info(g, 0, mm, &r);
    memset(acc, 0, sizeof(float) * (size_t)nf);
    int64_t kc[KC_MAXS] = {0};
    for (int64_t q = 0; q < g->Q; q++, odometer(g, kc)) {
      int64_t off = row_off(g, &r, kc);
      if (off < 0) continue;
      const float *xp = x + r.xbase + off, *wq = w + q * nf;
      if (m == 1 && g->xc == 1) {
        for (int64_t o = 0; o < nf; o++) acc[o] += xp[o] * wq[o];
      } else {
        for (int64_t grp = 0; grp < g->G; grp++) {
          float xv = xp[grp * g->xc];
          for (int64_t j = 0; j < m; j++) acc[grp * m + j] += xv * wq[grp * m + j];
        }
      }
    }
    finalize_row(&p->fin, acc, nf, 0, R->zpoff, R->out + r.obase * p->fin.osz, g->of, tmp, tmp2);
  }
  cj_tls_release(R->ctx, a);
}

static CJ_MUST_USE cj_status k_conv_dw(cj_exec_ctx *ctx, const cj_step *st) {
  const kc_gen *p = st->params;
  const kc_geom *g = &p->g;
  gen_run R = {p, CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->in[1]), NULL, CJ_PTR(ctx, st->out[0]), ctx};
  double per_row = (double)g->Q * (double)g->G * (double)g->Og + 1.0;
  int64_t grain = (int64_t)(32768.0 / per_row) + 1;
  if (ctx->pool && cj_pool_size(ctx->pool) > 1 && (double)g->M * per_row > 100000.0)
    cj_pool_parallel_for(ctx->pool, g->M, grain, dw_body, &R);
  else
    dw_body(&R, 0, g->M);
  return NULL;
}

static CJ_MUST_USE cj_status k_conv_generic(cj_exec_ctx *ctx, const cj_step *st) {
  const kc_gen *p = st->params;
  const kc_geom *g = &p->g;
  gen_run R = {p, CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->in[1]),
               p->has_zpoff ? (const int32_t *)CJ_PTR(ctx, st->in[2]) : NULL,
               CJ_PTR(ctx, st->out[0]), ctx};
  int64_t rows = g->G * g->M;
  double per_row = (double)g->K * (double)g->Og + 1.0;
  int64_t grain = (int64_t)(65536.0 / per_row) + 1;
  if (ctx->pool && cj_pool_size(ctx->pool) > 1 && (double)rows * per_row > 200000.0)
    cj_pool_parallel_for(ctx->pool, rows, grain, gen_body, &R);
  else
    gen_body(&R, 0, rows);
  return NULL;
}

/* ======================================================================== lhs-dilated GEMMs */

/* A convolution with lhs dilation (the input gradient of a strided convolution, a transposed
 * convolution) meets a dilation hole at most (output, kernel position) pairs: with dilation s
 * in a dimension only about one kernel tap in s reads an input element. The holes depend only
 * on the output position's residue class, so the outputs split into phases (one residue per
 * dilated dimension), each an ordinary convolution over its own taps: the GEMM path runs one
 * product per phase, with the phase's weights packed per execution and its outputs written
 * compactly to scratch, then copied into place; outputs that no tap reaches (kernel dilation and
 * lhs dilation sharing a factor) are zeros. Sums skip only zero terms. */
enum { KC_MAXPH = 16 };

enum { PH_GEMM, PH_ZERO, PH_NONE }; /* a product; outputs no tap reaches; no outputs */

typedef struct kc_phase {
  int kind;
  kc_geom g;         /* the phase's convolution: its outputs, its taps, compact result strides */
  int64_t *qmap;     /* [g.Q]: full kernel position of each of the phase's taps */
  cj_strided copy;   /* scratch -> result */
} kc_phase;

typedef struct kc_phases {
  int32_t n, ngemm;
  int64_t K, Cg, Og, G; /* of the full convolution */
  kc_phase ph[KC_MAXPH];
} kc_phases;

static int64_t gcd64(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* The taps of dimension i that output residue o0 can meet (ascending); returns their number. */
static int64_t phase_taps(const kc_dims *d, const kc_geom *g, int32_t i, int64_t o0, int64_t *k) {
  int64_t nk = g->kdim[i], n = 0, s = d->ldil[i];
  for (int64_t j = 0; j < nk; j++) {
    int64_t kk = d->rev[i] ? nk - 1 - j : j;
    int64_t pos = o0 * d->stride[i] + kk * d->rdil[i] - d->lo[i];
    if (((pos % s) + s) % s == 0) k[n++] = j;
  }
  return n;
}

/* The copy of a phase's compact result [Bout][odim...][G * Og] into the result (a zero phase:
 * from one zero element, stride 0). */
static void phase_copy(const kc_geom *g, const kc_geom *p, const int64_t *o0, const int64_t *ostep,
                       int esz, bool zero, cj_strided *c) {
  int64_t of = g->G * g->Og, s = of;
  memset(c, 0, sizeof *c);
  c->rank = g->ns + 2;
  c->esize = esz;
  c->dims[g->ns + 1] = of;
  c->sstride[g->ns + 1] = zero ? 0 : esz;
  c->dstride[g->ns + 1] = g->of * esz;
  for (int32_t i = g->ns - 1; i >= 0; i--) {
    c->dims[i + 1] = p->odim[i];
    c->sstride[i + 1] = zero ? 0 : s * esz;
    c->dstride[i + 1] = g->os[i] * ostep[i] * esz;
    c->doff += o0[i] * g->os[i] * esz;
    s *= p->odim[i];
  }
  c->dims[0] = g->Bout;
  c->sstride[0] = zero ? 0 : s * esz;
  c->dstride[0] = g->ob * esz;
  cj_strided_simplify(c);
}

/* One phase: output residues o0[i] (step ostep[i]); *ok false if it cannot be split off. */
static CJ_MUST_USE cj_status phase_geom(cj_lw *L, const kc_dims *d, const kc_geom *g,
                                        const int64_t *o0, const int64_t *ostep, int esz,
                                        kc_phase *ph, bool *ok) {
  kc_geom *p = &ph->g;
  *p = *g;
  *ok = false;
  int64_t taps[KC_MAXS][64], nt[KC_MAXS];
  p->P = p->Q = 1;
  for (int32_t i = 0; i < g->ns; i++) {
    if (g->kdim[i] > 64) return NULL;
    nt[i] = phase_taps(d, g, i, o0[i], taps[i]);
    p->odim[i] = (g->odim[i] - o0[i] + ostep[i] - 1) / ostep[i];
    p->kdim[i] = nt[i];
    p->P *= p->odim[i];
    p->Q *= nt[i];
  }
  *ok = true;
  ph->kind = p->P == 0 ? PH_NONE : p->Q == 0 ? PH_ZERO : PH_GEMM;
  if (ph->kind == PH_NONE) return NULL;
  phase_copy(g, p, o0, ostep, esz, ph->kind == PH_ZERO, &ph->copy);
  if (ph->kind == PH_ZERO) return NULL; /* outputs no tap reaches: zeros */
  p->K = p->Q * g->Cg;
  p->M = g->Bout * p->P;
  for (int32_t i = 0; i < g->ns; i++) {
    int64_t *t = cj_lw_alloc(L, sizeof(int64_t) * (size_t)(p->odim[i] * nt[i]));
    if (!t) return cj_oom();
    for (int64_t o = 0; o < p->odim[i]; o++)
      for (int64_t j = 0; j < nt[i]; j++)
        t[o * nt[i] + j] = g->tab[i][(o0[i] + o * ostep[i]) * g->kdim[i] + taps[i][j]];
    p->tab[i] = t;
  }
  /* compact result strides in scratch */
  int64_t s = g->G * g->Og;
  p->of = 1;
  for (int32_t i = g->ns - 1; i >= 0; i--) {
    p->os[i] = s;
    s *= p->odim[i];
  }
  p->ob = s;
  /* the phase's taps as full kernel positions (row-major over the kernel's spatial dims) */
  ph->qmap = cj_lw_alloc(L, sizeof(int64_t) * (size_t)p->Q);
  if (!ph->qmap) return cj_oom();
  int64_t kc[KC_MAXS] = {0};
  for (int64_t q = 0; q < p->Q; q++) {
    int64_t full = 0;
    for (int32_t i = 0; i < g->ns; i++) full = full * g->kdim[i] + taps[i][kc[i]];
    ph->qmap[q] = full;
    for (int32_t i = g->ns - 1; i >= 0; i--) {
      if (++kc[i] < nt[i]) break;
      kc[i] = 0;
    }
  }
  return NULL;
}

/* Splits g (GEMM path, tables built) into phases when its lhs is dilated and the phases do
 * less than 3/4 of its work; *ph->n = 0 otherwise. */
static CJ_MUST_USE cj_status conv_phases(cj_lw *L, const kc_dims *d, const kc_geom *g, int esz,
                                         kc_phases **out) {
  *out = NULL;
  int64_t ostep[KC_MAXS], np = 1;
  bool dilated = false;
  for (int32_t i = 0; i < g->ns; i++) {
    ostep[i] = d->ldil[i] / gcd64(d->stride[i], d->ldil[i]);
    if (ostep[i] > g->odim[i]) ostep[i] = g->odim[i] > 0 ? g->odim[i] : 1;
    dilated = dilated || d->ldil[i] > 1;
    np *= ostep[i];
    if (np > KC_MAXPH) return NULL; /* (and no overflow: each ostep is at most its odim) */
  }
  if (!dilated || np < 2 || np > KC_MAXPH) return NULL;
  kc_phases *P = cj_lw_alloc(L, sizeof *P);
  if (!P) return cj_oom();
  P->K = g->K;
  P->Cg = g->Cg;
  P->Og = g->Og;
  P->G = g->G;
  int64_t o0[KC_MAXS] = {0};
  double work = 0;
  for (int64_t n = 0; n < np; n++) {
    bool ok;
    CJ_RETURN_IF_ERROR(phase_geom(L, d, g, o0, ostep, esz, &P->ph[n], &ok));
    if (!ok) return NULL; /* a kernel too long for a phase: left to the one GEMM */
    if (P->ph[n].kind == PH_GEMM) work += (double)P->ph[n].g.M * (double)P->ph[n].g.K;
    for (int32_t i = g->ns - 1; i >= 0; i--) {
      if (++o0[i] < ostep[i]) break;
      o0[i] = 0;
    }
  }
  if (work > 0.75 * (double)g->M * (double)g->K) return NULL;
  P->n = (int32_t)np;
  for (int32_t n = 0; n < P->n; n++) P->ngemm += P->ph[n].kind == PH_GEMM;
  *out = P;
  return NULL;
}

/* in[0] = canonical f32 weights W[G][K][Og]; out = the packed panels of each GEMM phase, then
 * scratch for one phase's canonical weights */
static CJ_MUST_USE cj_status k_conv_phase_pack(cj_exec_ctx *ctx, const cj_step *st) {
  const kc_phases *P = st->params;
  const float *w = (const float *)CJ_PTR(ctx, st->in[0]);
  float *sub = (float *)CJ_PTR(ctx, st->out[P->ngemm]);
  int64_t row = P->Cg * P->Og;
  for (int32_t n = 0, j = 0; n < P->n; n++) {
    const kc_phase *ph = &P->ph[n];
    if (ph->kind != PH_GEMM) continue;
    for (int64_t grp = 0; grp < P->G; grp++)
      for (int64_t q = 0; q < ph->g.Q; q++)
        memcpy(sub + (grp * ph->g.Q + q) * row, w + grp * P->K * P->Og + ph->qmap[q] * row,
               sizeof(float) * (size_t)row);
    cj_kc_gemm_pack(&ph->g, sub, (float *)CJ_PTR(ctx, st->out[j]));
    j++;
  }
  return NULL;
}

/* in = each phase's compact result (a zero element for zero phases); out[0] = the result */
static CJ_MUST_USE cj_status k_conv_phase_place(cj_exec_ctx *ctx, const cj_step *st) {
  const kc_phases *P = st->params;
  char *out = CJ_PTR(ctx, st->out[0]);
  for (int32_t n = 0; n < P->n; n++)
    if (P->ph[n].kind != PH_NONE) cj_strided_run(&P->ph[n].copy, out, CJ_PTR(ctx, st->in[n]));
  return NULL;
}

/* Emits the phases: packing from the canonical weights wv, one GEMM per phase, the placing. */
static CJ_MUST_USE cj_status conv_phases_emit(cj_lw *L, cj_op *op, const kc_phases *P,
                                              int32_t xbuf, int32_t wv, int32_t zbuf,
                                              int32_t obuf, cj_dtype odt) {
  int32_t packs[KC_MAXPH + 1], parts[KC_MAXPH];
  int64_t maxsub = 1, esz = cj_dtype_bytes(odt);
  int32_t j = 0;
  for (int32_t n = 0; n < P->n; n++) {
    if (P->ph[n].kind != PH_GEMM) continue;
    packs[j++] = cj_lw_new_buf(L, cj_kc_gemm_packed_floats(&P->ph[n].g) * 4, CJ_BK_ARENA);
    int64_t s = P->G * P->ph[n].g.K * P->Og;
    if (s > maxsub) maxsub = s;
  }
  packs[j] = cj_lw_new_buf(L, maxsub * 4, CJ_BK_ARENA);
  if (!cj_lw_emit(L, op, k_conv_phase_pack, P, 1, &wv, (uint32_t)j + 1, packs)) return cj_oom();
  static const unsigned char zero16[16];
  int32_t zel = cj_lw_const(L, zero16, (size_t)esz);
  j = 0;
  for (int32_t n = 0; n < P->n; n++) {
    const kc_geom *g = &P->ph[n].g;
    parts[n] = zel;
    if (P->ph[n].kind != PH_GEMM) continue;
    parts[n] = cj_lw_new_buf(L, g->Bout * g->P * P->G * P->Og * esz, CJ_BK_ARENA);
    CJ_RETURN_IF_ERROR(cj_kc_gemm_emit(L, op, g, xbuf, packs[j++], zbuf, parts[n], odt, NULL));
  }
  if (!cj_lw_emit(L, op, k_conv_phase_place, P, (uint32_t)P->n, parts, 1, &obuf)) return cj_oom();
  return NULL;
}

/* ======================================================================== merged taps */

/* A GEMM convolution with few input features per group (Cg) reads its lhs rows in runs of Cg
 * floats, one per kernel position: the kernel gradient of a 1-D convolution (features = the
 * batch of the forward pass, kernel = the whole output gradient) is a long dot product cut into
 * runs of 4. With one group, no lhs dilation and no reversal in the innermost kernel dimension,
 * the lhs is prepared in [batch][spatial...][feature] with that dimension's padding written out
 * as zeros and its positions deinterleaved by the kernel dilation (kc_merge): consecutive kernel
 * positions are then consecutive runs, and the dimension merges into the features (Cg' = kdim *
 * Cg, the weights' K order unchanged). The kernel gradient of a strided conv has the stride as
 * its kernel dilation. */
static bool conv_merge_ok(const kc_dims *d, const kc_geom *g, const cj_type *lt, kc_merge *m) {
  int32_t i = g->ns - 1;
  memset(m, 0, sizeof *m);
  if (i < 0 || g->G != 1 || g->Cg >= 16 || g->kdim[i] < 2 || d->ldil[i] != 1 || d->rev[i] ||
      g->odim[i] < 1)
    return false;
  int64_t in = lt->dims[d->is[i]];
  int64_t last = (g->odim[i] - 1) * d->stride[i] + (g->kdim[i] - 1) * d->rdil[i] - d->lo[i];
  m->plo = d->lo[i] > 0 ? d->lo[i] : 0;
  m->phi = last > in - 1 ? last - (in - 1) : 0;
  m->r = d->rdil[i];
  m->wq = (in + m->plo + m->phi + m->r - 1) / m->r;
  if (in > 0 && m->plo + m->phi <= 4 * in + 64) return true; /* padding within reason */
  m->r = 0;
  return false;
}

/* The merged geometry of g (tables built for the padded lhs, strides xs). */
static CJ_MUST_USE cj_status conv_merge_geom(cj_lw *L, const kc_dims *d, const kc_geom *g,
                                             const int64_t *xs, const kc_merge *mg, kc_geom *m) {
  int32_t i = g->ns - 1;
  *m = *g;
  int64_t *t = cj_lw_alloc(L, sizeof(int64_t) * (size_t)g->odim[i]);
  if (!t) return cj_oom();
  for (int64_t o = 0; o < g->odim[i]; o++)
    t[o] = kc_merge_pos(mg, o * d->stride[i] - d->lo[i] + mg->plo) * xs[i];
  m->tab[i] = t;
  m->Cg = g->Cg * g->kdim[i];
  m->Q = g->Q / g->kdim[i];
  m->kdim[i] = 1;
  return NULL;
}

/* The prep step writing the lhs as [batch][spatial...][feature] f32 (innermost spatial dim
 * padded by plo / phi zero positions). */
static CJ_MUST_USE cj_status emit_tprep(cj_lw *L, cj_op *op, const kc_dims *d, const cj_type *lt,
                                        const int64_t *lstr, const kc_merge *mg, int32_t src,
                                        int32_t dst) {
  kc_tprep *tp = cj_lw_alloc(L, sizeof *tp);
  if (!tp) return cj_oom();
  int32_t ns = lt->rank - 2;
  tp->ns = ns;
  tp->src = lt->dtype;
  tp->nb = lt->dims[d->ib];
  tp->nc = lt->dims[d->ifd];
  tp->sb = lstr[d->ib];
  tp->sc = lstr[d->ifd];
  tp->npos = tp->nb;
  tp->mg = *mg;
  for (int32_t i = 0; i < ns; i++) {
    tp->sdim[i] = lt->dims[d->is[i]];
    tp->sstr[i] = lstr[d->is[i]];
    tp->npos *= tp->sdim[i];
  }
  if (!cj_lw_emit(L, op, k_conv_prep_nhwc, tp, 1, &src, 1, &dst)) return cj_oom();
  return NULL;
}

/* ======================================================================== lowering */

enum { MODE_PLAIN, MODE_QINT, MODE_HYBRID, MODE_QDQ };

static bool zps_zero(const cj_quant *q) {
  for (int32_t i = 0; i < q->nscales; i++)
    if (q->zero_points[i]) return false;
  return true;
}

/* Whether the reference lowering takes the integer form (see the top of this file). */
static bool qint_form(const kc_dims *d, int32_t rank, const cj_quant *lq, const cj_quant *rq,
                      const cj_quant *oq) {
  if (!lq || lq->axis >= 0 || !rq || !oq) return false;
  bool rpa = rq->axis >= 0, opa = oq->axis >= 0;
  if (rpa != opa) return false;
  if (!rpa) {
    if (rq->zero_points[0] != 0) return false;
  } else {
    if (!zps_zero(rq) || !zps_zero(oq)) return false;
    if (rq->axis != rank - 1 || rq->nscales != oq->nscales || rq->nscales < 1) return false;
    double r0 = oq->scales[0] / rq->scales[0];
    for (int32_t i = 0; i < rq->nscales; i++) {
      double ri = oq->scales[i] / rq->scales[i];
      if (fabs((ri - r0) / r0) > 0.001) return false;
    }
  }
  int32_t ns = rank - 2;
  for (int32_t i = 0; i < ns; i++)
    if (d->ldil[i] != 1) return false;
  /* layouts: NHWC (b,0,1,f)x(0,1,i,o)->(b,0,1,f), NCHW (b,f,0,1)x(o,i,0,1)->(b,f,0,1), and the
   * 3-D NDHWC / NCDHW (the latter with the kernel as (i,o,0,1,2)) */
  bool nhwc = d->ib == 0 && d->ifd == rank - 1 && d->kif == rank - 2 && d->kof == rank - 1 &&
              d->ob == 0 && d->ofd == rank - 1;
  for (int32_t i = 0; nhwc && i < ns; i++)
    nhwc = d->is[i] == i + 1 && d->ks[i] == i && d->os[i] == i + 1;
  if (nhwc && (ns == 2 || ns == 3)) return true;
  bool nchw = d->ib == 0 && d->ifd == 1 && d->ob == 0 && d->ofd == 1;
  if (ns == 2) nchw = nchw && d->kif == 1 && d->kof == 0;
  else if (ns == 3) nchw = nchw && d->kif == 0 && d->kof == 1;
  else nchw = false;
  for (int32_t i = 0; nchw && i < ns; i++)
    nchw = d->is[i] == i + 2 && d->ks[i] == i + 2 && d->os[i] == i + 2;
  return nchw;
}

/* Constant weights: converted (and packed for the GEMM and depthwise paths) once, at lowering;
 * sets *wbuf (and *zpbuf when the lhs zero point needs per-output offsets). */
static CJ_MUST_USE cj_status conv_const_rhs(cj_lw *L, kc_wprep *wp, const cj_attr *rval, const cj_type *rt,
                                int64_t wn, int64_t esz, int asz, int64_t packed,
                                int32_t *wbuf, int32_t *zpbuf) {
  bool gemm = wp->pack, dw = wp->dw;
  const kc_geom g = wp->g;
  char *src = NULL, *raw = malloc((size_t)(wn * esz + 1)), *wv = malloc((size_t)(wn * asz + 1));
  float *pk = gemm || dw ? malloc(sizeof(float) * (size_t)(packed + 1)) : NULL;
  int32_t *zp = wp->zpoff ? malloc(sizeof(int32_t) * (size_t)(g.G * g.Og + 1)) : NULL;
  const char *data = rval->dense.data;
  if (rval->dense.splat) {
    src = malloc((size_t)(rt->num_elements * esz + 1));
    if (src)
      for (int64_t i = 0; i < rt->num_elements; i++) memcpy(src + i * esz, data, (size_t)esz);
    data = src;
  }
  cj_status st = NULL;
  if (!raw || !wv || ((gemm || dw) && !pk) || (wp->zpoff && !zp) || !data) {
    st = cj_oom();
  } else {
    rhs_prepare(wp, data, raw, wv, pk, zp);
    *wbuf = gemm || dw ? cj_lw_const(L, pk, packed * 4) : cj_lw_const(L, wv, wn * asz);
    if (zp) *zpbuf = cj_lw_const(L, zp, g.G * g.Og * 4);
  }
  free(src);
  free(raw);
  free(wv);
  free(pk);
  free(zp);
  return st;
}

/* How the kernel turns accumulators into results: converts, or requantizes for a quantized
 * result. */
static CJ_MUST_USE cj_status conv_set_fin(cj_lw *L, cj_op *op, kc_gen *p, int mode, cj_dtype adt,
                              cj_dtype odt, const cj_quant *lq, const cj_quant *rq,
                              const cj_quant *oq) {
  kc_fin *f = &p->fin;
  f->osz = cj_dtype_bytes(odt);
  cj_dtype fin_src = adt;
  if (mode == MODE_QINT) {
    f->mode = FIN_QINT;
    fin_src = CJ_S64;
    f->zo = oq->axis < 0 ? (int32_t)oq->zero_points[0] : 0;
    double cs = lq->scales[0] * rq->scales[0] / oq->scales[0];
    f->scaled = fabs(cs - 1.0) > 0.001;
    f->cs = (float)cs;
    f->has_zpoff = p->has_zpoff;
  } else if (oq) {
    f->mode = FIN_QFLT;
    fin_src = CJ_F32;
    f->qmin = (float)oq->storage_min;
    f->qmax = (float)oq->storage_max;
    if (oq->axis < 0) {
      f->scale = (float)oq->scales[0];
      f->zp = (float)oq->zero_points[0];
    } else {
      float *s = cj_lw_alloc(L, sizeof(float) * (size_t)oq->nscales);
      float *z = cj_lw_alloc(L, sizeof(float) * (size_t)oq->nscales);
      if (!s || !z) return cj_oom();
      for (int32_t i = 0; i < oq->nscales; i++) {
        s[i] = (float)oq->scales[i];
        z[i] = (float)oq->zero_points[i];
      }
      f->scales = s;
      f->zps = z;
    }
  } else {
    f->mode = FIN_CVT;
  }
  f->fn = cj_cvt_lookup(fin_src, odt);
  f->aux.src = fin_src;
  f->aux.dt = odt;
  if (!f->fn) return cj_op_error(op, CJ_UNIMPLEMENTED, "no conversion into the result type");
  return NULL;
}

static CJ_MUST_USE cj_status lower_conv_common(cj_lw *L, cj_op *op, const int64_t *lo) {
  const cj_type *lt = op->operands[0]->type, *rt = op->operands[1]->type, *ot = op->results[0].type;
  if (!cj_type_is_static(lt) || !cj_type_is_static(rt) || !cj_type_is_static(ot))
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "dynamic shapes are not supported here (refine shapes first)");
  kc_dims d;
  CJ_RETURN_IF_ERROR(read_dims(op, lt->rank, &d));
  for (int32_t i = 0; i < lt->rank - 2; i++) d.lo[i] = lo[i];
  kc_geom g;
  CJ_RETURN_IF_ERROR(geom_sizes(op, &d, lt, rt, ot, &g));

  const cj_quant *lq = quant_of(lt), *rq = quant_of(rt), *oq = quant_of(ot);
  int mode = MODE_PLAIN;
  if (lq || rq || oq) {
    if (qint_form(&d, lt->rank, lq, rq, oq)) mode = MODE_QINT;
    else if (!lq && rq && !oq) mode = MODE_HYBRID;
    else mode = MODE_QDQ;
  }
  cj_dtype ldt = lt->dtype, rdt = rt->dtype, odt = ot->dtype;
  /* the accumulation type */
  kc_acc acc;
  if (mode == MODE_QINT) {
    acc = KA_I64;
  } else if (mode != MODE_PLAIN) {
    acc = KA_F32;
    if (!oq && odt == CJ_F64) acc = KA_F64;
  } else {
    cj_dtype_kind lk = cj_dtype_kindof(ldt), ok = cj_dtype_kindof(odt);
    if (lk == CJ_DK_COMPLEX || ok == CJ_DK_COMPLEX)
      acc = (ldt == CJ_C128 || odt == CJ_C128) ? KA_C128 : KA_C64;
    else if (lk == CJ_DK_FLOAT || ok == CJ_DK_FLOAT)
      acc = (ldt == CJ_F64 || odt == CJ_F64) ? KA_F64 : KA_F32;
    else if ((lk == CJ_DK_SINT || lk == CJ_DK_UINT || lk == CJ_DK_BOOL) &&
             (ok == CJ_DK_SINT || ok == CJ_DK_UINT || ok == CJ_DK_BOOL))
      acc = KA_I64;
    else
      return cj_op_error(op, CJ_UNIMPLEMENTED, "convolution of %s into %s is not supported",
                         cj_dtype_get(ldt)->id, cj_dtype_get(odt)->id);
    if (rdt != ldt)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "lhs and rhs element types differ");
  }
  cj_dtype adt = acc_dtype(acc);
  int asz = cj_dtype_bytes(adt);

  /* converters for lhs and rhs */
  kc_cvt lcv, rcv;
  if (mode == MODE_QINT) {
    CJ_RETURN_IF_ERROR(deq_cvt(L, lq, CV_ZSUB, &lcv));
    CJ_RETURN_IF_ERROR(fn_cvt(op, rdt, CJ_S64, &rcv));
  } else if (mode == MODE_PLAIN) {
    CJ_RETURN_IF_ERROR(fn_cvt(op, ldt, adt, &lcv));
    CJ_RETURN_IF_ERROR(fn_cvt(op, rdt, adt, &rcv));
  } else {
    if (lq) CJ_RETURN_IF_ERROR(deq_cvt(L, lq, CV_DEQ, &lcv));
    else CJ_RETURN_IF_ERROR(fn_cvt(op, ldt, adt, &lcv));
    if (rq) CJ_RETURN_IF_ERROR(deq_cvt(L, rq, CV_DEQ, &rcv));
    else CJ_RETURN_IF_ERROR(fn_cvt(op, rdt, adt, &rcv));
    if ((lq || rq) && acc != KA_F32)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "quantized convolution into %s",
                         cj_dtype_get(odt)->id);
  }

  cj_lw_tensor x, w, r;
  CJ_RETURN_IF_ERROR(kc_tensor(L, op, op->operands[0], &x));
  bool rconst = false;
  cj_op *rdef = op->operands[1]->def;
  const cj_attr *rval = NULL;
  if (rdef && rdef->kind == CJ_OP_CONSTANT) {
    rval = cj_op_attr(rdef, "value");
    rconst = rval && rval->kind == CJ_ATTR_DENSE &&
             (rval->dense.splat ? rval->dense.nbytes >= (size_t)cj_dtype_bytes(rdt)
                                : (int64_t)rval->dense.nbytes >= cj_lw_type_bytes(rt));
  }
  if (!rconst) CJ_RETURN_IF_ERROR(kc_tensor(L, op, op->operands[1], &w));
  CJ_RETURN_IF_ERROR(kc_result(L, op, &r));
  cj_lw_add_cost(L, 2.0 * (double)g.G * (double)g.M * (double)g.K * (double)g.Og, 0);
  if (r.nelems == 0) return NULL;

  /* the path */
  bool small_f = ldt == CJ_F32 || ldt == CJ_BF16 || ldt == CJ_F16;
  bool small_o = odt == CJ_F32 || odt == CJ_BF16 || odt == CJ_F16;
  bool gemm = mode == MODE_PLAIN && acc == KA_F32 && small_f && small_o && cj_kc_gemm_wanted(&g);
  bool dw = !gemm && acc == KA_F32 && mode != MODE_QINT && !g.bgroups && g.G > 1 && g.Cg == 1;

  /* the lhs buffer the kernel reads and its strides */
  int64_t lstr[CJ_MAX_RANK], xs[KC_MAXS];
  cj_row_strides(lt->rank, lt->dims, lstr);
  int32_t xbuf = x.buf;
  kc_merge mg = {0, 0, 0, 0};
  bool merge = gemm && conv_merge_ok(&d, &g, lt, &mg);
  /* bf16 operands on AVX512_BF16: the GEMM multiplies pairs of input features (exact: its
   * operands come from bf16), so Cg must be even; with contiguous features it reads the lhs as
   * it is (every run starts at an even element) */
  bool bf = gemm && ldt == CJ_BF16 && rdt == CJ_BF16 && g.Cg % 2 == 0 && cj_bd_pick();
  bool lhs_direct = mode == MODE_PLAIN && (ldt == adt || bf) && (!gemm || lstr[d.ifd] == 1) && !merge;
  g.bf = !bf ? KC_BF_NONE : lhs_direct ? KC_BF_LHS16 : KC_BF_LHS32;
  if (lhs_direct || !gemm) {
    g.xb = lstr[d.ib];
    g.xc = lstr[d.ifd];
    for (int32_t i = 0; i < g.ns; i++) xs[i] = lstr[d.is[i]];
  } else { /* GEMM: [batch][spatial...][feature] f32 */
    int64_t s = lt->dims[d.ifd];
    g.xc = 1;
    for (int32_t i = g.ns - 1; i >= 0; i--) {
      xs[i] = s;
      s *= merge && i == g.ns - 1 ? mg.wq * mg.r : lt->dims[d.is[i]];
    }
    g.xb = s;
  }
  CJ_RETURN_IF_ERROR(geom_tables(L, &d, lt, xs, &g));
  kc_geom gm = g; /* the geometry the GEMM runs */
  if (merge) CJ_RETURN_IF_ERROR(conv_merge_geom(L, &d, &g, xs, &mg, &gm));

  if (!lhs_direct) {
    xbuf = cj_lw_new_buf(L, (gemm ? g.xb * lt->dims[d.ib] : x.nelems) * asz, CJ_BK_ARENA);
    if (gemm) {
      CJ_RETURN_IF_ERROR(emit_tprep(L, op, &d, lt, lstr, &mg, x.buf, xbuf));
    } else {
      kc_xprep *xp = cj_lw_alloc(L, sizeof *xp);
      if (!xp) return cj_oom();
      xp->cvt = lcv;
      xp->n = x.nelems;
      xp->esz = cj_dtype_bytes(ldt);
      xp->asz = asz;
      if (!cj_lw_emit(L, op, k_conv_prep_lhs, xp, 1, &x.buf, 1, &xbuf)) return cj_oom();
    }
  }

  kc_phases *phases = NULL; /* a dilated lhs: one GEMM per output phase */
  if (gemm && !rconst && !merge)
    CJ_RETURN_IF_ERROR(conv_phases(L, &d, &g, cj_dtype_bytes(odt), &phases));
  /* the weights */
  kc_wprep *wp = cj_lw_alloc(L, sizeof *wp);
  if (!wp) return cj_oom();
  wp->g = g;
  wp->cvt = rcv;
  wp->acc_dt = adt;
  wp->pack = gemm && !phases;
  wp->dw = dw;
  wp->r.dt = rdt;
  int64_t rstr[CJ_MAX_RANK];
  cj_row_strides(rt->rank, rt->dims, rstr);
  for (int32_t i = 0; i < g.ns; i++) wp->r.sstr[i] = rstr[d.ks[i]];
  wp->r.cstr = rstr[d.kif];
  wp->r.ostr = rstr[d.kof];
  wp->lhs_zp = mode == MODE_QINT ? (int32_t)lq->zero_points[0] : 0;
  wp->zpoff = mode == MODE_QINT && wp->lhs_zp != 0;
  int64_t wn = g.G * g.K * g.Og, esz = cj_dtype_bytes(rdt);
  int64_t packed = wp->pack ? cj_kc_gemm_packed_floats(&g) : dw ? wn : 0;
  int32_t wbuf = -1, zpbuf = -1, wv = -1;
  /* runtime f32 weights with contiguous output features: the GEMM reads them where they are
   * (a kernel gradient's are the whole output gradient, whose packing cost more than the
   * products); same products in the same order as from packed panels */
  int64_t bstr[KC_MAXS + 1];
  bool inplace = wp->pack && !rconst && !merge && rdt == CJ_F32 && wp->r.ostr == 1 &&
                 cj_kc_gemm_inplace_ok(&g);
  bstr[0] = wp->r.cstr;
  for (int32_t i = 0; i < g.ns; i++) bstr[1 + i] = wp->r.sstr[i];
  if (inplace) {
    wbuf = w.buf;
  } else if (rconst) {
    CJ_RETURN_IF_ERROR(conv_const_rhs(L, wp, rval, rt, wn, esz, asz, packed, &wbuf, &zpbuf));
  } else {
    int32_t outs[4];
    uint32_t n = 0;
    wv = cj_lw_new_buf(L, wn * asz, CJ_BK_ARENA);
    outs[n++] = wv;
    outs[n++] = cj_lw_new_buf(L, wn * esz, CJ_BK_ARENA);
    wbuf = wv;
    if (wp->pack || dw) outs[n++] = wbuf = cj_lw_new_buf(L, packed * 4, CJ_BK_ARENA);
    if (wp->zpoff) outs[n++] = zpbuf = cj_lw_new_buf(L, g.G * g.Og * 4, CJ_BK_ARENA);
    if (!cj_lw_emit(L, op, k_conv_prep_rhs, wp, 1, &w.buf, n, outs)) return cj_oom();
  }

  if (gemm) {
    float *z = calloc((size_t)(gm.Cg > 0 ? gm.Cg : 1), sizeof(float));
    if (!z) return cj_oom();
    int32_t zbuf = cj_lw_const(L, z, 4 * (gm.Cg > 0 ? gm.Cg : 1));
    free(z);
    if (phases) return conv_phases_emit(L, op, phases, xbuf, wv, zbuf, r.buf, odt);
    return cj_kc_gemm_emit(L, op, &gm, xbuf, wbuf, zbuf, r.buf, odt, inplace ? bstr : NULL);
  }

  kc_gen *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->g = g;
  p->acc = acc;
  p->asz = asz;
  p->has_zpoff = zpbuf >= 0;
  CJ_RETURN_IF_ERROR(conv_set_fin(L, op, p, mode, adt, odt, lq, rq, oq));
  int64_t nf = dw ? g.G * g.Og : g.Og;
  cj_lw_set_tls_bytes(L, 3 * ((nf * 16 + 63) & ~(int64_t)63) + 64);
  int32_t ins[3] = {xbuf, wbuf, zpbuf};
  if (dw) {
    if (!cj_lw_emit(L, op, k_conv_dw, p, 2, ins, 1, &r.buf)) return cj_oom();
    return NULL;
  }
  if (!cj_lw_emit(L, op, k_conv_generic, p, p->has_zpoff ? 3 : 2, ins, 1, &r.buf)) return cj_oom();
  return NULL;
}

cj_status cj_lower_convolution(cj_lw *L, cj_op *op) {
  int64_t lo[KC_MAXS] = {0};
  const cj_attr *pa = cj_op_attr(op, "padding");
  int32_t ns = op->operands[0]->type->rank - 2;
  if (pa && ns > 0) {
    if (pa->kind != CJ_ATTR_DENSE || cj_dense_num_elements(pa) != 2 * ns)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "padding must have %d x 2 entries", ns);
    for (int32_t i = 0; i < ns && i < KC_MAXS; i++) lo[i] = cj_dense_get_i64(pa, 2 * i);
  }
  return lower_conv_common(L, op, lo);
}

cj_status cj_lower_dynamic_conv(cj_lw *L, cj_op *op) {
  int64_t lo[KC_MAXS] = {0};
  int32_t ns = op->operands[0]->type->rank - 2;
  cj_op *pd = op->operands[2]->def;
  const cj_attr *pa = pd && pd->kind == CJ_OP_CONSTANT ? cj_op_attr(pd, "value") : NULL;
  if (!pa || pa->kind != CJ_ATTR_DENSE)
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "dynamic_conv needs a constant padding operand (its padding is computed at "
                       "run time here)");
  if (cj_dense_num_elements(pa) != 2 * ns)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "padding must have %d x 2 entries", ns);
  for (int32_t i = 0; i < ns && i < KC_MAXS; i++) lo[i] = cj_dense_get_i64(pa, 2 * i);
  return lower_conv_common(L, op, lo);
}
