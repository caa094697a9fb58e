/* cjrt: spec verifiers of collectives and communication: all_gather, all_reduce,
 * reduce_scatter, all_to_all, collective_permute, collective_broadcast, collective_reduce,
 * send, recv, infeed, outfeed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/shape_check.h"
#include "ir/verify_fns.h"

#define PER_TENSOR (CJ_EC_BOOL | CJ_EC_INT | CJ_EC_FLOAT | CJ_EC_COMPLEX | CJ_EC_QTENSOR)

static const cj_type *T(const cj_op *op, uint32_t i) { return cjv_operand_type(op, i); }
static const cj_type *R(const cj_op *op, uint32_t i) { return cjv_result_type(op, i); }

/* ======================================================================== ids */

/* A set of small non-negative ids: a bitmap on the stack for ids below 64K, a heap bitmap for
 * larger ones (rare: only programs for more than 65536 devices get there). */
typedef struct idset {
  uint64_t small[1024];
  uint64_t *big;
  int64_t big_bits;
} idset;

static void idset_init(idset *s) {
  memset(s->small, 0, sizeof s->small);
  s->big = NULL;
  s->big_bits = 0;
}
static void idset_free(idset *s) { free(s->big); }

/* Inserts id; returns 1 if new, 0 if it was there, -1 on out-of-memory / too large. */
static int idset_insert(idset *s, int64_t id) {
  uint64_t *words = s->small;
  if (id >= 65536) {
    if (id >= ((int64_t)1 << 31)) return -1;
    if (id >= s->big_bits) {
      int64_t nbits = s->big_bits ? s->big_bits : 1 << 20;
      while (nbits <= id) nbits *= 2;
      uint64_t *nb = calloc((size_t)(nbits / 64), sizeof *nb);
      if (!nb) return -1;
      if (s->big) memcpy(nb, s->big, (size_t)(s->big_bits / 64) * sizeof *nb);
      free(s->big);
      s->big = nb;
      s->big_bits = nbits;
    }
    words = s->big;
  }
  uint64_t bit = (uint64_t)1 << (id & 63), *w = &words[id >> 6];
  if (*w & bit) return 0;
  *w |= bit;
  return 1;
}

static bool idset_has(const idset *s, int64_t id) {
  if (id < 65536) return (s->small[id >> 6] >> (id & 63)) & 1;
  if (!s->big || id >= s->big_bits) return false;
  return (s->big[id >> 6] >> (id & 63)) & 1;
}

/* ======================================================================== replica groups */

typedef struct groups {
  bool dense;       /* false for the mesh-axes form, which is only checked structurally */
  int64_t ngroups;  /* dims[0] */
  int64_t size;     /* dims[1] */
} groups;

/* #stablehlo.replica_group_mesh_axes<mesh = @name, ...>: the mesh symbol must exist. */
static CJ_MUST_USE cj_status check_mesh_axes(const cj_op *op, const cj_attr *g) {
  const char *t = g->opaque.text, *end = t + g->opaque.len;
  const char *m = NULL;
  for (const char *p = t; p + 4 < end; p++)
    if (memcmp(p, "mesh", 4) == 0 && (p == t || p[-1] == '<' || p[-1] == ' ' || p[-1] == ',')) {
      const char *q = p + 4;
      while (q < end && *q == ' ') q++;
      if (q < end && *q == '=') {
        q++;
        while (q < end && *q == ' ') q++;
        if (q < end && *q == '@') m = q + 1;
        break;
      }
    }
  if (!m) return NULL; /* an inline mesh */
  char name[256];
  size_t n = 0;
  if (m < end && *m == '"') {
    for (m++; m < end && *m != '"' && n + 1 < sizeof name; m++) name[n++] = *m;
  } else {
    for (; m < end && n + 1 < sizeof name &&
           ((*m >= 'a' && *m <= 'z') || (*m >= 'A' && *m <= 'Z') || (*m >= '0' && *m <= '9') ||
            *m == '_' || *m == '.' || *m == '$' || *m == '-');
         m++)
      name[n++] = *m;
  }
  name[n] = 0;
  bool in_module;
  const cj_op *sym = cj_verify_lookup_symbol(op, name, &in_module);
  if (in_module && !sym) CJV_FAIL(op, "replica_groups: mesh symbol @%s does not exist", name);
  return NULL;
}

/* replica_groups: a rank-2 i64 tensor of unique ids covering 0..k-1 (-1 pads groups of ops
 * that allow groups of different sizes). */
