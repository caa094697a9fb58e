/* cjrt: spec verifiers of dot products, convolutions, linear algebra, fft, batch norm and random
 * number ops. */
#include <stdio.h>
#include <string.h>

#include "ir/shape_check.h"
#include "ir/verify_fns.h"

static const cj_type *T(const cj_op *op, uint32_t i) { return cjv_operand_type(op, i); }
static const cj_type *R(const cj_op *op, uint32_t i) { return cjv_result_type(op, i); }

#define NONQUANT (CJ_EC_BOOL | CJ_EC_INT | CJ_EC_FLOAT | CJ_EC_COMPLEX)

static CJ_MUST_USE cj_status check_precision_config(const cj_op *op, bool *all_default) {
  const cj_attr *pc = cjv_attr(op, "precision_config");
  *all_default = true;
  if (!pc) return NULL;
  if (pc->arr.n > 2)
    CJV_FAIL(op, "precision_config must have at most 2 entries (lhs, rhs), got %d", pc->arr.n);
  for (int32_t i = 0; i < pc->arr.n; i++)
    if (pc->arr.items[i]->en.v != CJ_PRECISION_DEFAULT) *all_default = false;
  return NULL;
}

/* Quantization constraints shared by dot_general and convolution (C14-C20 / C28-C34). */
static CJ_MUST_USE cj_status check_quant_common(const cj_op *op, const cj_type *le, const cj_type *re,
                                    const cj_type *oe) {
  bool lq = cj_shape_is_quant_elem(le), rq = cj_shape_is_quant_elem(re),
       oq = cj_shape_is_quant_elem(oe);
  if (!rq || lq != oq)
    CJV_FAIL(op, "with quantized types, rhs must be quantized and lhs and result must be both "
                 "quantized or both not");
  cjv_tbuf t1, t2, t3;
  if (lq) {
    if (le->quant->storage != re->quant->storage)
      CJV_FAIL(op, "lhs and rhs must have the same quantization storage type, got %s and %s",
               CJV_T(le, t1), CJV_T(re, t2));
    if (le->quant->expressed != re->quant->expressed ||
        le->quant->expressed != oe->quant->expressed)
      CJV_FAIL(op, "lhs, rhs and result must have the same expressed type, got %s, %s and %s",
               CJV_T(le, t1), CJV_T(re, t2), CJV_T(oe, t3));
    if (!cj_shape_is_per_axis(re) && cj_shape_is_per_axis(oe))
      CJV_FAIL(op, "result must be per-tensor quantized when rhs is");
  } else {
    if (le->kind != CJ_TYPE_ELEM || le->dtype != re->quant->expressed || oe != le)
      CJV_FAIL(op,
               "with a quantized rhs and a non-quantized lhs, lhs and result must have the "
               "expressed type of rhs, got %s, %s and %s",
               CJV_T(le, t1), CJV_T(re, t2), CJV_T(oe, t3));
  }
  return NULL;
}

/* ======================================================================== dot */

/* The operands and result of the dot ops: tensors, the lhs not quantized per axis. */
static CJ_MUST_USE cj_status check_dot_tensors(const cj_op *op, const cj_type **l,
                                               const cj_type **r, const cj_type **o) {
  *l = T(op, 0);
  *r = T(op, 1);
  *o = R(op, 0);
  CJV_TRY(cj_verify_check_tensor(op, "lhs", *l, NONQUANT | CJ_EC_QTENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "rhs", *r, CJ_EC_ANY));
  return cj_verify_check_tensor(op, "result", *o, CJ_EC_ANY);
}

