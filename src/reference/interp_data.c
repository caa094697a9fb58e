/* cjrt reference backend: constants and data movement (iota, broadcast, reshape, transpose,
 * reverse, slices, concatenate, pad, bitcast_convert, ids and tokens). Each output element is
 * found by turning its index into the operand's index, one element at a time. */
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

static void copy_elem(rv *out, int64_t oi, const rv *in, int64_t ii) {
  memcpy(out->data + (size_t)oi * (size_t)out->esize, in->data + (size_t)ii * (size_t)in->esize, (size_t)out->esize);
}

static int64_t ravel(const rv *v, const int64_t *idx) {
  int64_t k = 0;
  for (int32_t d = 0; d < v->rank; d++) k = k * v->dims[d] + idx[d];
  return k;
}

static CJ_MUST_USE cj_status constant(cj_op *op, rv *out) {
  const cj_attr *v = cj_op_attr(op, "value");
  if (!v || v->kind != CJ_ATTR_DENSE) return cj_op_error(op, CJ_INVALID_ARGUMENT, "constant without dense value");
  size_t nb = (size_t)out->n * (size_t)out->esize;
  if (v->dense.splat) {
    for (int64_t i = 0; i < out->n; i++) memcpy(out->data + (size_t)i * (size_t)out->esize, v->dense.data, (size_t)out->esize);
  } else {
    if (v->dense.nbytes != nb) return cj_op_error(op, CJ_INVALID_ARGUMENT, "constant has %zu bytes, expected %zu", v->dense.nbytes, nb);
    if (nb) memcpy(out->data, v->dense.data, nb);
  }
  return NULL;
}

static CJ_MUST_USE cj_status iota(cj_op *op, rv *out) {
  int64_t dim = 0, idx[RF_MAX_RANK];
  cj_op_get_i64(op, "iota_dimension", &dim);
  for (int64_t i = 0; i < out->n; i++) {
    cj_rf_unravel(i, out->rank, out->dims, idx);
    rs s = {0, 0, 0};
    int64_t k = out->rank ? idx[dim] : 0;
    s.i = cj_rf_wrap(out->dt, k);
    s.f = (double)k;
    s.c = (double)k;
    cj_rs_set(out->dt, out->data, i, s);
  }
  return NULL;
}

static CJ_MUST_USE cj_status broadcast_in_dim(cj_op *op, const rv *in, rv *out) {
  int64_t bd[RF_MAX_RANK], nb = 0, idx[RF_MAX_RANK], ii[RF_MAX_RANK];
  cj_op_get_i64s(op, "broadcast_dimensions", bd, RF_MAX_RANK, &nb);
  if (nb != in->rank) return cj_op_error(op, CJ_INVALID_ARGUMENT, "broadcast_dimensions size");
  for (int64_t i = 0; i < out->n; i++) {
    cj_rf_unravel(i, out->rank, out->dims, idx);
    for (int32_t d = 0; d < in->rank; d++) ii[d] = in->dims[d] == 1 ? 0 : idx[bd[d]];
    copy_elem(out, i, in, ravel(in, ii));
  }
  return NULL;
}

static CJ_MUST_USE cj_status broadcast(cj_op *op, const rv *in, rv *out) {
  (void)op;
  int64_t idx[RF_MAX_RANK];
  int32_t lead = out->rank - in->rank;
  for (int64_t i = 0; i < out->n; i++) {
    cj_rf_unravel(i, out->rank, out->dims, idx);
    copy_elem(out, i, in, ravel(in, idx + lead));
  }
  return NULL;
}

static CJ_MUST_USE cj_status transpose(cj_op *op, const rv *in, rv *out) {
  int64_t perm[RF_MAX_RANK], np = 0, idx[RF_MAX_RANK], ii[RF_MAX_RANK];
  cj_op_get_i64s(op, "permutation", perm, RF_MAX_RANK, &np);
  for (int64_t i = 0; i < out->n; i++) {
    cj_rf_unravel(i, out->rank, out->dims, idx);
    for (int32_t d = 0; d < out->rank; d++) ii[perm[d]] = idx[d];
    copy_elem(out, i, in, ravel(in, ii));
  }
  return NULL;
}