static CJ_MUST_USE cj_status check_replica_groups(const cj_op *op, bool same_size, bool global_ids,
                                      groups *out) {
  const cj_attr *g = cjv_attr(op, "replica_groups");
  memset(out, 0, sizeof *out);
  if (g && g->kind == CJ_ATTR_OPAQUE) return check_mesh_axes(op, g);
  if (!g || g->kind != CJ_ATTR_DENSE) return NULL;
  if (!cj_verify_dense_readable(g, true)) CJV_FAIL(op, "replica_groups must be a dense integer tensor");
  const cj_type *gt = g->dense.type;
  cjv_tbuf t1;
  if (gt->rank != 2) CJV_FAIL(op, "replica_groups must be a rank-2 tensor, got %s", CJV_T(gt, t1));
  out->dense = true;
  out->ngroups = gt->dims[0];
  out->size = gt->dims[1];
  int64_t n = gt->num_elements;
  if (global_ids && n == 0)
    CJV_FAIL(op, "replica_groups cannot be empty when use_global_device_ids is set");
  idset seen;
  idset_init(&seen);
  int64_t count = 0, max = -1;
  cj_status st = NULL;
  for (int64_t i = 0; i < n && !st; i++) {
    int64_t id = cj_dense_get_i64(g, i);
    if (id == -1 && !same_size) continue;
    if (id < 0) {
      st = cj_op_error(op, CJ_INVALID_ARGUMENT, "replica_groups holds an invalid replica id %lld",
                       (long long)id);
      break;
    }
    int r = idset_insert(&seen, id);
    if (r < 0)
      st = cj_op_error(op, CJ_INVALID_ARGUMENT, "replica id %lld in replica_groups is too large",
                       (long long)id);
    else if (r == 0)
      st = cj_op_error(op, CJ_INVALID_ARGUMENT, "replica id %lld appears more than once in "
                       "replica_groups", (long long)id);
    else {
      count++;
      if (id > max) max = id;
    }
  }
  /* the ids must be exactly 0..count-1 */
  if (!st && max >= count)
    for (int64_t id = 0; id < count; id++)
      if (!idset_has(&seen, id)) {
        st = cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "replica_groups does not contain replica id %lld (its %lld ids must be "
                         "0 to %lld)",
                         (long long)id, (long long)count, (long long)count - 1);
        break;
      }
  idset_free(&seen);
  return st;
}

static int64_t channel_id(const cj_op *op) {
  return cj_verify_field_i64(cjv_attr(op, "channel_handle"), CJ_SK_CHANNEL_HANDLE,
                       CJ_SF_CHANNEL_HANDLE_handle, 0);
}

static bool use_global_ids(const cj_op *op) { return cjv_attr(op, "use_global_device_ids") != NULL; }

/* ======================================================================== gather/reduce */

cj_status cj_verify_all_gather(const cj_op *op) {
  groups g;
  bool global = use_global_ids(op);
  CJV_TRY(check_replica_groups(op, true, global, &g));
  if (global && channel_id(op) <= 0)
    CJV_FAIL(op, "channel_id must be positive when use_global_device_ids is set, got %lld",
             (long long)channel_id(op));
  if (op->nopnds != op->nresults)
    CJV_FAIL(op, "has %u operands but %u results", op->nopnds, op->nresults);
  int64_t dim = 0;
  cjv_get_i64(op, "all_gather_dim", &dim);
  char w1[48], w2[48];
  cjv_tbuf t1, t2;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *x = T(op, i), *r = R(op, i);
    snprintf(w1, sizeof w1, "operand #%u", i);
    snprintf(w2, sizeof w2, "result #%u", i);
    CJV_TRY(cj_verify_check_tensor(op, w1, x, PER_TENSOR));
    CJV_TRY(cj_verify_check_tensor(op, w2, r, PER_TENSOR));
    CJV_TRY(cj_verify_check_same_elem(op, w1, x, w2, r));
    if (dim < 0 || dim >= x->rank)
      CJV_FAIL(op, "all_gather_dim %lld is out of range [0, %d)", (long long)dim, x->rank);
    if (r->rank != x->rank)
      CJV_FAIL(op, "%s %s and %s %s must have the same rank", w1, CJV_T(x, t1), w2, CJV_T(r, t2));
    for (int32_t d = 0; d < x->rank; d++)
      if (d != dim && !cj_shape_dim_compatible(x->dims[d], r->dims[d]))
        CJV_FAIL(op, "%s %s and %s %s may differ only in dimension all_gather_dim = %lld", w1,
                 CJV_T(x, t1), w2, CJV_T(r, t2), (long long)dim);
    int64_t a = x->dims[dim], b = r->dims[dim];
    if (a == CJ_DYN || b == CJ_DYN) continue;
    /* the process group size depends on the mode (with cross_replica_and_partition it is the
     * replica group size times the number of partitions), so only divisibility is checked */
    if ((a == 0 && b != 0) || (a != 0 && b % a))
      CJV_FAIL(op, "%s dimension %lld has size %lld, not a multiple of the operand's %lld", w2,
               (long long)dim, (long long)b, (long long)a);
  }
  return NULL;
}