cj_status cj_verify_dot_general(const cj_op *op) {
  const cj_type *l, *r, *o;
  CJV_TRY(check_dot_tensors(op, &l, &r, &o));
  const cj_attr *dn = cjv_attr(op, "dot_dimension_numbers");
  int64_t lb[CJV_MAX_DIMS], rb[CJV_MAX_DIMS], lc[CJV_MAX_DIMS], rc[CJV_MAX_DIMS];
  int64_t nlb, nrb, nlc, nrc;
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_DOT, CJ_SF_DOT_lhs_batching_dimensions,
                             "lhs_batching_dimensions", lb, &nlb));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_DOT, CJ_SF_DOT_rhs_batching_dimensions,
                             "rhs_batching_dimensions", rb, &nrb));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_DOT, CJ_SF_DOT_lhs_contracting_dimensions,
                             "lhs_contracting_dimensions", lc, &nlc));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_DOT, CJ_SF_DOT_rhs_contracting_dimensions,
                             "rhs_contracting_dimensions", rc, &nrc));
  bool default_precision;
  CJV_TRY(check_precision_config(op, &default_precision));
  CJV_TRY(cj_verify_check_dot_dims(op, l, r, lb, nlb, rb, nrb, lc, nlc, rc, nrc));
  int64_t expect[CJV_MAX_DIMS];
  int32_t k = 0;
  for (int64_t i = 0; i < nlb; i++)
    expect[k++] = l->dims[lb[i]] != CJ_DYN ? l->dims[lb[i]] : r->dims[rb[i]];
  for (int32_t i = 0; i < l->rank; i++)
    if (!cjv_contains(lb, nlb, i) && !cjv_contains(lc, nlc, i)) expect[k++] = l->dims[i];
  for (int32_t i = 0; i < r->rank; i++)
    if (!cjv_contains(rb, nrb, i) && !cjv_contains(rc, nrc, i)) expect[k++] = r->dims[i];
  CJV_TRY(cj_verify_check_shape_is(op, "result", o, expect, k));

  const cj_attr *alg = cjv_attr(op, "algorithm");
  if (alg) {
    if (!default_precision)
      CJV_FAIL(op, "precision_config must be DEFAULT when an algorithm is given");
    static const struct {
      int field;
      const char *name;
    } counts[] = {{CJ_SF_DOT_ALGORITHM_lhs_component_count, "lhs_component_count"},
                  {CJ_SF_DOT_ALGORITHM_rhs_component_count, "rhs_component_count"},
                  {CJ_SF_DOT_ALGORITHM_num_primitive_operations, "num_primitive_operations"}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
      /* every field of #stablehlo.dot_algorithm is required; an absent one reads as 0 */
      int64_t v = cj_verify_field_i64(alg, CJ_SK_DOT_ALGORITHM, counts[i].field, 0);
      if (v < 1) CJV_FAIL(op, "algorithm %s must be positive, got %lld", counts[i].name, (long long)v);
    }
  }

  const cj_type *le = l->elem, *re = r->elem, *oe = o->elem;
  if (cj_shape_is_quant_elem(le) || cj_shape_is_quant_elem(re) || cj_shape_is_quant_elem(oe)) {
    if (cj_shape_is_quant_elem(re)) {
      for (int32_t i = 0; i < re->quant->nscales; i++)
        if (re->quant->zero_points[i] != 0)
          CJV_FAIL(op, "rhs zero points must be 0, got %lld", (long long)re->quant->zero_points[i]);
      if (cj_shape_is_per_axis(re) && cjv_contains(rc, nrc, re->quant->axis))
        CJV_FAIL(op, "rhs quantization dimension %d must not be a contracting dimension",
                 re->quant->axis);
    }
    return check_quant_common(op, le, re, oe);
  }
  /* The spec asks element_type(lhs) = element_type(rhs); StableHLO programs in the wild (and the
   * conformance corpus) mix precisions, e.g. bf16 x f32, so only the families must agree. */
  cjv_tbuf t1, t2;
  unsigned cl = cj_shape_elem_category(le), cr = cj_shape_elem_category(re);
  if ((cl == CJ_EC_COMPLEX) != (cr == CJ_EC_COMPLEX) || (cl == CJ_EC_BOOL) != (cr == CJ_EC_BOOL))
    CJV_FAIL(op, "lhs %s and rhs %s have incompatible element types", CJV_T(l, t1), CJV_T(r, t2));
  return NULL;
}

cj_status cj_verify_dot(const cj_op *op) {
  const cj_type *l, *r, *o;
  CJV_TRY(check_dot_tensors(op, &l, &r, &o));
  bool dflt;
  CJV_TRY(check_precision_config(op, &dflt));
  cjv_tbuf t1, t2;
  if (l->rank < 1 || l->rank > 2 || r->rank < 1 || r->rank > 2)
    CJV_FAIL(op, "lhs and rhs must have rank 1 or 2, got %s and %s", CJV_T(l, t1), CJV_T(r, t2));
  int64_t lk = l->dims[l->rank - 1], rk = r->dims[0];
  if (!cj_shape_dim_compatible(lk, rk))
    CJV_FAIL(op, "contracting dimensions differ: %s and %s", CJV_T(l, t1), CJV_T(r, t2));
  int64_t expect[2];
  int32_t k = 0;
  if (l->rank == 2) expect[k++] = l->dims[0];
  if (r->rank == 2) expect[k++] = r->dims[1];
  return cj_verify_check_shape_is(op, "result", o, expect, k);
}