static CJ_MUST_USE cj_status reverse(cj_op *op, const rv *in, rv *out) {
  int64_t dims[RF_MAX_RANK], nd = 0, idx[RF_MAX_RANK];
  cj_op_get_i64s(op, "dimensions", dims, RF_MAX_RANK, &nd);
  for (int64_t i = 0; i < out->n; i++) {
    cj_rf_unravel(i, out->rank, out->dims, idx);
    for (int64_t k = 0; k < nd; k++) idx[dims[k]] = in->dims[dims[k]] - 1 - idx[dims[k]];
    copy_elem(out, i, in, ravel(in, idx));
  }
  return NULL;
}

static CJ_MUST_USE cj_status slice(cj_op *op, const rv *in, rv *out) {
  int64_t st[RF_MAX_RANK], sd[RF_MAX_RANK], n1, n2, idx[RF_MAX_RANK];
  cj_op_get_i64s(op, "start_indices", st, RF_MAX_RANK, &n1);
  cj_op_get_i64s(op, "strides", sd, RF_MAX_RANK, &n2);
  for (int64_t i = 0; i < out->n; i++) {
    cj_rf_unravel(i, out->rank, out->dims, idx);
    for (int32_t d = 0; d < out->rank; d++) idx[d] = st[d] + idx[d] * sd[d];
    copy_elem(out, i, in, ravel(in, idx));
  }
  return NULL;
}

/* start indices of dynamic_slice / dynamic_update_slice, clamped into [0, dim - size] */
static void starts(rv **ins, uint32_t first, const rv *in, const int64_t *sizes, int64_t *s) {
  for (int32_t d = 0; d < in->rank; d++) {
    const rv *v = ins[first + d];
    int64_t k = cj_rf_geti(v->dt, v->data, 0);
    int64_t hi = in->dims[d] - sizes[d];
    s[d] = k < 0 ? 0 : k > hi ? hi : k;
  }
}

static CJ_MUST_USE cj_status dynamic_slice(cj_op *op, rv **ins, rv *out) {
  const rv *in = ins[0];
  int64_t s[RF_MAX_RANK], idx[RF_MAX_RANK];
  if ((int32_t)op->nopnds != in->rank + 1) return cj_op_error(op, CJ_INVALID_ARGUMENT, "dynamic_slice takes one index per dimension");
  starts(ins, 1, in, out->dims, s);
  for (int64_t i = 0; i < out->n; i++) {
    cj_rf_unravel(i, out->rank, out->dims, idx);
    for (int32_t d = 0; d < out->rank; d++) idx[d] += s[d];
    copy_elem(out, i, in, ravel(in, idx));
  }
  return NULL;
}

static CJ_MUST_USE cj_status dynamic_update_slice(cj_op *op, rv **ins, rv *out) {
  const rv *in = ins[0], *up = ins[1];
  int64_t s[RF_MAX_RANK], idx[RF_MAX_RANK];
  if ((int32_t)op->nopnds != in->rank + 2) return cj_op_error(op, CJ_INVALID_ARGUMENT, "dynamic_update_slice takes one index per dimension");
  memcpy(out->data, in->data, (size_t)in->n * (size_t)in->esize);
  starts(ins, 2, in, up->dims, s);
  for (int64_t i = 0; i < up->n; i++) {
    cj_rf_unravel(i, up->rank, up->dims, idx);
    for (int32_t d = 0; d < up->rank; d++) idx[d] += s[d];
    copy_elem(out, ravel(out, idx), up, i);
  }
  return NULL;
}

static CJ_MUST_USE cj_status concatenate(cj_op *op, rv **ins, rv *out) {
  int64_t dim = 0, idx[RF_MAX_RANK];
  cj_op_get_i64(op, "dimension", &dim);
  int64_t off = 0;
  for (uint32_t k = 0; k < op->nopnds; k++) {
    const rv *in = ins[k];
    for (int64_t i = 0; i < in->n; i++) {
      cj_rf_unravel(i, in->rank, in->dims, idx);
      idx[dim] += off;
      copy_elem(out, ravel(out, idx), in, i);
    }
    off += in->dims[dim];
  }
  return NULL;
}