/* all_reduce / collective_reduce: each data operand reduced by the computation, results of the
 * operands' shapes in the computation's element type. */
static CJ_MUST_USE cj_status check_reduced(const cj_op *op, uint32_t ndata) {
  if (op->nresults != ndata)
    CJV_FAIL(op, "has %u data operands but %u results", ndata, op->nresults);
  char w1[48], w2[48];
  cjv_tbuf t1, t2;
  for (uint32_t i = 0; i < ndata; i++) {
    const cj_type *x = T(op, i), *r = R(op, i);
    snprintf(w1, sizeof w1, "operand #%u", i);
    snprintf(w2, sizeof w2, "result #%u", i);
    CJV_TRY(cj_verify_check_tensor(op, w1, x, PER_TENSOR));
    CJV_TRY(cj_verify_check_tensor(op, w2, r, PER_TENSOR));
    const cj_type *ins[1] = {x}, *elem;
    CJV_TRY(cj_verify_check_reducer(op, 0, "computation", 1, ins, NULL, NULL, NULL, 0, &elem));
    CJV_TRY(cj_verify_check_same_shape(op, w1, x, w2, r));
    if (r->elem != elem)
      CJV_FAIL(op, "%s has element type %s but the computation returns %s", w2, CJV_T(r, t1),
               CJV_T(elem, t2));
  }
  return NULL;
}

cj_status cj_verify_all_reduce(const cj_op *op) {
  groups g;
  bool global = use_global_ids(op);
  CJV_TRY(check_replica_groups(op, false, global, &g));
  if (global && channel_id(op) <= 0)
    CJV_FAIL(op, "channel_id must be positive when use_global_device_ids is set, got %lld",
             (long long)channel_id(op));
  return check_reduced(op, op->nopnds);
}

/* has_dynamic_root: the last operand is a rank-1 i32 tensor with one entry per data operand. */
static CJ_MUST_USE cj_status check_dynamic_root(const cj_op *op, uint32_t *ndata) {
  bool dyn = cjv_attr(op, "has_dynamic_root") != NULL;
  *ndata = op->nopnds;
  if (!dyn) {
    if (op->nopnds == 0) CJV_FAIL(op, "needs at least one data operand");
    return NULL;
  }
  if (op->nopnds < 2)
    CJV_FAIL(op, "with has_dynamic_root needs at least two operands (data and the root)");
  *ndata = op->nopnds - 1;
  const cj_type *root = T(op, op->nopnds - 1);
  cjv_tbuf t1;
  if (!root || root->kind != CJ_TYPE_TENSOR || root->rank != 1 || root->elem->kind != CJ_TYPE_ELEM ||
      root->elem->dtype != CJ_S32 || root->dims[0] != (int64_t)*ndata)
    CJV_FAIL(op, "with has_dynamic_root the last operand must be tensor<%uxi32>, got %s", *ndata,
             CJV_T(root, t1));
  return NULL;
}

cj_status cj_verify_collective_reduce(const cj_op *op) {
  groups g;
  bool global = use_global_ids(op);
  CJV_TRY(check_replica_groups(op, false, global, &g));
  if (global && channel_id(op) <= 0)
    CJV_FAIL(op, "channel_id must be positive when use_global_device_ids is set, got %lld",
             (long long)channel_id(op));
  uint32_t ndata;
  CJV_TRY(check_dynamic_root(op, &ndata));
  return check_reduced(op, ndata);
}