static CJ_MUST_USE cj_status check_einsum_config(const cj_op *op, bool binary) {
  const cj_attr *c = cjv_attr(op, "einsum_config");
  const char *s = c->str.s;
  const char *arrow = strstr(s, "->");
  const char *comma = strchr(s, ',');
  if (!arrow || (binary && (!comma || comma > arrow)) || (!binary && comma && comma < arrow))
    CJV_FAIL(op, "einsum_config \"%s\" must have the form \"%s\"", s,
             binary ? "lhs,rhs->result" : "operand->result");
  return NULL;
}

cj_status cj_verify_einsum(const cj_op *op) {
  CJV_TRY(cj_verify_check_tensor(op, "lhs", T(op, 0), CJ_EC_ANY));
  CJV_TRY(cj_verify_check_tensor(op, "rhs", T(op, 1), CJ_EC_ANY));
  CJV_TRY(cj_verify_check_tensor(op, "result", R(op, 0), CJ_EC_ANY));
  return check_einsum_config(op, true);
}

cj_status cj_verify_unary_einsum(const cj_op *op) {
  CJV_TRY(cj_verify_check_tensor(op, "operand", T(op, 0), CJ_EC_ANY));
  CJV_TRY(cj_verify_check_tensor(op, "result", R(op, 0), CJ_EC_ANY));
  return check_einsum_config(op, false);
}

/* ======================================================================== convolution */

typedef struct conv_dims {
  int64_t ib, ifd, is[CJV_MAX_DIMS], kif, kof, ks[CJV_MAX_DIMS], ob, ofd, os[CJV_MAX_DIMS];
  int64_t nis, nks, nos;
} conv_dims;

static CJ_MUST_USE cj_status read_conv_dims(const cj_op *op, conv_dims *c) {
  const cj_attr *dn = cjv_attr(op, "dimension_numbers");
  c->ib = cj_verify_field_i64(dn, CJ_SK_CONV, CJ_SF_CONV_input_batch_dimension, 0);
  c->ifd = cj_verify_field_i64(dn, CJ_SK_CONV, CJ_SF_CONV_input_feature_dimension, 0);
  c->kif = cj_verify_field_i64(dn, CJ_SK_CONV, CJ_SF_CONV_kernel_input_feature_dimension, 0);
  c->kof = cj_verify_field_i64(dn, CJ_SK_CONV, CJ_SF_CONV_kernel_output_feature_dimension, 0);
  c->ob = cj_verify_field_i64(dn, CJ_SK_CONV, CJ_SF_CONV_output_batch_dimension, 0);
  c->ofd = cj_verify_field_i64(dn, CJ_SK_CONV, CJ_SF_CONV_output_feature_dimension, 0);
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_CONV, CJ_SF_CONV_input_spatial_dimensions,
                             "input_spatial_dimensions", c->is, &c->nis));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_CONV, CJ_SF_CONV_kernel_spatial_dimensions,
                             "kernel_spatial_dimensions", c->ks, &c->nks));
  CJV_TRY(cj_verify_get_field_i64s(op, dn, CJ_SK_CONV, CJ_SF_CONV_output_spatial_dimensions,
                             "output_spatial_dimensions", c->os, &c->nos));
  return NULL;
}

static CJ_MUST_USE cj_status check_dim_group(const cj_op *op, const char *what, int64_t a, int64_t b,
                                 const int64_t *s, int64_t ns, int32_t n) {
  int64_t all[CJV_MAX_DIMS + 2];
  all[0] = a;
  all[1] = b;
  for (int64_t i = 0; i < ns; i++) all[2 + i] = s[i];
  CJV_TRY(cj_verify_check_dims_in_range(op, what, all, ns + 2, n));
  return cj_verify_check_unique(op, what, all, ns + 2);
}

