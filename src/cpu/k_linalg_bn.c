/* cjrt: batch_norm_inference, batch_norm_training and batch_norm_grad, as the spec defines them.
 *
 * The operand is seen as [outer, F, inner] (F the feature dimension). Every element type
 * computes in f64: the data streams through in chunks converted to f64 and back (one conversion
 * function per step, picked when lowering), per-feature sums accumulate in f64, and each output
 * is rounded once. Reductions split the operand into a fixed number of contiguous ranges (the
 * client's thread count, so results do not depend on scheduling), each with its own partial
 * sums in the planned scratch buffer, combined in order; elementwise passes split the same way.
 *
 *   inference  y = scale (x - mean) / sqrt(variance + epsilon) + offset
 *   training   mean = sum(x) / N, variance = sum((x - mean)^2) / N (N = elements per feature),
 *              then inference with them; returns y, mean, variance
 *   grad       with c = x - mean and s = sqrt(variance + epsilon):
 *              grad_operand = scale / s / N (N g - sum(g) - c sum(g c) / (variance + epsilon)),
 *              grad_scale = sum(g c) / s, grad_offset = sum(g)
 */
#include <math.h>
#include <string.h>

#include "cpu/lower.h"

enum { BN_CHUNK = 1024, BN_MAXT = 64 };
enum { BN_INF, BN_TRAIN, BN_GRAD };

typedef struct bn_params {
  int kind;
  int64_t outer, F, inner, n; /* n = outer * F * inner */
  int ntasks;
  double eps;
  cj_ew_fn ld, st; /* dt -> f64, f64 -> dt */
  cj_ew_aux aux_ld, aux_st;
  int eb;
} bn_params;

/* scratch (f64): feature params [6][F], then partial sums [ntasks][2][F] */
enum { P_SCALE, P_OFFSET, P_MEAN, P_VAR, P_A, P_B };

typedef struct bn_run {
  const bn_params *p;
  cj_exec_ctx *ctx;
  const char *x, *g;
  char *y;
  double *prm, *part;
  int pass;
} bn_run;

/* the range [e0, e1) of task t */
static void task_range(const bn_params *p, int64_t t, int64_t *e0, int64_t *e1) {
  int64_t per = (p->n + p->ntasks - 1) / p->ntasks;
  *e0 = t * per < p->n ? t * per : p->n;
  *e1 = *e0 + per < p->n ? *e0 + per : p->n;
}

static void bn_task(bn_run *R, int64_t t) {
  const bn_params *p = R->p;
  int64_t e0, e1;
  task_range(p, t, &e0, &e1);
  if (e0 >= e1) return;
  int64_t F = p->F, inner = p->inner;
  double *s1 = R->part + (size_t)t * 2 * (size_t)F, *s2 = s1 + F;
  const double *mean = R->prm + P_MEAN * F, *pa = R->prm + P_A * F, *pb = R->prm + P_B * F;
  double xb[BN_CHUNK], gb[BN_CHUNK];
  int64_t f = (e0 / inner) % F, i = e0 % inner;
  for (int64_t c0 = e0; c0 < e1; c0 += BN_CHUNK) {
    int64_t cnt = e1 - c0 < BN_CHUNK ? e1 - c0 : BN_CHUNK;
    p->ld(xb, R->x + c0 * p->eb, NULL, NULL, cnt, &p->aux_ld);
    if (R->g) p->ld(gb, R->g + c0 * p->eb, NULL, NULL, cnt, &p->aux_ld);
    int64_t ff = f, ii = i;
    switch (R->pass) {
      case 0: /* training: sum(x) */
        for (int64_t k = 0; k < cnt; k++) {
          s1[ff] += xb[k];
          if (++ii == inner) ii = 0, ff = ff + 1 == F ? 0 : ff + 1;
        }
        break;
      case 1: /* training: sum((x - mean)^2) */
        for (int64_t k = 0; k < cnt; k++) {
          double d = xb[k] - mean[ff];
          s1[ff] += d * d;
          if (++ii == inner) ii = 0, ff = ff + 1 == F ? 0 : ff + 1;
        }
        break;
      case 2: /* grad: sum(g), sum(g (x - mean)) */
        for (int64_t k = 0; k < cnt; k++) {
          s1[ff] += gb[k];
          s2[ff] += gb[k] * (xb[k] - mean[ff]);
          if (++ii == inner) ii = 0, ff = ff + 1 == F ? 0 : ff + 1;
        }
        break;
      case 3: /* normalize: y = (x - mean) * A + B */
        for (int64_t k = 0; k < cnt; k++) {
          xb[k] = (xb[k] - mean[ff]) * pa[ff] + pb[ff];
          if (++ii == inner) ii = 0, ff = ff + 1 == F ? 0 : ff + 1;
        }
        p->st(R->y + c0 * p->eb, xb, NULL, NULL, cnt, &p->aux_st);
        break;
      default: /* grad_operand = A (N g - B) - C c, with A, B in pa/pb and C in s2 of task 0 */
        for (int64_t k = 0; k < cnt; k++) {
          double c = xb[k] - mean[ff];
          xb[k] = pa[ff] * ((double)(p->outer * p->inner) * gb[k] - pb[ff]) -
                  R->prm[(P_B + 1) * F + ff] * c;
          if (++ii == inner) ii = 0, ff = ff + 1 == F ? 0 : ff + 1;
        }
        p->st(R->y + c0 * p->eb, xb, NULL, NULL, cnt, &p->aux_st);
        break;
    }
    f = ff;
    i = ii;
  }
}