cj_status cj_verify_collective_broadcast(const cj_op *op) {
  const cj_attr *ga = cjv_attr(op, "replica_groups");
  if (ga && ga->kind == CJ_ATTR_OPAQUE) CJV_TRY(check_mesh_axes(op, ga));
  if (ga && ga->kind == CJ_ATTR_DENSE) {
    if (!cj_verify_dense_readable(ga, true)) CJV_FAIL(op, "replica_groups must be a dense integer tensor");
    cjv_tbuf t1;
    if (ga->dense.type->rank != 2)
      CJV_FAIL(op, "replica_groups must be a rank-2 tensor, got %s", CJV_T(ga->dense.type, t1));
    idset seen;
    idset_init(&seen);
    cj_status st = NULL;
    for (int64_t i = 0; i < ga->dense.type->num_elements && !st; i++) {
      int64_t id = cj_dense_get_i64(ga, i);
      int r = id < 0 ? -2 : idset_insert(&seen, id);
      if (r == -2)
        st = cj_op_error(op, CJ_INVALID_ARGUMENT, "replica_groups holds a negative id %lld",
                         (long long)id);
      else if (r < 0)
        st = cj_op_error(op, CJ_INVALID_ARGUMENT, "replica id %lld is too large", (long long)id);
      else if (r == 0)
        st = cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "replica id %lld appears more than once in replica_groups", (long long)id);
    }
    idset_free(&seen);
    if (st) return st;
  }
  uint32_t ndata;
  CJV_TRY(check_dynamic_root(op, &ndata));
  if (op->nresults != ndata)
    CJV_FAIL(op, "has %u data operands but %u results", ndata, op->nresults);
  char w1[48], w2[48];
  for (uint32_t i = 0; i < ndata; i++) {
    snprintf(w1, sizeof w1, "operand #%u", i);
    snprintf(w2, sizeof w2, "result #%u", i);
    CJV_TRY(cj_verify_check_tensor(op, w1, T(op, i), PER_TENSOR));
    CJV_TRY(cj_verify_check_same_type(op, w1, T(op, i), w2, R(op, i)));
  }
  return NULL;
}

cj_status cj_verify_reduce_scatter(const cj_op *op) {
  groups g;
  bool global = use_global_ids(op);
  CJV_TRY(check_replica_groups(op, true, global, &g));
  if (global && channel_id(op) <= 0)
    CJV_FAIL(op, "channel_id must be positive when use_global_device_ids is set, got %lld",
             (long long)channel_id(op));
  const cj_type *x = T(op, 0), *r = R(op, 0);
  CJV_TRY(cj_verify_check_tensor(op, "operand", x, PER_TENSOR));
  CJV_TRY(cj_verify_check_tensor(op, "result", r, PER_TENSOR));
  const cj_type *ins[1] = {x}, *elem;
  CJV_TRY(cj_verify_check_reducer(op, 0, "computation", 1, ins, NULL, NULL, NULL, 0, &elem));
  int64_t dim = 0;
  cjv_get_i64(op, "scatter_dimension", &dim);
  cjv_tbuf t1, t2;
  if (dim < 0 || dim >= x->rank)
    CJV_FAIL(op, "scatter_dimension %lld is out of range [0, %d)", (long long)dim, x->rank);
  if (r->rank != x->rank)
    CJV_FAIL(op, "operand %s and result %s must have the same rank", CJV_T(x, t1), CJV_T(r, t2));
  for (int32_t d = 0; d < x->rank; d++)
    if (d != dim && !cj_shape_dim_compatible(x->dims[d], r->dims[d]))
      CJV_FAIL(op, "operand %s and result %s may differ only in dimension scatter_dimension = %lld",
               CJV_T(x, t1), CJV_T(r, t2), (long long)dim);
  int64_t a = x->dims[dim], b = r->dims[dim];
  if (a != CJ_DYN && b != CJ_DYN) {
    if (b == 0 || a == 0)
      CJV_FAIL(op, "the scatter dimension cannot have size 0 (operand %s, result %s)",
               CJV_T(x, t1), CJV_T(r, t2));
    if (a % b)
      CJV_FAIL(op, "operand scatter dimension size %lld is not a multiple of the result's %lld",
               (long long)a, (long long)b);
  }
  if (r->elem != elem)
    CJV_FAIL(op, "result has element type %s but the computation returns %s", CJV_T(r, t1),
             CJV_T(elem, t2));
  return NULL;
}