/* Window attributes (strides, dilations, reversal) and the result shape they give. */
static CJ_MUST_USE cj_status check_conv_window(const cj_op *op, const cj_type *l, const cj_type *r,
                                   const cj_type *o, const conv_dims *c, const int64_t *lo,
                                   const int64_t *hi, int64_t bgc) {
  int32_t n = l->rank;
  int64_t ns = n - 2;
  int64_t strides[CJV_MAX_DIMS], ldil[CJV_MAX_DIMS], rdil[CJV_MAX_DIMS];
  static const char *const names[3] = {"window_strides", "lhs_dilation", "rhs_dilation"};
  int64_t *lists[3] = {strides, ldil, rdil};
  for (int k = 0; k < 3; k++) {
    int64_t cnt;
    bool present;
    CJV_TRY(cj_verify_get_i64s(op, names[k], lists[k], &cnt, &present));
    if (!present || cnt == 0) { /* absent or empty: all 1 */
      for (int64_t i = 0; i < ns; i++) lists[k][i] = 1;
      continue;
    }
    if (cnt != ns)
      CJV_FAIL(op, "%s has %lld entries but there are %lld spatial dimensions", names[k],
               (long long)cnt, (long long)ns);
    for (int64_t i = 0; i < ns; i++)
      if (lists[k][i] < 1)
        CJV_FAIL(op, "%s[%lld] = %lld must be positive", names[k], (long long)i,
                 (long long)lists[k][i]);
  }
  const cj_attr *rev = cjv_attr(op, "window_reversal");
  if (rev && rev->darr.n != 0 && rev->darr.n != ns)
    CJV_FAIL(op, "window_reversal has %lld entries but there are %lld spatial dimensions",
             (long long)rev->darr.n, (long long)ns);
  int64_t in_batch = l->dims[c->ib];
  int64_t expect[CJV_MAX_DIMS];
  expect[c->ob] = in_batch == CJ_DYN ? CJ_DYN : in_batch / bgc;
  expect[c->ofd] = r->dims[c->kof];
  for (int64_t i = 0; i < ns; i++) {
    int64_t in = l->dims[c->is[i]], w = r->dims[c->ks[i]];
    if (in == CJ_DYN || w == CJ_DYN) {
      expect[c->os[i]] = CJ_DYN;
      continue;
    }
    int64_t padded = lo[i] + cj_shape_dilated(in, ldil[i]) + hi[i];
    expect[c->os[i]] = cj_shape_num_windows(padded, cj_shape_dilated(w, rdil[i]), strides[i]);
  }
  return cj_verify_check_shape_is(op, "result", o, expect, n);
}

/* convolution (padding from the attribute) and dynamic_conv (padding from operand 2, used when
 * it is a constant). */