static void bn_body(void *vr, int64_t b, int64_t e) {
  for (int64_t t = b; t < e; t++) bn_task(vr, t);
}

static void bn_pass(bn_run *R, int pass) {
  const bn_params *p = R->p;
  R->pass = pass;
  if (pass <= 2) memset(R->part, 0, sizeof(double) * 2 * (size_t)p->F * (size_t)p->ntasks);
  if (R->ctx->pool && p->ntasks > 1)
    cj_pool_parallel_for(R->ctx->pool, p->ntasks, 1, bn_body, R);
  else
    bn_body(R, 0, p->ntasks);
}

/* partial sums of slot k (0 or 1) combined in task order into out[F] */
static void combine(const bn_run *R, int k, double *out) {
  const bn_params *p = R->p;
  for (int64_t f = 0; f < p->F; f++) out[f] = 0;
  for (int t = 0; t < p->ntasks; t++) {
    const double *s = R->part + (size_t)t * 2 * (size_t)p->F + (size_t)k * (size_t)p->F;
    for (int64_t f = 0; f < p->F; f++) out[f] += s[f];
  }
}

/* in: x, scale, offset|mean..., out: per kind (see lowering); the last out slot is the scratch */
static CJ_MUST_USE cj_status k_bn(cj_exec_ctx *ctx, const cj_step *st) {
  const bn_params *p = st->params;
  int64_t F = p->F;
  bn_run R;
  memset(&R, 0, sizeof R);
  R.p = p;
  R.ctx = ctx;
  R.x = CJ_PTR(ctx, st->in[0]);
  R.y = CJ_PTR(ctx, st->out[0]);
  R.prm = (double *)CJ_PTR(ctx, st->out[st->nout - 1]);
  R.part = R.prm + 7 * F;
  double *scale = R.prm + P_SCALE * F, *offset = R.prm + P_OFFSET * F, *mean = R.prm + P_MEAN * F,
         *var = R.prm + P_VAR * F, *pa = R.prm + P_A * F, *pb = R.prm + P_B * F,
         *pc = R.prm + (P_B + 1) * F;
  double N = (double)(p->outer * p->inner);
  p->ld(scale, CJ_PTR(ctx, st->in[1]), NULL, NULL, F, &p->aux_ld);
  if (p->kind == BN_INF) {
    p->ld(offset, CJ_PTR(ctx, st->in[2]), NULL, NULL, F, &p->aux_ld);
    p->ld(mean, CJ_PTR(ctx, st->in[3]), NULL, NULL, F, &p->aux_ld);
    p->ld(var, CJ_PTR(ctx, st->in[4]), NULL, NULL, F, &p->aux_ld);
  } else if (p->kind == BN_TRAIN) {
    p->ld(offset, CJ_PTR(ctx, st->in[2]), NULL, NULL, F, &p->aux_ld);
    bn_pass(&R, 0);
    combine(&R, 0, mean);
    for (int64_t f = 0; f < F; f++) mean[f] /= N;
    bn_pass(&R, 1);
    combine(&R, 0, var);
    for (int64_t f = 0; f < F; f++) var[f] /= N;
    p->st(CJ_PTR(ctx, st->out[1]), mean, NULL, NULL, F, &p->aux_st);
    p->st(CJ_PTR(ctx, st->out[2]), var, NULL, NULL, F, &p->aux_st);
  } else {
    p->ld(mean, CJ_PTR(ctx, st->in[2]), NULL, NULL, F, &p->aux_ld);
    p->ld(var, CJ_PTR(ctx, st->in[3]), NULL, NULL, F, &p->aux_ld);
    R.g = CJ_PTR(ctx, st->in[4]);
    bn_pass(&R, 2);
    double *gsum = offset, *gcsum = pc; /* offset is not an input of grad */
    combine(&R, 0, gsum);
    combine(&R, 1, gcsum);
    for (int64_t f = 0; f < F; f++) pb[f] = gcsum[f] / sqrt(var[f] + p->eps); /* grad_scale */
    p->st(CJ_PTR(ctx, st->out[1]), pb, NULL, NULL, F, &p->aux_st);
    p->st(CJ_PTR(ctx, st->out[2]), gsum, NULL, NULL, F, &p->aux_st);
    /* grad_operand = A (N g - B) - C c with A = scale / s / N, B = sum(g),
     * C = A sum(g c) / (variance + epsilon) */
    for (int64_t f = 0; f < F; f++) {
      double ve = var[f] + p->eps, A = scale[f] / sqrt(ve) / N;
      pa[f] = A;
      pb[f] = gsum[f];
      pc[f] = A * gcsum[f] / ve;
    }
    bn_pass(&R, 4);
    return NULL;
  }
  /* normalize: y = (x - mean) * scale / sqrt(var + eps) + offset */
  for (int64_t f = 0; f < F; f++) {
    pa[f] = scale[f] / sqrt(var[f] + p->eps);
    pb[f] = offset[f];
  }
  bn_pass(&R, 3);
  return NULL;
}