cj_status cj_verify_all_to_all(const cj_op *op) {
  int64_t split_dim = 0, concat_dim = 0, count = 0;
  cjv_get_i64(op, "split_dimension", &split_dim);
  cjv_get_i64(op, "concat_dimension", &concat_dim);
  cjv_get_i64(op, "split_count", &count);
  if (count <= 0) CJV_FAIL(op, "split_count must be positive, got %lld", (long long)count);
  groups g;
  CJV_TRY(check_replica_groups(op, true, false, &g));
  if (g.dense && g.ngroups != CJ_DYN && (g.ngroups == 0 || g.size != count))
    CJV_FAIL(op, "replica groups must have split_count = %lld members each, got %lld",
             (long long)count, (long long)g.size);
  if (op->nopnds != op->nresults)
    CJV_FAIL(op, "has %u operands but %u results", op->nopnds, op->nresults);
  char w1[48], w2[48];
  cjv_tbuf t1;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *x = T(op, i), *r = R(op, i);
    snprintf(w1, sizeof w1, "operand #%u", i);
    snprintf(w2, sizeof w2, "result #%u", i);
    CJV_TRY(cj_verify_check_tensor(op, w1, x, PER_TENSOR));
    CJV_TRY(cj_verify_check_tensor(op, w2, r, PER_TENSOR));
    CJV_TRY(cj_verify_check_same_elem(op, w1, x, w2, r));
    if (split_dim < 0 || split_dim >= x->rank)
      CJV_FAIL(op, "split_dimension %lld is out of range [0, %d)", (long long)split_dim, x->rank);
    if (concat_dim < 0 || concat_dim >= x->rank)
      CJV_FAIL(op, "concat_dimension %lld is out of range [0, %d)", (long long)concat_dim,
               x->rank);
    int64_t expect[CJV_MAX_DIMS];
    for (int32_t d = 0; d < x->rank; d++) expect[d] = x->dims[d];
    if (expect[split_dim] != CJ_DYN) {
      if (expect[split_dim] % count)
        CJV_FAIL(op, "%s %s: split dimension size %lld is not a multiple of split_count %lld", w1,
                 CJV_T(x, t1), (long long)expect[split_dim], (long long)count);
      expect[split_dim] /= count;
    }
    if (expect[concat_dim] != CJ_DYN) expect[concat_dim] *= count;
    CJV_TRY(cj_verify_check_shape_is(op, w2, r, expect, x->rank));
  }
  return NULL;
}

/* ======================================================================== point to point */

/* source_target_pairs: shape [N, 2], non-negative, unique sources and unique targets. */
static CJ_MUST_USE cj_status check_source_target_pairs(const cj_op *op) {
  const cj_attr *p = cjv_attr(op, "source_target_pairs");
  if (!p || p->kind != CJ_ATTR_DENSE) return NULL;
  if (!cj_verify_dense_readable(p, true)) CJV_FAIL(op, "source_target_pairs must be a dense integer tensor");
  const cj_type *pt = p->dense.type;
  cjv_tbuf t1;
  if (pt->num_elements == 0) return NULL; /* no pairs (dense<[]> : tensor<0xi64> too) */
  if (pt->rank != 2 || pt->dims[1] != 2)
    CJV_FAIL(op, "source_target_pairs must have shape [N, 2], got %s", CJV_T(pt, t1));
  idset src, dst;
  idset_init(&src);
  idset_init(&dst);
  cj_status st = NULL;
  for (int64_t i = 0; i < pt->num_elements && !st; i++) {
    int64_t id = cj_dense_get_i64(p, i);
    if (id < 0) {
      st = cj_op_error(op, CJ_INVALID_ARGUMENT, "source_target_pairs holds a negative id %lld",
                       (long long)id);
      break;
    }
    int r = idset_insert(i % 2 ? &dst : &src, id);
    if (r < 0)
      st = cj_op_error(op, CJ_INVALID_ARGUMENT, "id %lld in source_target_pairs is too large",
                       (long long)id);
    else if (r == 0)
      st = cj_op_error(op, CJ_INVALID_ARGUMENT, "%s %lld appears more than once in "
                       "source_target_pairs", i % 2 ? "target" : "source", (long long)id);
  }
  idset_free(&src);
  idset_free(&dst);
  return st;
}

cj_status cj_verify_collective_permute(const cj_op *op) {
  CJV_TRY(check_source_target_pairs(op));
  CJV_TRY(cj_verify_check_tensor(op, "operand", T(op, 0), PER_TENSOR));
  return cj_verify_check_same_type(op, "operand", T(op, 0), "result", R(op, 0));
}