static CJ_MUST_USE cj_status check_convolution(const cj_op *op, bool dynamic) {
  const cj_type *l, *r, *o;
  CJV_TRY(check_dot_tensors(op, &l, &r, &o));
  cjv_tbuf t1, t2;
  int32_t n = l->rank;
  if (n < 2) CJV_FAIL(op, "lhs must have rank at least 2, got %s", CJV_T(l, t1));
  if (r->rank != n)
    CJV_FAIL(op, "lhs %s and rhs %s must have the same rank", CJV_T(l, t1), CJV_T(r, t2));
  if (o->rank != n)
    CJV_FAIL(op, "result %s must have the rank of lhs (%d)", CJV_T(o, t1), n);
  conv_dims c;
  CJV_TRY(read_conv_dims(op, &c));
  int64_t ns = n - 2;
  if (c.nis != ns || c.nks != ns || c.nos != ns)
    CJV_FAIL(op,
             "input, kernel and output spatial dimensions must each have rank - 2 = %lld entries, "
             "got %lld, %lld and %lld",
             (long long)ns, (long long)c.nis, (long long)c.nks, (long long)c.nos);
  CJV_TRY(check_dim_group(op, "input dimensions (batch, feature, spatial)", c.ib, c.ifd, c.is,
                          c.nis, n));
  CJV_TRY(check_dim_group(op, "kernel dimensions (input feature, output feature, spatial)", c.kif,
                          c.kof, c.ks, c.nks, n));
  CJV_TRY(check_dim_group(op, "output dimensions (batch, feature, spatial)", c.ob, c.ofd, c.os,
                          c.nos, n));
  int64_t fgc = 1, bgc = 1;
  cjv_get_i64(op, "feature_group_count", &fgc);
  cjv_get_i64(op, "batch_group_count", &bgc);
  if (fgc < 1) CJV_FAIL(op, "feature_group_count must be positive, got %lld", (long long)fgc);
  if (bgc < 1) CJV_FAIL(op, "batch_group_count must be positive, got %lld", (long long)bgc);
  if (fgc != 1 && bgc != 1)
    CJV_FAIL(op, "feature_group_count (%lld) and batch_group_count (%lld) cannot both exceed 1",
             (long long)fgc, (long long)bgc);
  int64_t in_batch = l->dims[c.ib], in_feat = l->dims[c.ifd];
  int64_t k_in = r->dims[c.kif], k_out = r->dims[c.kof];
  if (in_batch != CJ_DYN && in_batch % bgc)
    CJV_FAIL(op, "input batch dimension size %lld must be divisible by batch_group_count %lld",
             (long long)in_batch, (long long)bgc);
  if (in_feat != CJ_DYN && in_feat % fgc)
    CJV_FAIL(op, "input feature dimension size %lld must be divisible by feature_group_count %lld",
             (long long)in_feat, (long long)fgc);
  if (in_feat != CJ_DYN && k_in != CJ_DYN && in_feat / fgc != k_in)
    CJV_FAIL(op,
             "kernel input feature dimension size %lld must be the input feature size %lld / "
             "feature_group_count %lld",
             (long long)k_in, (long long)in_feat, (long long)fgc);
  if (k_out != CJ_DYN && k_out % bgc)
    CJV_FAIL(op,
             "kernel output feature dimension size %lld must be divisible by batch_group_count "
             "%lld",
             (long long)k_out, (long long)bgc);
  if (k_out != CJ_DYN && k_out % fgc)
    CJV_FAIL(op,
             "kernel output feature dimension size %lld must be divisible by "
             "feature_group_count %lld",
             (long long)k_out, (long long)fgc);
  bool dflt;
  CJV_TRY(check_precision_config(op, &dflt));

  /* padding: the attribute, or for dynamic_conv operand 2 (read when a constant defines it) */
  int64_t lo[CJV_MAX_DIMS], hi[CJV_MAX_DIMS];
  bool pad_known = true;
  if (!dynamic) {
    CJV_TRY(cj_verify_read_padding(op, (int32_t)ns, lo, hi));
  } else {
    const cj_type *pt = T(op, 2);
    CJV_TRY(cj_verify_check_tensor_rank(op, "padding", pt, CJ_EC_INT, 2));
    if ((pt->dims[0] != CJ_DYN && pt->dims[0] != ns) || (pt->dims[1] != CJ_DYN && pt->dims[1] != 2))
      CJV_FAIL(op, "padding must have shape [%lld, 2], got %s", (long long)ns, CJV_T(pt, t1));
    int64_t pv[CJV_MAX_DIMS], np;
    pad_known = cj_verify_constant_operand_i64s(op, 2, pv, &np) && np == 2 * ns;
    for (int64_t i = 0; pad_known && i < ns; i++) {
      lo[i] = pv[2 * i];
      hi[i] = pv[2 * i + 1];
    }
    /* StableHLO checks dynamic_conv's window attributes only together with a constant padding
     * (and JAX's shape-polymorphic exports in the corpus carry window_strides of the wrong size
     * next to a computed padding), so without one they are not checked either. */
  }
  if (pad_known) CJV_TRY(check_conv_window(op, l, r, o, &c, lo, hi, bgc));

  /* element types */
  const cj_type *le = l->elem, *re = r->elem, *oe = o->elem;
  if (cj_shape_is_quant_elem(le) || cj_shape_is_quant_elem(re) || cj_shape_is_quant_elem(oe)) {
    if (cj_shape_is_per_axis(re) && re->quant->axis != c.kof)
      CJV_FAIL(op,
               "rhs quantization dimension %d must be the kernel output feature dimension %lld",
               re->quant->axis, (long long)c.kof);
    if (cj_shape_is_per_axis(oe) && oe->quant->axis != c.ofd)
      CJV_FAIL(op, "result quantization dimension %d must be the output feature dimension %lld",
               oe->quant->axis, (long long)c.ofd);
    return check_quant_common(op, le, re, oe);
  }
  if (le != re)
    CJV_FAIL(op, "lhs %s and rhs %s must have the same element type", CJV_T(l, t1), CJV_T(r, t2));
  /* The spec's C27 also asks element_type(result) = element_type(lhs); StableHLO does not enforce
   * it and the corpus convolves i8 into i32 (a preferred element type), so the result may
   * differ. */
  return NULL;
}