static CJ_MUST_USE cj_status pad(cj_op *op, rv **ins, rv *out) {
  const rv *in = ins[0], *pv = ins[1];
  int64_t lo[RF_MAX_RANK], in_[RF_MAX_RANK], n, idx[RF_MAX_RANK];
  cj_op_get_i64s(op, "edge_padding_low", lo, RF_MAX_RANK, &n);
  cj_op_get_i64s(op, "interior_padding", in_, RF_MAX_RANK, &n);
  for (int64_t i = 0; i < out->n; i++) copy_elem(out, i, pv, 0);
  for (int64_t i = 0; i < in->n; i++) {
    cj_rf_unravel(i, in->rank, in->dims, idx);
    bool inside = true;
    for (int32_t d = 0; d < in->rank; d++) {
      idx[d] = lo[d] + idx[d] * (in_[d] + 1);
      if (idx[d] < 0 || idx[d] >= out->dims[d]) inside = false;
    }
    if (inside) copy_elem(out, ravel(out, idx), in, i);
  }
  return NULL;
}

/* bitcast_convert: the same bytes; sub-byte types are unpacked/packed little-endian */
static CJ_MUST_USE cj_status bitcast_convert(cj_op *op, const rv *in, rv *out) {
  int ib = cj_dtype_bits(in->dt), ob = cj_dtype_bits(out->dt);
  if (ib == ob) {
    memcpy(out->data, in->data, (size_t)in->n * (size_t)in->esize);
    return NULL;
  }
  if (ib % 8 || ob % 8) {
    /* pack the bits of every element in order, then read them back */
    int64_t total = in->n * ib;
    for (int64_t i = 0; i < out->n; i++) {
      uint64_t u = 0;
      for (int b = 0; b < ob; b++) {
        int64_t bit = i * ob + b;
        if (bit >= total) break;
        uint64_t e = (uint64_t)cj_rf_geti(in->dt, in->data, bit / ib);
        u |= ((e >> (bit % ib)) & 1) << b;
      }
      cj_rf_seti(out->dt, out->data, i, (int64_t)u);
    }
    return NULL;
  }
  (void)op;
  memcpy(out->data, in->data, (size_t)in->n * (size_t)in->esize);
  return NULL;
}

/* ---------------------------------------------------------------- ref.def's rows */

cj_status cj_rf_x_constant(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return constant(op, op->nresults ? outs[0] : NULL); }
cj_status cj_rf_x_iota(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return iota(op, outs[0]); }
cj_status cj_rf_x_broadcast_in_dim(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return broadcast_in_dim(op, ins[0], outs[0]); }
cj_status cj_rf_x_broadcast(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return broadcast(op, ins[0], outs[0]); }
cj_status cj_rf_x_reshape(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  memcpy(outs[0]->data, ins[0]->data, (size_t)ins[0]->n * (size_t)ins[0]->esize);
  return NULL;
}
cj_status cj_rf_x_transpose(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return transpose(op, ins[0], outs[0]); }
cj_status cj_rf_x_reverse(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return reverse(op, ins[0], outs[0]); }
cj_status cj_rf_x_slice(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return slice(op, ins[0], outs[0]); }
cj_status cj_rf_x_dynamic_slice(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return dynamic_slice(op, ins, outs[0]); }
cj_status cj_rf_x_dynamic_update_slice(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  return dynamic_update_slice(op, ins, outs[0]);
}
cj_status cj_rf_x_concatenate(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return concatenate(op, ins, outs[0]); }
cj_status cj_rf_x_pad(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return pad(op, ins, outs[0]); }
cj_status cj_rf_x_bitcast_convert(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return bitcast_convert(op, ins[0], outs[0]); }
cj_status cj_rf_x_replica_id(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  cj_rf_seti(outs[0]->dt, outs[0]->data, 0, x->replica);
  return NULL;
}
cj_status cj_rf_x_partition_id(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  cj_rf_seti(outs[0]->dt, outs[0]->data, 0, x->partition);
  return NULL;
}
cj_status cj_rf_x_token(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return NULL; }