/* channel type of send (DEVICE_TO_HOST when is_host_transfer) and recv (HOST_TO_DEVICE) */
static CJ_MUST_USE cj_status check_channel_type(const cj_op *op, int64_t host_type, const char *host_name) {
  /* an absent type field is 0 (CHANNEL_TYPE_INVALID) */
  int64_t t = cj_verify_field_i64(cjv_attr(op, "channel_handle"), CJ_SK_CHANNEL_HANDLE,
                            CJ_SF_CHANNEL_HANDLE_type, 0);
  bool host = false;
  cjv_get_bool(op, "is_host_transfer", &host);
  if (!host && t != 1)
    CJV_FAIL(op, "channel type must be DEVICE_TO_DEVICE (1) when is_host_transfer is false, got %lld",
             (long long)t);
  if (host && t != host_type)
    CJV_FAIL(op, "channel type must be %s (%lld) when is_host_transfer is true, got %lld",
             host_name, (long long)host_type, (long long)t);
  return NULL;
}

/* results of recv/infeed: tensors then one token */
static CJ_MUST_USE cj_status check_results_then_token(const cj_op *op) {
  if (op->nresults == 0) CJV_FAIL(op, "must have at least one result (the token)");
  char w[48];
  cjv_tbuf t1;
  for (uint32_t i = 0; i + 1 < op->nresults; i++) {
    const cj_type *r = R(op, i);
    snprintf(w, sizeof w, "result #%u", i);
    if (!r || r->kind != CJ_TYPE_TENSOR)
      CJV_FAIL(op, "%s must be a tensor (only the last result is a token), got %s", w, CJV_T(r, t1));
    if (r->num_elements < 0) CJV_FAIL(op, "%s must have a static shape, got %s", w, CJV_T(r, t1));
  }
  return cj_verify_check_token(op, "the last result", R(op, op->nresults - 1));
}

/* operands of send/outfeed: tensors then one token */
static CJ_MUST_USE cj_status check_operands_then_token(const cj_op *op) {
  if (op->nopnds == 0) CJV_FAIL(op, "must have at least one operand (the token)");
  cjv_tbuf t1;
  for (uint32_t i = 0; i + 1 < op->nopnds; i++) {
    const cj_type *x = T(op, i);
    if (!x || x->kind != CJ_TYPE_TENSOR)
      CJV_FAIL(op, "operand #%u must be a tensor (only the last operand is a token), got %s", i,
               CJV_T(x, t1));
  }
  CJV_TRY(cj_verify_check_token(op, "the last operand", T(op, op->nopnds - 1)));
  return cj_verify_check_token(op, "result", R(op, 0));
}

cj_status cj_verify_send(const cj_op *op) {
  CJV_TRY(check_operands_then_token(op));
  CJV_TRY(check_source_target_pairs(op));
  return check_channel_type(op, 2, "DEVICE_TO_HOST");
}

cj_status cj_verify_recv(const cj_op *op) {
  CJV_TRY(cj_verify_check_token(op, "operand", T(op, 0)));
  CJV_TRY(check_results_then_token(op));
  CJV_TRY(check_source_target_pairs(op));
  return check_channel_type(op, 3, "HOST_TO_DEVICE");
}

cj_status cj_verify_infeed(const cj_op *op) {
  CJV_TRY(cj_verify_check_token(op, "operand", T(op, 0)));
  CJV_TRY(check_results_then_token(op));
  const cj_attr *layout = cjv_attr(op, "layout");
  if (!layout) return NULL;
  if ((uint32_t)layout->arr.n != op->nresults - 1)
    CJV_FAIL(op, "layout must have %u entries (one per result but the token), got %d",
             op->nresults - 1, layout->arr.n);
  for (int32_t i = 0; i < layout->arr.n; i++) {
    const cj_attr *e = layout->arr.items[i];
    if (!e || e->kind != CJ_ATTR_ARRAY) CJV_FAIL(op, "layout entry #%d must be an array", i);
    for (int32_t j = 0; j < e->arr.n; j++)
      if (!e->arr.items[j] || e->arr.items[j]->kind != CJ_ATTR_INT)
        CJV_FAIL(op, "layout entry #%d must hold integers", i);
  }
  return NULL;
}

cj_status cj_verify_outfeed(const cj_op *op) { return check_operands_then_token(op); }