cj_status cj_verify_convolution(const cj_op *op) { return check_convolution(op, false); }

cj_status cj_verify_dynamic_conv(const cj_op *op) { return check_convolution(op, true); }

/* ======================================================================== linear algebra */

#define FC_Q (CJ_EC_FLOAT | CJ_EC_COMPLEX | CJ_EC_QTENSOR)

cj_status cj_verify_cholesky(const cj_op *op) {
  const cj_type *a = T(op, 0), *o = R(op, 0);
  CJV_TRY(cj_verify_check_tensor(op, "a", a, FC_Q));
  CJV_TRY(cj_verify_check_tensor(op, "result", o, FC_Q));
  CJV_TRY(cj_verify_check_same_baseline(op, "a", a, "result", o));
  cjv_tbuf t1;
  if (a->rank < 2) CJV_FAIL(op, "a must have rank at least 2, got %s", CJV_T(a, t1));
  if (!cj_shape_dim_compatible(a->dims[a->rank - 2], a->dims[a->rank - 1]))
    CJV_FAIL(op, "the two minor dimensions of a must be equal (square matrices), got %s",
             CJV_T(a, t1));
  return NULL;
}

cj_status cj_verify_triangular_solve(const cj_op *op) {
  const cj_type *a = T(op, 0), *b = T(op, 1), *o = R(op, 0);
  CJV_TRY(cj_verify_check_tensors(op, FC_Q, "a", a, "b", b, "result", o, NULL));
  CJV_TRY(cj_verify_check_same_baseline_elem(op, "a", a, "b", b));
  CJV_TRY(cj_verify_check_same_baseline(op, "b", b, "result", o));
  cjv_tbuf t1, t2;
  if (a->rank < 2) CJV_FAIL(op, "a must have rank at least 2, got %s", CJV_T(a, t1));
  if (b->rank != a->rank) CJV_FAIL(op, "a %s and b %s must have the same rank", CJV_T(a, t1), CJV_T(b, t2));
  int32_t n = a->rank;
  if (!cj_shape_dim_compatible(a->dims[n - 2], a->dims[n - 1]))
    CJV_FAIL(op, "the two minor dimensions of a must be equal, got %s", CJV_T(a, t1));
  bool left = false;
  cjv_get_bool(op, "left_side", &left);
  int64_t shared = b->dims[n - (left ? 2 : 1)];
  if (!cj_shape_dim_compatible(a->dims[n - 1], shared))
    CJV_FAIL(op, "a %s and b %s must share the %s dimension size", CJV_T(a, t1), CJV_T(b, t2),
             left ? "second-minor dimension of b as the" : "minor dimension of b as the");
  for (int32_t i = 0; i < n - 2; i++)
    if (!cj_shape_dim_compatible(a->dims[i], b->dims[i]))
      CJV_FAIL(op, "batch dimensions of a %s and b %s differ", CJV_T(a, t1), CJV_T(b, t2));
  int32_t tr = 0;
  cjv_get_enum(op, "transpose_a", CJ_EK_TRANSPOSE, &tr);
  if (tr == CJ_TRANSPOSE_TRANSPOSE_INVALID)
    CJV_FAIL(op, "transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT");
  return NULL;
}