static CJ_MUST_USE cj_status lower_bn(cj_lw *L, cj_op *op, int kind) {
  uint32_t nin = kind == BN_TRAIN ? 3 : 5, nout = kind == BN_INF ? 1 : 3;
  cj_lw_tensor in[5], out[3];
  for (uint32_t i = 0; i < nin; i++) CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, i, &in[i]));
  for (uint32_t i = 0; i < nout; i++) CJ_RETURN_IF_ERROR(cj_lw_result(L, op, i, &out[i]));
  int64_t fi = 0;
  double eps = 0;
  if (!cj_op_get_i64(op, "feature_index", &fi) || !cj_attr_get_f64(cj_op_attr(op, "epsilon"), &eps))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "feature_index and epsilon are required");
  const cj_lw_tensor *x = &in[0];
  cj_dtype dt = x->dtype;
  if (!cj_dtype_is_float(dt))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "element type %s is not supported (floats only)",
                       cj_dtype_get(dt)->id);
  if (fi < 0 || fi >= x->rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "feature_index %lld is out of range", (long long)fi);
  int64_t F = x->dims[fi];
  /* multi-dimensional values: x, (grad_output), y (grad_operand); the others are [F] */
  for (uint32_t i = 0; i < nin; i++) {
    bool multi = i == 0 || (kind == BN_GRAD && i == 4);
    if (in[i].dtype != dt || (multi ? in[i].nelems != x->nelems : (in[i].rank != 1 || in[i].nelems != F)))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "operand %u does not fit the operand's shape and type", i);
  }
  for (uint32_t i = 0; i < nout; i++)
    if (out[i].dtype != dt || (i == 0 ? out[i].nelems != x->nelems : out[i].nelems != F))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "result %u does not fit the operand's shape and type", i);
  bn_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->kind = kind;
  p->eps = (double)(float)eps;
  p->outer = 1;
  p->inner = 1;
  for (int32_t d = 0; d < fi; d++) p->outer *= x->dims[d];
  for (int32_t d = (int32_t)fi + 1; d < x->rank; d++) p->inner *= x->dims[d];
  p->F = F;
  p->n = x->nelems;
  p->eb = cj_dtype_bytes(dt);
  p->ld = cj_cvt_lookup(dt, CJ_F64);
  p->st = cj_cvt_lookup(CJ_F64, dt);
  if (!p->ld || !p->st)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "element type %s is not supported", cj_dtype_get(dt)->id);
  p->aux_ld.src = dt;
  p->aux_ld.dt = CJ_F64;
  p->aux_st.src = CJ_F64;
  p->aux_st.dt = dt;
  int nthreads = cj_lw_pool(L) ? cj_pool_size(cj_lw_pool(L)) : 1;
  int64_t t = p->n / 65536;
  if (t > nthreads) t = nthreads;
  if (t > BN_MAXT) t = BN_MAXT;
  p->ntasks = t < 1 ? 1 : (int)t;
  cj_lw_add_cost(L, (kind == BN_INF ? 4.0 : 8.0) * (double)p->n, (double)F);
  int32_t ins[5], outs[4];
  for (uint32_t i = 0; i < nin; i++) ins[i] = in[i].buf;
  for (uint32_t i = 0; i < nout; i++) outs[i] = out[i].buf;
  outs[nout] = cj_lw_new_buf(L, (int64_t)sizeof(double) * (7 * F + 2 * F * p->ntasks + 1), CJ_BK_ARENA);
  if (!cj_lw_emit(L, op, k_bn, p, nin, ins, nout + 1, outs)) return cj_oom();
  return NULL;
}

cj_status cj_lower_batch_norm_inference(cj_lw *L, cj_op *op) { return lower_bn(L, op, BN_INF); }
cj_status cj_lower_batch_norm_training(cj_lw *L, cj_op *op) { return lower_bn(L, op, BN_TRAIN); }
cj_status cj_lower_batch_norm_grad(cj_lw *L, cj_op *op) { return lower_bn(L, op, BN_GRAD); }