cj_status cj_verify_fft(const cj_op *op) {
  const cj_type *x = T(op, 0), *o = R(op, 0);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, CJ_EC_FLOAT | CJ_EC_COMPLEX));
  CJV_TRY(cj_verify_check_tensor(op, "result", o, CJ_EC_FLOAT | CJ_EC_COMPLEX));
  int32_t ft = 0;
  cjv_get_enum(op, "fft_type", CJ_EK_FFT_TYPE, &ft);
  int64_t len[CJV_MAX_DIMS], n;
  CJV_TRY(cj_verify_get_i64s(op, "fft_length", len, &n, NULL));
  cjv_tbuf t1, t2;
  if (n < 1 || n > 3) CJV_FAIL(op, "fft_length must have 1 to 3 entries, got %lld", (long long)n);
  if (n > x->rank)
    CJV_FAIL(op, "fft_length has %lld entries but the operand %s has rank %d", (long long)n,
             CJV_T(x, t1), x->rank);
  const char *tname = cj_enum_case_name(CJ_EK_FFT_TYPE, ft);
  bool xc = x->elem->kind == CJ_TYPE_ELEM && cj_dtype_is_complex(x->dtype);
  bool oc = o->elem->kind == CJ_TYPE_ELEM && cj_dtype_is_complex(o->dtype);
  cj_dtype want;
  switch (ft) {
    case CJ_FFT_TYPE_RFFT:
      if (x->dtype != CJ_F32 && x->dtype != CJ_F64)
        CJV_FAIL(op, "RFFT needs an f32 or f64 operand, got %s", CJV_T(x, t1));
      want = x->dtype == CJ_F32 ? CJ_C64 : CJ_C128;
      break;
    case CJ_FFT_TYPE_IRFFT:
      if (!xc) CJV_FAIL(op, "IRFFT needs a complex operand, got %s", CJV_T(x, t1));
      want = cj_dtype_component(x->dtype);
      break;
    default:
      if (!xc) CJV_FAIL(op, "%s needs a complex operand, got %s", tname ? tname : "FFT", CJV_T(x, t1));
      want = x->dtype;
      break;
  }
  if (o->elem->kind != CJ_TYPE_ELEM || o->dtype != want)
    CJV_FAIL(op, "%s of %s must give element type %s, got %s", tname ? tname : "FFT", CJV_T(x, t1),
             cj_dtype_get(want)->mlir, CJV_T(o, t2));
  (void)oc;
  int64_t expect[CJV_MAX_DIMS];
  for (int32_t i = 0; i < x->rank; i++) expect[i] = x->dims[i];
  int32_t last = x->rank - 1;
  if (ft == CJ_FFT_TYPE_RFFT) {
    for (int64_t i = 0; i < n; i++)
      if (!cj_shape_dim_compatible(x->dims[x->rank - n + i], len[i]))
        CJV_FAIL(op, "RFFT operand %s must end in fft_length %s", CJV_T(x, t1),
                 CJV_DIMS(len, n, t2));
    if (len[n - 1] != 0) expect[last] = len[n - 1] / 2 + 1;
  } else if (ft == CJ_FFT_TYPE_IRFFT) {
    for (int64_t i = 0; i + 1 < n; i++)
      if (!cj_shape_dim_compatible(x->dims[x->rank - n + i], len[i]))
        CJV_FAIL(op, "IRFFT operand %s must match fft_length %s in its non-final dimensions",
                 CJV_T(x, t1), CJV_DIMS(len, n, t2));
    int64_t want_last = len[n - 1] == 0 ? 0 : len[n - 1] / 2 + 1;
    if (!cj_shape_dim_compatible(x->dims[last], want_last))
      CJV_FAIL(op, "IRFFT operand %s must have innermost size fft_length[-1] / 2 + 1 = %lld",
               CJV_T(x, t1), (long long)want_last);
    expect[last] = len[n - 1];
  }
  return cj_verify_check_shape_is(op, "result", o, expect, x->rank);
}

/* ======================================================================== batch norm */

#define BN (CJ_EC_FLOAT | CJ_EC_QTENSOR)

/* multi-dimensional values share a shape; 1-D values share a size that equals the feature
 * dimension; all share a baseline element type. */
static CJ_MUST_USE cj_status check_batch_norm(const cj_op *op, const cj_type *const *multi, const char *const *mnames,
                                  int nm, const cj_type *const *single, const char *const *snames,
                                  int nsg) {
  for (int i = 0; i < nm; i++) CJV_TRY(cj_verify_check_tensor(op, mnames[i], multi[i], BN));
  for (int i = 0; i < nsg; i++) CJV_TRY(cj_verify_check_tensor_rank(op, snames[i], single[i], BN, 1));
  for (int i = 1; i < nm; i++) CJV_TRY(cj_verify_check_same_shape(op, mnames[0], multi[0], mnames[i], multi[i]));
  for (int i = 1; i < nsg; i++)
    CJV_TRY(cj_verify_check_same_shape(op, snames[0], single[0], snames[i], single[i]));
  for (int i = 1; i < nm; i++)
    CJV_TRY(cj_verify_check_same_baseline_elem(op, mnames[0], multi[0], mnames[i], multi[i]));
  for (int i = 0; i < nsg; i++)
    CJV_TRY(cj_verify_check_same_baseline_elem(op, mnames[0], multi[0], snames[i], single[i]));
  int64_t fi = 0;
  cjv_get_i64(op, "feature_index", &fi);
  cjv_tbuf t1;
  if (fi < 0 || fi >= multi[0]->rank)
    CJV_FAIL(op, "feature_index %lld is out of range [0, %d) for %s", (long long)fi,
             multi[0]->rank, CJV_T(multi[0], t1));
  int64_t features = multi[0]->dims[fi];
  if (nsg && !cj_shape_dim_compatible(single[0]->dims[0], features))
    CJV_FAIL(op, "%s has %lld entries but the feature dimension %lld of %s has size %lld", snames[0],
             (long long)single[0]->dims[0], (long long)fi, mnames[0], (long long)features);
  return NULL;
}

cj_status cj_verify_batch_norm_grad(const cj_op *op) {
  const cj_type *m[3] = {T(op, 0), T(op, 4), R(op, 0)};
  static const char *const mn[3] = {"operand", "grad_output", "grad_operand"};
  const cj_type *s[5] = {T(op, 1), T(op, 2), T(op, 3), R(op, 1), R(op, 2)};
  static const char *const sn[5] = {"scale", "mean", "variance", "grad_scale", "grad_offset"};
  return check_batch_norm(op, m, mn, 3, s, sn, 5);
}

/* batch_norm_inference and batch_norm_training: the operand, result `out` of its baseline type,
 * and four 1-D values s (named sn) */
static CJ_MUST_USE cj_status check_batch_norm_4(const cj_op *op, const char *out,
                                                const cj_type *const *s, const char *const *sn) {
  const cj_type *m[2] = {T(op, 0), R(op, 0)};
  const char *const mn[2] = {"operand", out};
  CJV_TRY(check_batch_norm(op, m, mn, 2, s, sn, 4));
  return cj_verify_check_same_baseline(op, "operand", m[0], out, m[1]);
}

cj_status cj_verify_batch_norm_inference(const cj_op *op) {
  static const char *const sn[4] = {"scale", "offset", "mean", "variance"};
  const cj_type *s[4] = {T(op, 1), T(op, 2), T(op, 3), T(op, 4)};
  return check_batch_norm_4(op, "result", s, sn);
}

cj_status cj_verify_batch_norm_training(const cj_op *op) {
  static const char *const sn[4] = {"scale", "offset", "batch_mean", "batch_var"};
  const cj_type *s[4] = {T(op, 1), T(op, 2), R(op, 1), R(op, 2)};
  return check_batch_norm_4(op, "output", s, sn);
}

/* ======================================================================== random numbers */

cj_status cj_verify_rng(const cj_op *op) {
  const cj_type *a = T(op, 0), *b = T(op, 1), *o = R(op, 0);
  unsigned mask = CJ_EC_BOOL | CJ_EC_INT | CJ_EC_FLOAT;
  CJV_TRY(cj_verify_check_tensor_rank(op, "a", a, mask, 0));
  CJV_TRY(cj_verify_check_tensor_rank(op, "b", b, mask, 0));
  CJV_TRY(cj_verify_check_tensor(op, "result", o, mask));
  CJV_TRY(cj_verify_check_same_elem(op, "a", a, "b", b));
  CJV_TRY(cj_verify_check_same_elem(op, "a", a, "result", o));
  int32_t dist = CJ_RNG_DISTRIBUTION_UNIFORM;
  cjv_get_enum(op, "rng_distribution", CJ_EK_RNG_DISTRIBUTION, &dist);
  cjv_tbuf t1;
  if (dist == CJ_RNG_DISTRIBUTION_NORMAL && !cj_dtype_is_float(a->dtype))
    CJV_FAIL(op, "a NORMAL distribution needs floating-point a and b, got %s", CJV_T(a, t1));
  return cj_verify_check_shape_operand(op, 2, "shape", o);
}

cj_status cj_verify_rng_bit_generator(const cj_op *op) {
  const cj_type *s = T(op, 0), *os = R(op, 0), *o = R(op, 1);
  unsigned mask = CJ_EC_INT | CJ_EC_FLOAT;
  CJV_TRY(cj_verify_check_tensors(op, mask, "initial_state", s, "output_state", os, "output", o,
                                  NULL));
  CJV_TRY(cj_verify_check_same_type(op, "initial_state", s, "output_state", os));
  cjv_tbuf t1;
  if (o->num_elements < 0) CJV_FAIL(op, "output must have a static shape, got %s", CJV_T(o, t1));
  return NULL;
}
