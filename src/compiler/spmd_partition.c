/* cjrt: the per-op rules of the SPMD partitioner (docs/SPMD.md says how a sharding flows through
 * an op and how to add a rule).
 *
 * spmd.c walks @main's body in order; every op that is not a manual computation comes here with
 * its operands already per-device values whose shardings are recorded (cj_spmd_find; absent =
 * replicated). A rule picks the shardings its operands must have for the op to run on local
 * shards (resharding those that differ: all_gather of the dims that lose axes, a slice by
 * partition id of the dims that gain some), the shardings of its results (their types become
 * the local shapes), and the collectives that complete the local results (an all_reduce over
 * the axes a contraction or reduction was split along). Ops without a rule run whole: their
 * operands are gathered and every device computes the same replicated result (correct, slower;
 * CJRT_SPMD_LOG=1 names each on stderr).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/spmd_internal.h"

/* ======================================================================== logging */

static bool log_on(void) {
  const char *e = getenv("CJRT_SPMD_LOG");
  return e && *e && strcmp(e, "0") != 0;
}

static void say(const cj_op *op, const char *fmt, ...) CJ_PRINTF(2, 3);
static void say(const cj_op *op, const char *fmt, ...) {
  if (!log_on()) return;
  char where[256];
  cj_op_where(op, where, sizeof where);
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "cjrt spmd: %s at %s: %s\n", op->name, where, msg);
}

/* ======================================================================== shardings */

void cj_spmd_canon(sharding *sh) {
  size_t cl = 0;
  char *c = sh->canon;
  size_t cap = sizeof sh->canon;
  c[0] = 0;
  sh->split = false;
  for (int d = 0; d < sh->rank; d++) {
    int64_t div = 1;
    cl += (size_t)snprintf(c + cl, cl < cap ? cap - cl : 0, "%s{", d ? ", " : "");
    for (int k = 0; k < sh->nax[d]; k++) {
      int a = sh->ax[d][k];
      div *= sh->mesh ? sh->mesh->sizes[a] : 1;
      cl += (size_t)snprintf(c + cl, cl < cap ? cap - cl : 0, "%s\"%s\"", k ? ", " : "",
                             sh->mesh ? sh->mesh->axes[a] : "?");
    }
    cl += (size_t)snprintf(c + cl, cl < cap ? cap - cl : 0, "}");
    sh->div[d] = div;
    if (div > 1) sh->split = true;
  }
}

static void sh_init(sharding *sh, const mesh *me, int rank) {
  memset(sh, 0, sizeof *sh);
  sh->mesh = me;
  sh->rank = rank;
  for (int d = 0; d < rank; d++) sh->div[d] = 1;
}

static int64_t sh_devices(const sharding *sh) {
  int64_t n = 1;
  for (int d = 0; sh && d < sh->rank; d++) n *= sh->div[d];
  return n;
}

static bool sh_dim_same(const sharding *a, int da, const sharding *b, int db) {
  int na = a ? a->nax[da] : 0, nb = b ? b->nax[db] : 0;
  if (a && a->div[da] == 1) na = 0;
  if (b && b->div[db] == 1) nb = 0;
  if (na != nb || (na && a->div[da] != b->div[db])) return false; /* (sub-axes differ in size) */
  for (int k = 0; k < na; k++)
    if (a->ax[da][k] != b->ax[db][k]) return false;
  return true;
}

/* Equal as layouts of data (NULL = replicated). */
static bool sh_same(const sharding *a, const sharding *b) {
  if (a && !a->split) a = NULL;
  if (b && !b->split) b = NULL;
  if (!a || !b) return !a && !b;
  if (a->mesh != b->mesh || a->rank != b->rank) return false;
  for (int d = 0; d < a->rank; d++)
    if (!sh_dim_same(a, d, b, d)) return false;
  return true;
}

static bool sh_uses(const sharding *sh, int axis) {
  for (int d = 0; d < sh->rank; d++)
    for (int k = 0; k < sh->nax[d]; k++)
      if (sh->ax[d][k] == axis && sh->mesh->sizes[axis] > 1) return true;
  return false;
}

static void sh_copy_dim(sharding *to, int dt, const sharding *from, int df) {
  to->nax[dt] = 0;
  for (int k = 0; k < from->nax[df] && k < 8; k++) to->ax[dt][to->nax[dt]++] = from->ax[df][k];
}

/* The recorded sharding of v into *out (false: replicated). */
static bool sh_of(const state *S, const cj_value *v, sharding *out) {
  const sharded_val *sv = cj_spmd_find(S, v);
  if (!sv || !sv->sh.split) return false;
  *out = sv->sh;
  return true;
}

/* The global dims of per-device value v (its local dims times its split). */
static void global_dims(const state *S, const cj_value *v, int64_t *dims) {
  const sharded_val *sv = cj_spmd_find(S, v);
  for (int32_t d = 0; d < v->type->rank; d++)
    dims[d] = v->type->dims[d] * (sv && d < sv->sh.rank ? sv->sh.div[d] : 1);
}

/* ======================================================================== building collectives */

static CJ_MUST_USE cj_status collective_attrs(cj_module *m, cj_op *op, const mesh *me, const int *axes,
                                  int naxes, int64_t *group_size) {
  int64_t ng = 0, gs = 0;
  int64_t *ids = cj_spmd_mesh_groups(me, axes, naxes, &ng, &gs);
  if (!ids) return cj_oom();
  int64_t gd[2] = {ng, gs};
  const cj_type *gt = cj_type_tensor_of(m, CJ_S64, 2, gd);
  const cj_attr *ga = gt ? cj_attr_dense(m, gt, ids, sizeof(int64_t) * (size_t)(ng * gs), false) : NULL;
  free(ids);
  const cj_type *i64 = cj_type_elem(m, CJ_S64);
  const cj_attr *ch[CJ_SF_CHANNEL_HANDLE__COUNT];
  ch[CJ_SF_CHANNEL_HANDLE_handle] = i64 ? cj_attr_int(m, 1, i64) : NULL;
  ch[CJ_SF_CHANNEL_HANDLE_type] = i64 ? cj_attr_int(m, 1, i64) : NULL;
  const cj_attr *cha = ch[0] && ch[1] ? cj_attr_struct(m, CJ_SK_CHANNEL_HANDLE, ch) : NULL;
  const cj_attr *unit = cj_attr_unit(m);
  if (!ga || !cha || !unit) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, op, "replica_groups", ga));
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, op, "channel_handle", cha));
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, op, "use_global_device_ids", unit));
  if (group_size) *group_size = gs;
  return NULL;
}

/* The axes (mesh indices) of dimension d of sh, as ints. */
static int dim_axes(const sharding *sh, int d, int *axes) {
  int n = 0;
  for (int k = 0; k < sh->nax[d]; k++)
    if (sh->mesh->sizes[sh->ax[d][k]] > 1) axes[n++] = sh->ax[d][k];
  return n;
}

/* A scalar constant of type s64 equal to v, before `before`. */
static cj_value *const_s64(cj_module *m, cj_op *before, int64_t v) {
  const cj_type *sc = cj_type_tensor_of(m, CJ_S64, 0, NULL);
  cj_op *c = sc ? cj_build_op(m, before, before, CJ_OP_CONSTANT, 0, NULL, sc) : NULL;
  const cj_attr *a = c ? cj_attr_dense(m, sc, &v, sizeof v, false) : NULL;
  if (!a || cj_op_set_attr(m, c, "value", a)) return NULL;
  return &c->results[0];
}

/* The mesh position (row-major) of partition pid. */
static int64_t mesh_pos(const mesh *me, int64_t pid) {
  if (!me->ids) return pid;
  for (int64_t k = 0; k < me->nids; k++)
    if (me->ids[k] == pid) return k;
  return pid;
}

/* A constant `table` of type tt (nbytes of data) and the partition id as an s64 scalar (`pid`),
 * before `before`: a device picks its entries of the table by its id. */
static CJ_MUST_USE cj_status table_and_pid(cj_module *m, cj_op *before, const cj_type *tt,
                                           const void *data, size_t nbytes, cj_op **table,
                                           cj_op **pid64) {
  const cj_attr *tv = tt ? cj_attr_dense(m, tt, data, nbytes, false) : NULL;
  cj_op *c = tv ? cj_build_op(m, before, before, CJ_OP_CONSTANT, 0, NULL, tt) : NULL;
  if (!c) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, c, "value", tv));
  cj_op *pid = cj_build_op(m, before, before, CJ_OP_PARTITION_ID, 0, NULL,
                           cj_type_tensor_of(m, CJ_U32, 0, NULL));
  cj_value *pv = pid ? &pid->results[0] : NULL;
  cj_op *cv = pv ? cj_build_op(m, before, before, CJ_OP_CONVERT, 1, &pv,
                               cj_type_tensor_of(m, CJ_S64, 0, NULL))
                 : NULL;
  if (!cv) return cj_oom();
  *table = c;
  *pid64 = cv;
  return NULL;
}

/* v = broadcast_in_dim(x) whose dims of `mask` all come from the broadcast (no dim of x of size
 * above one lands on them) is the same on every device there: *out = x broadcast straight to the
 * local type lt, instead of the whole value materialized to be sliced (the bias of a
 * data-parallel layer, constants). *out = NULL when v is no such broadcast. */
static CJ_MUST_USE cj_status local_broadcast(cj_module *m, cj_op *before, const cj_value *v,
                                             const bool *mask, const cj_type *lt,
                                             cj_value **out) {
  *out = NULL;
  cj_op *bc = v->def;
  if (!bc || bc->kind != CJ_OP_BROADCAST_IN_DIM || bc->nopnds != 1) return NULL;
  const cj_type *xt = bc->operands[0]->type;
  const cj_attr *a = cj_op_attr(bc, "broadcast_dimensions");
  int64_t bd[64], nb = 0;
  if (!a || !cj_type_is_static(xt) || !cj_op_get_i64s(bc, "broadcast_dimensions", bd, 64, &nb) ||
      nb != xt->rank)
    return NULL;
  for (int64_t i = 0; i < nb; i++)
    if (bd[i] >= 0 && bd[i] < v->type->rank && mask[bd[i]] && xt->dims[i] != 1) return NULL;
  cj_value *x = bc->operands[0];
  cj_op *nbc = cj_build_op(m, before, before, CJ_OP_BROADCAST_IN_DIM, 1, &x, lt);
  if (!nbc) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, nbc, "broadcast_dimensions", a));
  *out = &nbc->results[0];
  return NULL;
}

/* Per dim of a rank-`rank` value split as sh: the offset (an s64 scalar, before `before`) of this
 * device's tile of ldims[d] elements along sh's axes of d where mask[d], else 0. */
static CJ_MUST_USE cj_status tile_offsets(state *S, cj_op *before, const sharding *to, const bool *mask,
                                          const int64_t *ldims, int32_t rank, cj_value **offs) {
  cj_module *m = S->m;
  const mesh *me = to->mesh;
  int64_t np = S->ndev;
  int64_t *tab = malloc(sizeof(int64_t) * (size_t)(rank * np));
  if (!tab) return cj_oom();
  for (int64_t pid = 0; pid < np; pid++) {
    int64_t pos = mesh_pos(me, pid), coord[MAX_AXES];
    for (int a = me->n - 1; a >= 0; a--) {
      coord[a] = pos % me->sizes[a];
      pos /= me->sizes[a];
    }
    for (int32_t d = 0; d < rank; d++) {
      int64_t idx = 0;
      if (mask[d])
        for (int k = 0; k < to->nax[d]; k++) idx = idx * me->sizes[to->ax[d][k]] + coord[to->ax[d][k]];
      tab[d * np + pid] = idx * ldims[d];
    }
  }
  int64_t tdims[2] = {rank, np};
  const cj_type *tt = cj_type_tensor_of(m, CJ_S64, 2, tdims);
  cj_op *c, *cv;
  cj_status st = table_and_pid(m, before, tt, tab, sizeof(int64_t) * (size_t)(rank * np), &c, &cv);
  free(tab);
  CJ_RETURN_IF_ERROR(st);
  const cj_type *one = cj_type_tensor_of(m, CJ_S64, 2, (int64_t[]){1, 1});
  const cj_type *sc = cj_type_tensor_of(m, CJ_S64, 0, NULL);
  if (!cv || !one || !sc) return cj_oom();
  cj_value *zero = NULL;
  int64_t sizes11[2] = {1, 1};
  for (int32_t d = 0; d < rank; d++) {
    if (!mask[d]) {
      if (!zero && !(zero = const_s64(m, before, 0))) return cj_oom();
      offs[d] = zero;
      continue;
    }
    cj_value *row = const_s64(m, before, d);
    if (!row) return cj_oom();
    cj_value *ds_in[3] = {&c->results[0], row, &cv->results[0]};
    cj_op *ds = cj_build_op(m, before, before, CJ_OP_DYNAMIC_SLICE, 3, ds_in, one);
    if (!ds) return cj_oom();
    CJ_RETURN_IF_ERROR(cj_op_set_attr(m, ds, "slice_sizes", cj_attr_i64_array(m, 2, sizes11)));
    cj_value *dsv = &ds->results[0];
    cj_op *rs = cj_build_op(m, before, before, CJ_OP_RESHAPE, 1, &dsv, sc);
    if (!rs) return cj_oom();
    offs[d] = &rs->results[0];
  }
  return NULL;
}

/* v (whole along the dims of `mask`) sliced on each device to its tile of `to` along them. */
static CJ_MUST_USE cj_status slice_dims(state *S, cj_op *before, cj_value *v, const sharding *to,
                            const bool *mask, cj_value **out) {
  cj_module *m = S->m;
  const mesh *me = to->mesh;
  const cj_type *t = v->type;
  int32_t rank = t->rank;
  int64_t np = S->ndev;
  if (me->total != np)
    return cj_op_error(before, CJ_UNIMPLEMENTED,
                       "SPMD partitioning: the mesh @%s has %lld devices but the program runs on "
                       "%lld",
                       me->name, (long long)me->total, (long long)np);
  int64_t ldims[64];
  for (int32_t d = 0; d < rank; d++) {
    ldims[d] = t->dims[d];
    if (mask[d]) {
      if (t->dims[d] % to->div[d])
        return cj_op_error(before, CJ_UNIMPLEMENTED,
                           "SPMD partitioning: dimension %d of size %lld cannot be split evenly "
                           "over %lld devices (uneven shards are not supported)",
                           d, (long long)t->dims[d], (long long)to->div[d]);
      ldims[d] = t->dims[d] / to->div[d];
    }
  }
  const cj_type *lt = cj_type_tensor(m, t->elem, rank, ldims, NULL, t->encoding);
  if (!lt) return cj_oom();
  CJ_RETURN_IF_ERROR(local_broadcast(m, before, v, mask, lt, out));
  if (*out) return NULL;
  cj_value *opnds[1 + 64];
  opnds[0] = v;
  CJ_RETURN_IF_ERROR(tile_offsets(S, before, to, mask, ldims, rank, opnds + 1));
  cj_op *sl = lt ? cj_build_op(m, before, before, CJ_OP_DYNAMIC_SLICE, (uint32_t)(1 + rank), opnds, lt) : NULL;
  if (!sl) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, sl, "slice_sizes", cj_attr_i64_array(m, rank, ldims)));
  *out = &sl->results[0];
  return NULL;
}

cj_status cj_spmd_reshard(state *S, cj_op *before, cj_value *v, const sharding *from,
                          const sharding *to, cj_value **out) {
  *out = v;
  if (from && !from->split) from = NULL;
  if (to && !to->split) to = NULL;
  if (sh_same(from, to)) return NULL;
  if ((from && from->subaxis) || (to && to->subaxis))
    return cj_op_error(before, CJ_UNIMPLEMENTED,
                       "SPMD partitioning: resharding [%s] to [%s] involves sub-axes, which cjrt "
                       "does not support",
                       from ? from->canon : "", to ? to->canon : "");
  cj_module *m = S->m;
  if (from && to && from->mesh != to->mesh) { /* through replicated */
    cj_value *w;
    CJ_RETURN_IF_ERROR(cj_spmd_reshard(S, before, v, from, NULL, &w));
    return cj_spmd_reshard(S, before, w, NULL, to, out);
  }
  if (from && from->mesh->total != S->ndev)
    return cj_op_error(before, CJ_UNIMPLEMENTED,
                       "SPMD partitioning: the mesh @%s has %lld devices but the program runs on "
                       "%lld",
                       from->mesh->name, (long long)from->mesh->total, (long long)S->ndev);
  cj_value *cur = v;
  int32_t rank = v->type->rank;
  bool mask[64] = {false};
  bool gathered = false;
  for (int32_t d = 0; d < rank; d++) {
    bool same = sh_dim_same(from, d, to, d);
    if (from && from->div[d] > 1 && !same) {
      int axes[8];
      int na = dim_axes(from, d, axes);
      int64_t dims[64];
      for (int32_t k = 0; k < rank; k++) dims[k] = cur->type->dims[k];
      int64_t gs = 1;
      for (int k = 0; k < na; k++) gs *= from->mesh->sizes[axes[k]];
      dims[d] *= gs;
      const cj_type *rt = cj_type_tensor(m, cur->type->elem, rank, dims, NULL, cur->type->encoding);
      cj_op *g = rt ? cj_build_op(m, before, before, CJ_OP_ALL_GATHER, 1, &cur, rt) : NULL;
      const cj_attr *gdim = cj_attr_int(m, d, cj_type_elem(m, CJ_S64));
      if (!g || !gdim) return cj_oom();
      CJ_RETURN_IF_ERROR(cj_op_set_attr(m, g, "all_gather_dim", gdim));
      CJ_RETURN_IF_ERROR(collective_attrs(m, g, from->mesh, axes, na, NULL));
      cur = &g->results[0];
      gathered = true;
    }
    if (to && to->div[d] > 1 && !same) mask[d] = true;
  }
  if (gathered) say(before, "all_gather of an operand from [%s] to [%s]", from ? from->canon : "",
                    to ? to->canon : "");
  bool any = false;
  for (int32_t d = 0; d < rank; d++) any |= mask[d];
  if (any) CJ_RETURN_IF_ERROR(slice_dims(S, before, cur, to, mask, &cur));
  *out = cur;
  return NULL;
}

/* A new all_reduce of v over `axes` of me, after `after` (before `after`'s next op), whose
 * combiner is a copy of `body` (two scalar arguments) or, without one, `comb` over v's element
 * type. */
static CJ_MUST_USE cj_status all_reduce_at(state *S, cj_op *after, cj_op *before, cj_value *v,
                                            const mesh *me, const int *axes, int naxes,
                                            const cj_block *body, cj_op_kind comb, cj_value **out) {
  cj_module *m = S->m;
  cj_op *ar = cj_op_create(m, CJ_OP_ALL_REDUCE, NULL, 1, 1, 1);
  if (!ar) return cj_oom();
  ar->pos = after->pos;
  ar->loc = after->loc;
  ar->operands[0] = v;
  ar->results[0].type = v->type;
  const cj_type *st = cj_type_tensor(m, v->type->elem, 0, NULL, NULL, NULL);
  const cj_type *at[2] = {st, st};
  if (!st) return cj_oom();
  if (body) {
    if (body->nargs != 2) return cj_op_error(after, CJ_INTERNAL, "combiner with %u arguments", body->nargs);
    at[0] = body->args[0].type;
    at[1] = body->args[1].type;
  }
  cj_block *rb = cj_region_add_block(m, &ar->regions[0], 2, at);
  if (!rb) return cj_oom();
  if (body) {
    cj_value *from[64], *to[64];
    uint32_t n = 0;
    from[n] = &body->args[0];
    to[n++] = &rb->args[0];
    from[n] = &body->args[1];
    to[n++] = &rb->args[1];
    cj_value **f = malloc(sizeof *f * 64), **t = malloc(sizeof *t * 64);
    uint32_t cap = 64;
    cj_status st2 = (!f || !t) ? cj_oom() : NULL;
    if (!st2) {
      memcpy(f, from, sizeof(cj_value *) * n);
      memcpy(t, to, sizeof(cj_value *) * n);
    }
    for (cj_op *o = body->first; o && !st2; o = o->next) {
      cj_op *c = cj_op_clone(m, o, n, f, t);
      if (!c) {
        st2 = cj_oom();
        break;
      }
      cj_block_append(rb, c);
      if (!cj_value_map_add_results(&f, &t, &n, &cap, o, c)) st2 = cj_oom();
    }
    free(f);
    free(t);
    CJ_RETURN_IF_ERROR(st2);
  } else {
    CJ_RETURN_IF_ERROR(cj_build_combiner(m, rb, after, comb, st));
  }
  CJ_RETURN_IF_ERROR(collective_attrs(m, ar, me, axes, naxes, NULL));
  if (before) cj_block_insert_before(before->block, before, ar);
  else cj_block_insert_before(after->block, after->next, ar);
  *out = &ar->results[0];
  return NULL;
}

static CJ_MUST_USE cj_status all_reduce_after(state *S, cj_op *after, cj_value *v, const mesh *me,
                                              const int *axes, int naxes, const cj_block *body,
                                              cj_op_kind comb, cj_value **out) {
  return all_reduce_at(S, after, NULL, v, me, axes, naxes, body, comb, out);
}

/* The mesh axes (indices) of sh's unreduced axes; their count. */
static int unred_axes(const sharding *sh, int *axes) {
  int n = 0;
  for (int a = 0; a < sh->mesh->n && a < 64; a++)
    if (sh->unred >> a & 1) axes[n++] = a;
  return n;
}

cj_status cj_spmd_reduce_partial(state *S, cj_op *before, cj_value *v, const sharding *sh,
                                 cj_value **out) {
  int axes[MAX_AXES];
  int na = unred_axes(sh, axes);
  *out = v;
  if (!na) return NULL;
  if (sh->mesh->total != S->ndev)
    return cj_op_error(before, CJ_UNIMPLEMENTED,
                       "SPMD partitioning: the mesh @%s of an unreduced value has %lld devices "
                       "but the program runs on %lld",
                       sh->mesh->name, (long long)sh->mesh->total, (long long)S->ndev);
  cj_op_kind comb = sh->ukind == 1   ? CJ_OP_MAXIMUM
                    : sh->ukind == 2 ? CJ_OP_MINIMUM
                    : v->type->dtype == CJ_PRED ? CJ_OP_OR
                                                : CJ_OP_ADD;
  return all_reduce_at(S, before, before, v, sh->mesh, axes, na, NULL, comb, out);
}

/* Zeros of type t (a splat of zero bytes broadcast), before `before`. */
static CJ_MUST_USE cj_status zeros_of(cj_module *m, cj_op *before, const cj_type *t, cj_value **out) {
  const cj_type *sct = cj_type_tensor(m, t->elem, 0, NULL, NULL, t->encoding);
  size_t eb = (size_t)cj_dtype_bytes(t->dtype);
  uint8_t zb[32] = {0};
  const cj_attr *za = sct && eb <= sizeof zb ? cj_attr_dense(m, sct, zb, eb, false) : NULL;
  cj_op *zc = za ? cj_build_op(m, before, before, CJ_OP_CONSTANT, 0, NULL, sct) : NULL;
  if (!zc) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, zc, "value", za));
  cj_value *zv = &zc->results[0];
  cj_op *zb2 = cj_build_op(m, before, before, CJ_OP_BROADCAST_IN_DIM, 1, &zv, t);
  if (!zb2) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, zb2, "broadcast_dimensions", cj_attr_i64_array(m, 0, NULL)));
  *out = &zb2->results[0];
  return NULL;
}

cj_status cj_spmd_make_partial(state *S, cj_op *before, cj_value *v, const sharding *sh,
                               cj_value **out) {
  cj_module *m = S->m;
  const mesh *me = sh->mesh;
  int64_t np = S->ndev;
  *out = v;
  if (!sh->unred || sh->ukind) return NULL; /* the max (min) of copies of v is v */
  if (me->total != np)
    return cj_op_error(before, CJ_UNIMPLEMENTED,
                       "SPMD partitioning: the mesh @%s of an unreduced value has %lld devices "
                       "but the program runs on %lld",
                       me->name, (long long)me->total, (long long)np);
  /* keep[pid]: the partition is the first of its group along the unreduced axes */
  uint8_t *keep = malloc((size_t)np);
  if (!keep) return cj_oom();
  for (int64_t pid = 0; pid < np; pid++) {
    int64_t pos = mesh_pos(me, pid);
    keep[pid] = 1;
    for (int a = me->n - 1; a >= 0; a--) {
      if ((sh->unred >> a & 1) && pos % me->sizes[a]) keep[pid] = 0;
      pos /= me->sizes[a];
    }
  }
  cj_op *kc, *cv;
  cj_status st = table_and_pid(m, before, cj_type_tensor_of(m, CJ_PRED, 1, &np), keep, (size_t)np,
                               &kc, &cv);
  free(keep);
  CJ_RETURN_IF_ERROR(st);
  cj_value *ds_in[2] = {&kc->results[0], &cv->results[0]};
  int64_t one = 1;
  cj_op *ds = cj_build_op(m, before, before, CJ_OP_DYNAMIC_SLICE, 2, ds_in,
                          cj_type_tensor_of(m, CJ_PRED, 1, &one));
  if (!ds) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, ds, "slice_sizes", cj_attr_i64_array(m, 1, &one)));
  const cj_type *t = v->type;
  cj_value *dsv = &ds->results[0];
  cj_op *rs = cj_build_op(m, before, before, CJ_OP_RESHAPE, 1, &dsv, cj_type_tensor_of(m, CJ_PRED, 0, NULL));
  cj_value *rsv = rs ? &rs->results[0] : NULL;
  const cj_type *mt = cj_type_tensor_of(m, CJ_PRED, t->rank, t->dims);
  cj_op *bc = rsv && mt ? cj_build_op(m, before, before, CJ_OP_BROADCAST_IN_DIM, 1, &rsv, mt) : NULL;
  if (!bc) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, bc, "broadcast_dimensions", cj_attr_i64_array(m, 0, NULL)));
  cj_value *zeros;
  CJ_RETURN_IF_ERROR(zeros_of(m, before, t, &zeros));
  cj_value *sel_in[3] = {&bc->results[0], v, zeros};
  cj_op *sel = cj_build_op(m, before, before, CJ_OP_SELECT, 3, sel_in, t);
  if (!sel) return cj_oom();
  *out = &sel->results[0];
  return NULL;
}

cj_status cj_spmd_pad_partial(state *S, cj_op *before, cj_value *v, const sharding *from,
                              uint64_t unred, sharding *psh, cj_value **out) {
  *out = NULL;
  if (!from || !from->split || from->subaxis || from->mesh->total != S->ndev) return NULL;
  const cj_type *t = v->type;
  bool mask[64] = {false}, any = false;
  int64_t gdims[64], ldims[64];
  *psh = *from;
  psh->unred = 0;
  for (int32_t d = 0; d < t->rank && d < from->rank; d++) {
    gdims[d] = ldims[d] = t->dims[d];
    if (from->div[d] <= 1) continue;
    bool all = true;
    for (int k = 0; k < from->nax[d]; k++) all &= (unred >> from->ax[d][k] & 1) != 0;
    if (!all) continue;
    mask[d] = any = true;
    gdims[d] *= from->div[d];
    for (int k = 0; k < from->nax[d]; k++) psh->unred |= (uint64_t)1 << from->ax[d][k];
    psh->nax[d] = 0;
  }
  if (!any) return NULL;
  cj_module *m = S->m;
  cj_value *opnds[2 + 64];
  const cj_type *gt = cj_type_tensor(m, t->elem, t->rank, gdims, NULL, t->encoding);
  if (!gt) return cj_oom();
  CJ_RETURN_IF_ERROR(zeros_of(m, before, gt, &opnds[0]));
  opnds[1] = v;
  CJ_RETURN_IF_ERROR(tile_offsets(S, before, from, mask, ldims, t->rank, opnds + 2));
  cj_op *up = cj_build_op(m, before, before, CJ_OP_DYNAMIC_UPDATE_SLICE, (uint32_t)(2 + t->rank), opnds, gt);
  if (!up) return cj_oom();
  psh->ukind = 0;
  psh->partial = true;
  cj_spmd_canon(psh);
  *out = &up->results[0];
  return NULL;
}

/* ======================================================================== rule helpers */

/* Operand i resharded to `want` (NULL or unsplit: replicated). */
static CJ_MUST_USE cj_status need(state *S, cj_op *op, uint32_t i, const sharding *want) {
  cj_value *v = op->operands[i];
  sharding cur;
  bool split = sh_of(S, v, &cur);
  bool whole = !want || !want->split;
  const sharded_val *sv = cj_spmd_find(S, v);
  if (split && whole && sv->whole) { /* gathered once, for every later user */
    op->operands[i] = sv->whole;
    return NULL;
  }
  cj_value *nv;
  CJ_RETURN_IF_ERROR(cj_spmd_reshard(S, op, v, split ? &cur : NULL, want, &nv));
  /* (only a value made in @main's body dominates every later user) */
  if (split && whole && op->block == cj_func_body(S->main))
    ((sharded_val *)cj_spmd_find(S, v))->whole = nv;
  op->operands[i] = nv;
  return NULL;
}

/* Result j of op becomes the local shape of `sh` and is recorded as sharded so. */
static CJ_MUST_USE cj_status set_result(state *S, cj_op *op, uint32_t j, const sharding *sh) {
  if (!sh || !sh->split) return NULL;
  const cj_type *lt;
  CJ_RETURN_IF_ERROR(cj_spmd_local_type(S->m, op, "result", op->results[j].type, sh, &lt));
  op->results[j].type = lt;
  return cj_spmd_mark(S, &op->results[j], sh);
}

typedef struct capture_ctx {
  state *S;
  cj_op *top;
  cj_status st;
} capture_ctx;

/* Values from above that an op's regions read (while/case bodies may capture): whole. */
static void whole_captures(capture_ctx *C, cj_op *op) {
  for (uint32_t r = 0; r < op->nregions && !C->st; r++)
    for (cj_block *b = op->regions[r].first; b && !C->st; b = b->next)
      for (cj_op *o = b->first; o && !C->st; o = o->next) {
        for (uint32_t i = 0; i < o->nopnds && !C->st; i++) {
          sharded_val *sv = (sharded_val *)cj_spmd_find(C->S, o->operands[i]);
          if (!sv || !sv->sh.split) continue;
          cj_value *w = sv->whole;
          if (!w) {
            sharding sh = sv->sh;
            C->st = cj_spmd_reshard(C->S, C->top, sv->v, &sh, NULL, &w);
            sv = (sharded_val *)cj_spmd_find(C->S, o->operands[i]);
            /* (only a value made in @main's body dominates every later user) */
            if (!C->st && C->top->block == cj_func_body(C->S->main)) sv->whole = w;
          }
          if (!C->st) o->operands[i] = w;
        }
        whole_captures(C, o);
      }
}

static bool any_split_operand(const state *S, const cj_op *op) {
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const sharded_val *sv = cj_spmd_find(S, op->operands[i]);
    if (sv && sv->sh.split) return true;
  }
  return false;
}

/* Every operand whole, the op run whole on every device. A result of the same shape as the
 * operand in its position (while loops, sorts, cumulative sums, reverse, ...) is then sliced
 * back to that operand's sharding (free: no data moves), as Shardy's propagation passes a
 * sharding through such ops; other results stay replicated. */
static CJ_MUST_USE cj_status run_whole(state *S, cj_op *op, const char *why) {
  if (any_split_operand(S, op)) say(op, "runs whole on every device (%s)", why);
  uint32_t nkeep = op->nresults < op->nopnds ? op->nresults : op->nopnds;
  if (nkeep > 16) nkeep = 16;
  sharding keep[16];
  bool kept[16] = {false};
  for (uint32_t j = 0; j < nkeep; j++) {
    const cj_type *rt = op->results[j].type;
    if (!cj_type_is_static(rt) || !sh_of(S, op->operands[j], &keep[j]) || keep[j].subaxis ||
        rt->rank != keep[j].rank)
      continue;
    int64_t g[64];
    global_dims(S, op->operands[j], g);
    kept[j] = true;
    for (int32_t d = 0; d < rt->rank; d++) kept[j] &= g[d] == rt->dims[d];
  }
  for (uint32_t i = 0; i < op->nopnds; i++) CJ_RETURN_IF_ERROR(need(S, op, i, NULL));
  for (uint32_t j = 0; j < nkeep; j++) {
    if (!kept[j] || !op->next) continue;
    cj_value *nv;
    CJ_RETURN_IF_ERROR(cj_spmd_reshard(S, op->next, &op->results[j], NULL, &keep[j], &nv));
    if (nv == &op->results[j]) continue;
    cj_replace_all_uses(S->main, &op->results[j], nv);
    nv->def->operands[0] = &op->results[j];
    CJ_RETURN_IF_ERROR(cj_spmd_mark(S, nv, &keep[j]));
  }
  return NULL;
}

/* ======================================================================== the rules */

static bool is_ew(const cj_op *op) {
  if (!(cj_op_info_get(op->kind)->flags & CJ_OPF_ELEMENTWISE) || op->nresults != 1) return false;
  const cj_type *rt = op->results[0].type; /* operands: the same shape, or scalars */
  if (!cj_type_is_static(rt)) return false;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const cj_type *t = op->operands[i]->type;
    if (t->rank != 0 && t->rank != rt->rank) return false;
  }
  return true;
}

/* Elementwise: the operand split over the most devices leads; the others' splits join it where
 * they do not conflict; every full-rank operand is resharded to that, scalars stay whole. */
static CJ_MUST_USE cj_status rule_elementwise(state *S, cj_op *op) {
  sharding best, o;
  bool have = false;
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (op->operands[i]->type->rank && sh_of(S, op->operands[i], &o) &&
        (!have || sh_devices(&o) > sh_devices(&best))) {
      best = o;
      have = true;
    }
  if (!have) return NULL;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    if (!op->operands[i]->type->rank || !sh_of(S, op->operands[i], &o) || o.mesh != best.mesh) continue;
    for (int d = 0; d < best.rank; d++) {
      if (best.div[d] > 1 || o.div[d] == 1) continue;
      bool clash = false;
      for (int k = 0; k < o.nax[d]; k++) clash |= sh_uses(&best, o.ax[d][k]);
      if (!clash) {
        sh_copy_dim(&best, d, &o, d);
        cj_spmd_canon(&best);
      }
    }
  }
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (op->operands[i]->type->rank) CJ_RETURN_IF_ERROR(need(S, op, i, &best));
  return set_result(S, op, 0, &best);
}

static CJ_MUST_USE cj_status rule_broadcast(state *S, cj_op *op) {
  sharding a;
  if (!sh_of(S, op->operands[0], &a)) return NULL;
  int64_t bd[64], nb = 0;
  const cj_type *it = op->operands[0]->type, *rt = op->results[0].type;
  if (!cj_op_get_i64s(op, "broadcast_dimensions", bd, 64, &nb) || nb != it->rank)
    return run_whole(S, op, "unreadable broadcast_dimensions");
  int64_t idims[64];
  global_dims(S, op->operands[0], idims);
  sharding r;
  sh_init(&r, a.mesh, rt->rank);
  for (int d = 0; d < it->rank; d++)
    if (a.div[d] > 1 && bd[d] >= 0 && bd[d] < rt->rank && idims[d] == rt->dims[bd[d]])
      sh_copy_dim(&r, (int)bd[d], &a, d);
  cj_spmd_canon(&r);
  /* the operand keeps exactly what the result keeps */
  sharding want;
  sh_init(&want, a.mesh, it->rank);
  for (int d = 0; d < it->rank; d++)
    if (a.div[d] > 1 && bd[d] >= 0 && bd[d] < rt->rank && idims[d] == rt->dims[bd[d]])
      sh_copy_dim(&want, d, &a, d);
  cj_spmd_canon(&want);
  CJ_RETURN_IF_ERROR(need(S, op, 0, &want));
  return set_result(S, op, 0, &r);
}

static CJ_MUST_USE cj_status rule_transpose(state *S, cj_op *op) {
  sharding a;
  if (!sh_of(S, op->operands[0], &a)) return NULL;
  int64_t perm[64], np = 0;
  if (!cj_op_get_i64s(op, "permutation", perm, 64, &np) || np != a.rank)
    return run_whole(S, op, "unreadable permutation");
  sharding r;
  sh_init(&r, a.mesh, a.rank);
  for (int d = 0; d < a.rank; d++) sh_copy_dim(&r, d, &a, (int)perm[d]);
  cj_spmd_canon(&r);
  return set_result(S, op, 0, &r);
}

/* reshape: the operand and result dims fall into groups of equal element count; a split dim
 * that is the first non-unit dim of its group passes its axes to the first non-unit dim of the
 * result's group when that dim divides evenly (the tiles are the same contiguous runs);
 * other splits are gathered first. */
static CJ_MUST_USE cj_status rule_reshape(state *S, cj_op *op) {
  sharding a;
  if (!sh_of(S, op->operands[0], &a)) return NULL;
  const cj_type *rt = op->results[0].type;
  if (!cj_type_is_static(rt)) return run_whole(S, op, "dynamic shape");
  struct {
    int32_t rank;
    int64_t dims[64];
  } g, *it = &g;
  g.rank = op->operands[0]->type->rank;
  global_dims(S, op->operands[0], g.dims);
  sharding want, r;
  sh_init(&want, a.mesh, it->rank);
  sh_init(&r, a.mesh, rt->rank);
  int i = 0, j = 0;
  while (i < it->rank || j < rt->rank) {
    int i0 = i, j0 = j;
    int64_t pi = 1, pj = 1;
    if (i < it->rank) pi *= it->dims[i++];
    if (j < rt->rank) pj *= rt->dims[j++];
    while (pi != pj && (i < it->rank || j < rt->rank)) {
      if ((pi < pj && i < it->rank) || j >= rt->rank) pi *= it->dims[i++];
      else pj *= rt->dims[j++];
    }
    /* trailing unit dims join this group */
    int fi = -1, fj = -1;
    for (int k = i0; k < i; k++)
      if (it->dims[k] != 1) {
        fi = k;
        break;
      }
    for (int k = j0; k < j; k++)
      if (rt->dims[k] != 1) {
        fj = k;
        break;
      }
    if (fi >= 0 && a.div[fi] > 1 && fj >= 0 && rt->dims[fj] % a.div[fi] == 0) {
      sh_copy_dim(&want, fi, &a, fi);
      sh_copy_dim(&r, fj, &a, fi);
    }
  }
  cj_spmd_canon(&want);
  cj_spmd_canon(&r);
  if (!sh_same(&want, &a)) say(op, "the split [%s] does not map cleanly: gathered to [%s]", a.canon, want.canon);
  CJ_RETURN_IF_ERROR(need(S, op, 0, &want));
  return set_result(S, op, 0, &r);
}

static int64_t type_bytes(const cj_type *t) {
  int64_t n = t->num_elements > 0 ? t->num_elements : 1;
  return n * (int64_t)(cj_dtype_bytes(t->dtype) ? cj_dtype_bytes(t->dtype) : 1);
}

typedef struct dotdims {
  int64_t lb[64], rb[64], lc[64], rc[64], lf[64], rf[64];
  int64_t nb, nc, nlf, nrf;
} dotdims;

static bool in_list(const int64_t *l, int64_t n, int64_t v) {
  for (int64_t k = 0; k < n; k++)
    if (l[k] == v) return true;
  return false;
}

/* With `lead` (lhs if lhs_leads) kept as it is, what the other operand must be: batch and
 * contracting dims as the leader's, its free dims as its own where their axes are still unused. */
static void dot_follow(const dotdims *dd, bool lhs_leads, const sharding *lead, const sharding *other,
                       int other_rank, const mesh *me, sharding *want) {
  sh_init(want, me, other_rank);
  const int64_t *ob = lhs_leads ? dd->rb : dd->lb, *lb = lhs_leads ? dd->lb : dd->rb;
  const int64_t *oc = lhs_leads ? dd->rc : dd->lc, *lc = lhs_leads ? dd->lc : dd->rc;
  const int64_t *of = lhs_leads ? dd->rf : dd->lf;
  int64_t nof = lhs_leads ? dd->nrf : dd->nlf;
  if (lead) {
    for (int64_t k = 0; k < dd->nb; k++) sh_copy_dim(want, (int)ob[k], lead, (int)lb[k]);
    for (int64_t k = 0; k < dd->nc; k++) sh_copy_dim(want, (int)oc[k], lead, (int)lc[k]);
  }
  if (other)
    for (int64_t k = 0; k < nof; k++) {
      int d = (int)of[k];
      if (other->div[d] == 1) continue;
      bool clash = false;
      for (int q = 0; q < other->nax[d]; q++) clash |= lead && sh_uses(lead, other->ax[d][q]);
      if (!clash) sh_copy_dim(want, d, other, d);
    }
  cj_spmd_canon(want);
}

/* Bytes the reshard from `from` to `to` of a value of type t moves (0: slicing only). */
static int64_t reshard_cost(const cj_type *t, const sharding *from, const sharding *to) {
  if (!from || !from->split) return 0;
  int64_t grow = 1; /* what each device holds once the dims that change are gathered */
  for (int d = 0; d < from->rank; d++)
    if (from->div[d] > 1 && !sh_dim_same(from, d, to, d)) grow *= from->div[d];
  return grow > 1 ? type_bytes(t) * grow : 0;
}

/* dot_general: batch dims split alike -> local; free dims split -> local; contracting dims
 * split alike on both sides -> local dot + all_reduce(add) over their axes. Otherwise one
 * operand leads and the other is resharded to follow it: whichever moves fewer bytes. */
static CJ_MUST_USE cj_status rule_dot(state *S, cj_op *op) {
  sharding l, r;
  bool ls = sh_of(S, op->operands[0], &l), rs = sh_of(S, op->operands[1], &r);
  if (!ls && !rs) return NULL;
  const cj_attr *dn = cj_op_attr(op, "dot_dimension_numbers");
  if (!dn || dn->kind != CJ_ATTR_STRUCT) return run_whole(S, op, "no dimension numbers");
  dotdims dd;
  memset(&dd, 0, sizeof dd);
  int64_t n1 = 0, n2 = 0;
  const cj_attr *const *f = dn->st.fields;
  if ((f[CJ_SF_DOT_lhs_batching_dimensions] &&
       !cj_attr_get_i64s(f[CJ_SF_DOT_lhs_batching_dimensions], dd.lb, 64, &dd.nb)) ||
      (f[CJ_SF_DOT_rhs_batching_dimensions] &&
       !cj_attr_get_i64s(f[CJ_SF_DOT_rhs_batching_dimensions], dd.rb, 64, &n1)) ||
      (f[CJ_SF_DOT_lhs_contracting_dimensions] &&
       !cj_attr_get_i64s(f[CJ_SF_DOT_lhs_contracting_dimensions], dd.lc, 64, &dd.nc)) ||
      (f[CJ_SF_DOT_rhs_contracting_dimensions] &&
       !cj_attr_get_i64s(f[CJ_SF_DOT_rhs_contracting_dimensions], dd.rc, 64, &n2)) ||
      n1 != dd.nb || n2 != dd.nc)
    return run_whole(S, op, "unreadable dimension numbers");
  const cj_type *lt = op->operands[0]->type, *rt = op->operands[1]->type;
  for (int d = 0; d < lt->rank; d++)
    if (!in_list(dd.lb, dd.nb, d) && !in_list(dd.lc, dd.nc, d)) dd.lf[dd.nlf++] = d;
  for (int d = 0; d < rt->rank; d++)
    if (!in_list(dd.rb, dd.nb, d) && !in_list(dd.rc, dd.nc, d)) dd.rf[dd.nrf++] = d;
  const mesh *me = ls ? l.mesh : r.mesh;
  if (ls && rs && l.mesh != r.mesh) return run_whole(S, op, "operands on different meshes");
  /* lhs leads: rhs follows; rhs leads: lhs follows */
  sharding ra, lb_;
  dot_follow(&dd, true, ls ? &l : NULL, rs ? &r : NULL, rt->rank, me, &ra);
  dot_follow(&dd, false, rs ? &r : NULL, ls ? &l : NULL, lt->rank, me, &lb_);
  int64_t ca = reshard_cost(rt, rs ? &r : NULL, &ra), cb = reshard_cost(lt, ls ? &l : NULL, &lb_);
  sharding wl, wr;
  if (!ls) sh_init(&l, me, lt->rank), cj_spmd_canon(&l);
  if (!rs) sh_init(&r, me, rt->rank), cj_spmd_canon(&r);
  if (ca <= cb) {
    wl = l;
    wr = ra;
  } else {
    wl = lb_;
    wr = r;
  }
  if (ca && cb) say(op, "operands [%s] x [%s] do not match: the cheaper one is gathered", l.canon, r.canon);
  CJ_RETURN_IF_ERROR(need(S, op, 0, &wl));
  CJ_RETURN_IF_ERROR(need(S, op, 1, &wr));
  /* result: batch dims, lhs free dims, rhs free dims */
  const cj_type *ot = op->results[0].type;
  sharding res;
  sh_init(&res, me, ot->rank);
  int o = 0;
  for (int64_t k = 0; k < dd.nb; k++) sh_copy_dim(&res, o++, &wl, (int)dd.lb[k]);
  for (int64_t k = 0; k < dd.nlf; k++) sh_copy_dim(&res, o++, &wl, (int)dd.lf[k]);
  for (int64_t k = 0; k < dd.nrf; k++) sh_copy_dim(&res, o++, &wr, (int)dd.rf[k]);
  cj_spmd_canon(&res);
  int axes[MAX_AXES], na = 0;
  for (int64_t k = 0; k < dd.nc; k++) na += dim_axes(&wl, (int)dd.lc[k], axes + na);
  CJ_RETURN_IF_ERROR(set_result(S, op, 0, &res));
  if (!na) return NULL;
  /* partial sums: completed over the contracting axes */
  cj_value *sum;
  cj_op *ar_anchor = op;
  /* the all_reduce goes after op; uses of op's result move to it */
  CJ_RETURN_IF_ERROR(all_reduce_after(S, ar_anchor, &op->results[0], me, axes, na, NULL,
                                      op->results[0].type->dtype == CJ_PRED ? CJ_OP_OR : CJ_OP_ADD,
                                      &sum));
  cj_replace_all_uses(S->main, &op->results[0], sum);
  sum->def->operands[0] = &op->results[0];
  if (res.split) CJ_RETURN_IF_ERROR(cj_spmd_mark(S, sum, &res));
  return NULL;
}

/* The combiner of a reduce, when all_reduce may finish it: one add/mul/max/min/and/or of the
 * two arguments, with an init value that is its identity (idempotent ones take any init). */
static bool reduce_combinable(const cj_op *op) {
  if (op->nopnds != 2 || op->nregions != 1) return false;
  const cj_block *b = op->regions[0].first;
  if (!b || b->nargs != 2 || !b->first || b->first->next != b->last) return false;
  const cj_op *c = b->first, *ret = b->last;
  if (ret->nopnds != 1 || ret->operands[0] != &c->results[0] || c->nopnds != 2) return false;
  bool args = (c->operands[0] == &b->args[0] && c->operands[1] == &b->args[1]) ||
              (c->operands[0] == &b->args[1] && c->operands[1] == &b->args[0]);
  if (!args) return false;
  if (c->kind == CJ_OP_MAXIMUM || c->kind == CJ_OP_MINIMUM || c->kind == CJ_OP_AND) return true;
  if (c->kind != CJ_OP_ADD && c->kind != CJ_OP_MULTIPLY && c->kind != CJ_OP_OR) return false;
  const cj_op *init = op->operands[1]->def;
  const cj_attr *v = init && init->kind == CJ_OP_CONSTANT ? cj_op_attr(init, "value") : NULL;
  if (!v || v->kind != CJ_ATTR_DENSE) return false;
  if (c->kind == CJ_OP_MULTIPLY) {
    return cj_dense_get_f64(v, 0) == 1.0;
  }
  const unsigned char *p = v->dense.data; /* add, or: all zero bits */
  for (size_t k = 0; k < v->dense.nbytes; k++)
    if (p[k]) return false;
  return true;
}

static CJ_MUST_USE cj_status rule_reduce(state *S, cj_op *op) {
  uint32_t nin = op->nopnds / 2;
  bool any = false;
  sharding a;
  for (uint32_t i = 0; i < nin && !any; i++) any = sh_of(S, op->operands[i], &a);
  if (!any) return run_whole(S, op, "init values split");
  int64_t dims[64], nd = 0;
  if (!cj_op_get_i64s(op, "dimensions", dims, 64, &nd)) return run_whole(S, op, "unreadable dimensions");
  bool red_split = false;
  for (int64_t k = 0; k < nd; k++) red_split |= dims[k] >= 0 && dims[k] < a.rank && a.div[dims[k]] > 1;
  bool combine = red_split && reduce_combinable(op);
  sharding want = a;
  if (red_split && !combine) {
    for (int64_t k = 0; k < nd; k++) want.nax[dims[k]] = 0;
    cj_spmd_canon(&want);
    say(op, "reduces dims split as [%s] with a combiner all_reduce cannot finish: gathered", a.canon);
  }
  for (uint32_t i = 0; i < nin; i++) CJ_RETURN_IF_ERROR(need(S, op, i, &want));
  for (uint32_t i = nin; i < op->nopnds; i++) CJ_RETURN_IF_ERROR(need(S, op, i, NULL));
  sharding res;
  sh_init(&res, want.mesh, op->results[0].type->rank);
  int o = 0;
  for (int d = 0; d < want.rank; d++)
    if (!in_list(dims, nd, d)) sh_copy_dim(&res, o++, &want, d);
  cj_spmd_canon(&res);
  for (uint32_t j = 0; j < op->nresults; j++) CJ_RETURN_IF_ERROR(set_result(S, op, j, &res));
  if (!combine) return NULL;
  int axes[MAX_AXES], na = 0;
  for (int64_t k = 0; k < nd; k++) na += dim_axes(&want, (int)dims[k], axes + na);
  cj_value *sum;
  CJ_RETURN_IF_ERROR(all_reduce_after(S, op, &op->results[0], want.mesh, axes, na,
                                      op->regions[0].first, CJ_OP_ADD, &sum));
  cj_replace_all_uses(S->main, &op->results[0], sum);
  sum->def->operands[0] = &op->results[0];
  if (res.split) CJ_RETURN_IF_ERROR(cj_spmd_mark(S, sum, &res));
  return NULL;
}

/* convolution: split along the input batch dimension only (the kernel whole) -> local, the
 * output split along its batch dimension. */
static CJ_MUST_USE cj_status rule_convolution(state *S, cj_op *op) {
  sharding l, r;
  bool ls = sh_of(S, op->operands[0], &l);
  bool rs = sh_of(S, op->operands[1], &r);
  if (!ls && !rs) return NULL;
  int64_t bgc = 1;
  const cj_attr *dn = cj_op_attr(op, "dimension_numbers");
  int64_t ib = -1, ob = -1;
  if (dn && dn->kind == CJ_ATTR_STRUCT) {
    cj_attr_get_i64(dn->st.fields[CJ_SF_CONV_input_batch_dimension], &ib);
    cj_attr_get_i64(dn->st.fields[CJ_SF_CONV_output_batch_dimension], &ob);
  }
  if (!ls || (cj_op_get_i64(op, "batch_group_count", &bgc) && bgc != 1) || ib < 0 || ob < 0 ||
      l.div[ib] == 1)
    return run_whole(S, op, "not split along the input batch dimension");
  sharding want, res;
  sh_init(&want, l.mesh, l.rank);
  sh_copy_dim(&want, (int)ib, &l, (int)ib);
  cj_spmd_canon(&want);
  sh_init(&res, l.mesh, op->results[0].type->rank);
  sh_copy_dim(&res, (int)ob, &l, (int)ib);
  cj_spmd_canon(&res);
  CJ_RETURN_IF_ERROR(need(S, op, 0, &want));
  CJ_RETURN_IF_ERROR(need(S, op, 1, NULL));
  return set_result(S, op, 0, &res);
}

/* Ops that act along some dims and leave the others alone (keep[d]: dim d may stay split):
 * operands 0..ndata-1 (all of the result's rank) are resharded to the first split one's
 * sharding less the dims that are acted on; the rest (init and padding values, indices) come
 * whole; every result is split as the data. Attributes that hold sizes of kept dims are
 * rewritten by the caller. */
static CJ_MUST_USE cj_status passthrough(state *S, cj_op *op, uint32_t ndata, const bool *keep, bool *out_split) {
  *out_split = false;
  sharding lead;
  bool have = false;
  for (uint32_t i = 0; i < ndata && !have; i++) have = sh_of(S, op->operands[i], &lead);
  if (!have) return run_whole(S, op, "only its scalar operands are split");
  bool any = false;
  for (int d = 0; d < lead.rank; d++) {
    if (!keep[d]) lead.nax[d] = 0;
    any |= keep[d] && lead.nax[d] && lead.div[d] > 1;
  }
  if (!any) return run_whole(S, op, "it acts along every split dim");
  for (uint32_t j = 0; j < op->nresults; j++)
    if (op->results[j].type->rank != lead.rank) return run_whole(S, op, "results of another rank");
  cj_spmd_canon(&lead);
  for (uint32_t i = 0; i < op->nopnds; i++) CJ_RETURN_IF_ERROR(need(S, op, i, i < ndata ? &lead : NULL));
  for (uint32_t j = 0; j < op->nresults; j++) CJ_RETURN_IF_ERROR(set_result(S, op, j, &lead));
  *out_split = true;
  return NULL;
}

/* The local sizes of the split dims of result 0 in an array attribute (slice limits, whose
 * starts are 0 there, and slice sizes). */
static CJ_MUST_USE cj_status local_sizes(state *S, cj_op *op, const char *name, const cj_type *t) {
  int64_t v[64], n = 0;
  const sharded_val *sv = cj_spmd_find(S, &op->results[0]);
  if (!sv || !cj_op_get_i64s(op, name, v, 64, &n) || n != t->rank)
    return cj_op_error(op, CJ_INTERNAL, "cannot rewrite %s", name);
  for (int32_t d = 0; d < t->rank; d++)
    if (sv->sh.div[d] > 1) v[d] = t->dims[d];
  const cj_attr *a = cj_attr_i64_array(S->m, n, v);
  return a ? cj_op_set_attr(S->m, op, name, a) : cj_oom();
}

/* Pass-through rules: the op keeps the split of the dims it does not act along (keep[d]); its
 * first ndata operands are its data. */
typedef struct pt {
  int32_t rank;
  bool keep[64];
  int64_t g[64]; /* operand 0's global dims */
  uint32_t ndata;
} pt;

static bool pt_begin(state *S, cj_op *op, pt *p) {
  p->rank = op->operands[0]->type->rank;
  if (p->rank > 64) return false;
  for (int d = 0; d < p->rank; d++) p->keep[d] = true;
  global_dims(S, op->operands[0], p->g);
  p->ndata = 1;
  return true;
}

/* local_attr: an array attribute of result sizes to make local where split (or NULL) */
static CJ_MUST_USE cj_status pt_end(state *S, cj_op *op, pt *p, const char *local_attr) {
  bool split;
  CJ_RETURN_IF_ERROR(passthrough(S, op, p->ndata, p->keep, &split));
  if (!split || !local_attr) return NULL;
  return local_sizes(S, op, local_attr, op->results[0].type);
}

#define PT_BEGIN(p) \
  pt p;             \
  if (!pt_begin(S, op, &p)) return run_whole(S, op, "rank over 64")

static CJ_MUST_USE cj_status rule_slice(state *S, cj_op *op) {
  PT_BEGIN(p);
  int64_t a[64], b[64], c[64], n = 0, n2 = 0, n3 = 0;
  if (!cj_op_get_i64s(op, "start_indices", a, 64, &n) ||
      !cj_op_get_i64s(op, "limit_indices", b, 64, &n2) ||
      !cj_op_get_i64s(op, "strides", c, 64, &n3) || n != p.rank || n2 != p.rank || n3 != p.rank)
    return run_whole(S, op, "unreadable slice");
  for (int d = 0; d < p.rank; d++) p.keep[d] = a[d] == 0 && b[d] == p.g[d] && c[d] == 1;
  return pt_end(S, op, &p, "limit_indices");
}

static CJ_MUST_USE cj_status rule_dynamic_slice(state *S, cj_op *op) {
  PT_BEGIN(p);
  int64_t a[64], n = 0;
  if (!cj_op_get_i64s(op, "slice_sizes", a, 64, &n) || n != p.rank)
    return run_whole(S, op, "unreadable slice_sizes");
  for (int d = 0; d < p.rank; d++) p.keep[d] = a[d] == p.g[d]; /* starts clamp to 0 */
  return pt_end(S, op, &p, "slice_sizes");
}

/* dims the update covers whole (its start clamps to 0) */
static CJ_MUST_USE cj_status rule_dynamic_update_slice(state *S, cj_op *op) {
  PT_BEGIN(p);
  int64_t u[64];
  if (op->nopnds < 2 || op->operands[1]->type->rank != p.rank) return run_whole(S, op, "bad update");
  global_dims(S, op->operands[1], u);
  for (int d = 0; d < p.rank; d++) p.keep[d] = u[d] == p.g[d];
  p.ndata = 2;
  return pt_end(S, op, &p, NULL);
}

static CJ_MUST_USE cj_status rule_pad(state *S, cj_op *op) {
  PT_BEGIN(p);
  int64_t a[64], b[64], c[64], n = 0, n2 = 0, n3 = 0;
  if (!cj_op_get_i64s(op, "edge_padding_low", a, 64, &n) ||
      !cj_op_get_i64s(op, "edge_padding_high", b, 64, &n2) ||
      !cj_op_get_i64s(op, "interior_padding", c, 64, &n3) || n != p.rank || n2 != p.rank ||
      n3 != p.rank)
    return run_whole(S, op, "unreadable padding");
  for (int d = 0; d < p.rank; d++) p.keep[d] = !a[d] && !b[d] && !c[d];
  return pt_end(S, op, &p, NULL);
}

static CJ_MUST_USE cj_status rule_reverse(state *S, cj_op *op) {
  PT_BEGIN(p);
  int64_t a[64], n = 0;
  if (!cj_op_get_i64s(op, "dimensions", a, 64, &n)) return run_whole(S, op, "unreadable dimensions");
  for (int64_t q = 0; q < n; q++)
    if (a[q] >= 0 && a[q] < p.rank) p.keep[a[q]] = false;
  return pt_end(S, op, &p, NULL);
}

static CJ_MUST_USE cj_status rule_concatenate(state *S, cj_op *op) {
  PT_BEGIN(p);
  int64_t k = 0;
  if (!cj_op_get_i64(op, "dimension", &k) || k < 0 || k >= p.rank)
    return run_whole(S, op, "unreadable dimension");
  p.keep[k] = false;
  p.ndata = op->nopnds;
  return pt_end(S, op, &p, NULL);
}

static CJ_MUST_USE cj_status rule_sort(state *S, cj_op *op) {
  PT_BEGIN(p);
  int64_t k = 0;
  if (!cj_op_get_i64(op, "dimension", &k)) k = -1;
  if (k < 0) k += p.rank;
  if (k < 0 || k >= p.rank) return run_whole(S, op, "unreadable dimension");
  p.keep[k] = false;
  p.ndata = op->nopnds;
  return pt_end(S, op, &p, NULL);
}

static CJ_MUST_USE cj_status rule_reduce_window(state *S, cj_op *op) {
  PT_BEGIN(p);
  int64_t a[64], b[64], n = 0, n2 = 0;
  p.ndata = op->nopnds / 2;
  if (!cj_op_get_i64s(op, "window_dimensions", a, 64, &n) || n != p.rank)
    return run_whole(S, op, "unreadable window");
  for (int d = 0; d < p.rank; d++) p.keep[d] = a[d] == 1;
  const char *ones[3] = {"window_strides", "base_dilations", "window_dilations"};
  for (int q = 0; q < 3; q++)
    if (cj_op_get_i64s(op, ones[q], b, 64, &n2) && n2 == p.rank)
      for (int d = 0; d < p.rank; d++) p.keep[d] &= b[d] == 1;
  const cj_attr *pad = cj_op_attr(op, "padding");
  int64_t pv[128], np = 0;
  if (pad) {
    if (!cj_attr_get_i64s(pad, pv, 128, &np) || np != 2 * p.rank)
      return run_whole(S, op, "unreadable padding");
    for (int d = 0; d < p.rank; d++) p.keep[d] &= !pv[2 * d] && !pv[2 * d + 1];
  }
  return pt_end(S, op, &p, NULL);
}
#undef PT_BEGIN

/* gather: operand dims taken whole (offset dims with a full slice, not indexed) keep their
 * axes, at their offset positions in the result; the indices' batch dims keep theirs (unless
 * they clash), at the result's batch positions. Each device gathers its rows of its columns. */
static CJ_MUST_USE cj_status rule_gather(state *S, cj_op *op) {
  const cj_attr *dn = cj_op_attr(op, "dimension_numbers");
  if (!dn || dn->kind != CJ_ATTR_STRUCT) return run_whole(S, op, "no dimension numbers");
  const cj_attr *const *f = dn->st.fields;
  int64_t off[64], col[64], obd[64], ibd[64], sim[64], ss[64];
  int64_t noff = 0, ncol = 0, nobd = 0, nibd = 0, nsim = 0, nss = 0, ivd = -1;
  if ((f[CJ_SF_GATHER_offset_dims] && !cj_attr_get_i64s(f[CJ_SF_GATHER_offset_dims], off, 64, &noff)) ||
      (f[CJ_SF_GATHER_collapsed_slice_dims] &&
       !cj_attr_get_i64s(f[CJ_SF_GATHER_collapsed_slice_dims], col, 64, &ncol)) ||
      (f[CJ_SF_GATHER_operand_batching_dims] &&
       !cj_attr_get_i64s(f[CJ_SF_GATHER_operand_batching_dims], obd, 64, &nobd)) ||
      (f[CJ_SF_GATHER_start_indices_batching_dims] &&
       !cj_attr_get_i64s(f[CJ_SF_GATHER_start_indices_batching_dims], ibd, 64, &nibd)) ||
      (f[CJ_SF_GATHER_start_index_map] &&
       !cj_attr_get_i64s(f[CJ_SF_GATHER_start_index_map], sim, 64, &nsim)) ||
      !cj_attr_get_i64(f[CJ_SF_GATHER_index_vector_dim], &ivd) ||
      !cj_op_get_i64s(op, "slice_sizes", ss, 64, &nss))
    return run_whole(S, op, "unreadable dimension numbers");
  if (nobd != nibd) return run_whole(S, op, "unpaired batching dims");
  const cj_type *ot = op->operands[0]->type, *it = op->operands[1]->type, *rt = op->results[0].type;
  if (nss != ot->rank || !cj_type_is_static(rt)) return run_whole(S, op, "unreadable slice_sizes");
  sharding o, ix;
  bool os = sh_of(S, op->operands[0], &o), is = sh_of(S, op->operands[1], &ix);
  if (!os && !is) return NULL;
  const mesh *me = os ? o.mesh : is ? ix.mesh : NULL;
  if (os && is && o.mesh != ix.mesh) return run_whole(S, op, "operands on different meshes");
  int64_t g[64];
  global_dims(S, op->operands[0], g);
  sharding wo, wi, res;
  sh_init(&wo, me, ot->rank);
  sh_init(&wi, me, it->rank);
  sh_init(&res, me, rt->rank);
  /* a pair of batching dims split alike is local: each device gathers its own batch */
  for (int64_t j = 0; j < nobd; j++) {
    int od = (int)obd[j], id = (int)ibd[j];
    if (od < 0 || od >= ot->rank || id < 0 || id >= it->rank)
      return run_whole(S, op, "batching dims out of range");
    if (os && o.div[od] > 1)
      sh_copy_dim(&wo, od, &o, od);
    else if (is && ix.div[id] > 1)
      sh_copy_dim(&wo, od, &ix, id);
    sh_copy_dim(&wi, id, &wo, od);
  }
  int64_t k = 0; /* the k-th offset dim of the operand */
  for (int d = 0; d < ot->rank; d++) {
    if (in_list(col, ncol, d) || in_list(obd, nobd, d)) continue;
    if (k >= noff) return run_whole(S, op, "offset dims do not match");
    bool clash = false;
    for (int q = 0; os && q < o.nax[d]; q++) clash |= sh_uses(&wo, o.ax[d][q]);
    if (os && o.div[d] > 1 && ss[d] == g[d] && !in_list(sim, nsim, d) && !clash) {
      sh_copy_dim(&wo, d, &o, d);
      sh_copy_dim(&res, (int)off[k], &o, d);
    }
    k++;
  }
  cj_spmd_canon(&wo);
  int r = 0; /* result batch dims, in order, match the indices' dims but index_vector_dim */
  for (int d = 0; d < it->rank; d++) {
    if (d == ivd) continue;
    while (r < rt->rank && in_list(off, noff, r)) r++;
    if (r >= rt->rank) return run_whole(S, op, "batch dims do not match");
    if (in_list(ibd, nibd, d)) { /* its axes are the operand's batching dim's (above) */
      sh_copy_dim(&res, r++, &wi, d);
      continue;
    }
    bool clash = false;
    if (is)
      for (int q = 0; q < ix.nax[d]; q++) clash |= sh_uses(&wo, ix.ax[d][q]);
    if (is && ix.div[d] > 1 && !clash) {
      sh_copy_dim(&wi, d, &ix, d);
      sh_copy_dim(&res, r, &ix, d);
    }
    r++;
  }
  cj_spmd_canon(&wi);
  cj_spmd_canon(&res);
  if (!res.split) return run_whole(S, op, "split only along indexed or sliced dims");
  CJ_RETURN_IF_ERROR(need(S, op, 0, &wo));
  CJ_RETURN_IF_ERROR(need(S, op, 1, &wi));
  for (int d = 0; d < ot->rank; d++)
    if (wo.div[d] > 1 && !in_list(obd, nobd, d)) ss[d] /= wo.div[d];
  const cj_attr *na = cj_attr_i64_array(S->m, nss, ss);
  if (!na) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(S->m, op, "slice_sizes", na));
  return set_result(S, op, 0, &res);
}

/* scatter's batching dims: pair j is operand dim ibd[j], indices dim sibd[j] and the updates'
 * scatter dim that indices dim stands for (udim). A pair split on any of the three (the operand's
 * split first, then the indices', then the updates') is split alike on all three: each device
 * scatters its own batch. */
static void scatter_batching(const int64_t *ibd, const int64_t *sibd, int64_t nb, const int *udim,
                             const sharding *o, const sharding *ix, const sharding *us,
                             sharding *lead, sharding *ind, sharding *upd) {
  for (int64_t j = 0; j < nb; j++) {
    int od = (int)ibd[j], id = (int)sibd[j], ud = udim[id];
    if (o && o->div[od] > 1)
      sh_copy_dim(lead, od, o, od);
    else if (ix && ix->div[id] > 1)
      sh_copy_dim(lead, od, ix, id);
    else if (us && ud >= 0 && us->div[ud] > 1)
      sh_copy_dim(lead, od, us, ud);
    sh_copy_dim(ind, id, lead, od);
    if (ud >= 0) sh_copy_dim(upd, ud, lead, od);
  }
}

/* scatter: operand dims that are window dims not indexed and whose window is the whole dim
 * keep their axes (the updates' matching window dims take the same axes); batching dims split
 * alike on the operand, indices and updates stay split (scatter_batching); the indices come whole
 * otherwise, and the updates' other scatter dims whole. Each device scatters its columns into its
 * columns. */
/* The unreduced axes a sdy.sharding_constraint on v (after v's op, in its block) asks for: 0 if
 * none does. */
static uint64_t unreduced_use(state *S, cj_op *op, const cj_value *v) {
  for (cj_op *u = op->next; u; u = u->next) {
    if (u->kind != CJ_OP_SDY_SHARDING_CONSTRAINT || u->nopnds != 1 || u->operands[0] != v) continue;
    sharding c;
    cj_status st = cj_spmd_read_sharding(u, "the sharding constraint", cj_op_attr(u, "sharding"), &S->ms,
                                         v->type, &c);
    if (st) { /* (the constraint reports it when it is partitioned) */
      cj_status_ignore(st);
      return 0;
    }
    return c.ukind ? 0 : c.unred;
  }
  return 0;
}

/* A scatter-add of updates split along their scatter dims (segment_sum, bincount) into a whole
 * operand whose result a constraint asks for unreduced over exactly those axes: each device
 * scatters its own updates (into the operand on the first device of each group, zeros on the
 * others) and keeps the partial sums, as XLA does; the all_reduce after it serves the other uses
 * (removed when there are none). *done: handled so. */
static CJ_MUST_USE cj_status scatter_partial(state *S, cj_op *op, const int *udim, int64_t ivd,
                                             bool *done) {
  *done = false;
  const cj_op *red = op->regions[0].first ? op->regions[0].first->first : NULL;
  if (op->nopnds != 3 || op->nresults != 1 || !red || red->kind != CJ_OP_ADD || !red->next ||
      red->next->kind != CJ_OP_RETURN || op->results[0].type->dtype == CJ_PRED || red->nopnds != 2 ||
      red->operands[0]->def || red->operands[1]->def || red->operands[0] == red->operands[1])
    return NULL; /* (an add of the two arguments) */
  sharding o, ix, us;
  if (sh_of(S, op->operands[0], &o)) return NULL;
  bool is = sh_of(S, op->operands[1], &ix), uss = sh_of(S, op->operands[2], &us);
  if (!is && !uss) return NULL;
  const mesh *me = is ? ix.mesh : us.mesh;
  if (is && uss && ix.mesh != us.mesh) return NULL;
  const cj_type *it = op->operands[1]->type, *ut = op->operands[2]->type;
  sharding ind, upd;
  sh_init(&ind, me, it->rank);
  sh_init(&upd, me, ut->rank);
  uint64_t axes = 0;
  for (int d = 0; d < it->rank; d++) {
    int u = udim[d];
    if (u < 0 || d == ivd) continue;
    const sharding *from = is && ix.div[d] > 1 ? &ix : NULL;
    int fd = d;
    if (!from && uss && us.div[u] > 1) {
      from = &us;
      fd = u;
    }
    if (!from) continue;
    for (int k = 0; k < from->nax[fd]; k++) {
      if (axes >> from->ax[fd][k] & 1) return NULL;
      axes |= (uint64_t)1 << from->ax[fd][k];
    }
    sh_copy_dim(&ind, d, from, fd);
    sh_copy_dim(&upd, u, from, fd);
  }
  if (!axes || unreduced_use(S, op, &op->results[0]) != axes) return NULL;
  cj_spmd_canon(&ind);
  cj_spmd_canon(&upd);
  CJ_RETURN_IF_ERROR(need(S, op, 1, &ind));
  CJ_RETURN_IF_ERROR(need(S, op, 2, &upd));
  sharding part;
  sh_init(&part, me, op->results[0].type->rank);
  part.unred = axes;
  part.partial = true;
  cj_spmd_canon(&part);
  CJ_RETURN_IF_ERROR(cj_spmd_make_partial(S, op, op->operands[0], &part, &op->operands[0]));
  int ax[MAX_AXES];
  int na = unred_axes(&part, ax);
  cj_value *sum;
  CJ_RETURN_IF_ERROR(all_reduce_after(S, op, &op->results[0], me, ax, na, NULL, CJ_OP_ADD, &sum));
  cj_replace_all_uses(S->main, &op->results[0], sum);
  sum->def->operands[0] = &op->results[0];
  *done = true;
  return NULL;
}

static CJ_MUST_USE cj_status rule_scatter(state *S, cj_op *op) {
  const cj_attr *dn = cj_op_attr(op, "scatter_dimension_numbers");
  if (!dn || dn->kind != CJ_ATTR_STRUCT || op->nopnds < 3 || op->nopnds % 2 == 0)
    return run_whole(S, op, "no dimension numbers");
  const cj_attr *const *f = dn->st.fields;
  int64_t uwd[64], iwd[64], ibd[64], sibd[64], sdo[64];
  int64_t nuwd = 0, niwd = 0, nibd = 0, nsibd = 0, nsdo = 0, ivd = -1;
  if ((f[CJ_SF_SCATTER_update_window_dims] && !cj_attr_get_i64s(f[CJ_SF_SCATTER_update_window_dims], uwd, 64, &nuwd)) ||
      (f[CJ_SF_SCATTER_inserted_window_dims] && !cj_attr_get_i64s(f[CJ_SF_SCATTER_inserted_window_dims], iwd, 64, &niwd)) ||
      (f[CJ_SF_SCATTER_input_batching_dims] && !cj_attr_get_i64s(f[CJ_SF_SCATTER_input_batching_dims], ibd, 64, &nibd)) ||
      (f[CJ_SF_SCATTER_scatter_indices_batching_dims] &&
       !cj_attr_get_i64s(f[CJ_SF_SCATTER_scatter_indices_batching_dims], sibd, 64, &nsibd)) ||
      (f[CJ_SF_SCATTER_scatter_dims_to_operand_dims] &&
       !cj_attr_get_i64s(f[CJ_SF_SCATTER_scatter_dims_to_operand_dims], sdo, 64, &nsdo)) ||
      (f[CJ_SF_SCATTER_index_vector_dim] && !cj_attr_get_i64(f[CJ_SF_SCATTER_index_vector_dim], &ivd)))
    return run_whole(S, op, "unreadable dimension numbers");
  uint32_t n = (op->nopnds - 1) / 2;
  const cj_type *ot = op->operands[0]->type, *it = op->operands[n]->type;
  const cj_type *ut = op->operands[n + 1]->type;
  if (ot->rank > 64 || ut->rank > 64 || it->rank > 64) return run_whole(S, op, "rank over 64");
  if (nibd != nsibd) return run_whole(S, op, "unpaired batching dims");
  for (int64_t j = 0; j < nibd; j++)
    if (ibd[j] < 0 || ibd[j] >= ot->rank || sibd[j] < 0 || sibd[j] >= it->rank || sibd[j] == ivd)
      return run_whole(S, op, "batching dims out of range");
  int64_t og[64], ug[64];
  global_dims(S, op->operands[0], og);
  global_dims(S, op->operands[n + 1], ug);
  int wdim[64]; /* operand dim -> its update window dim, or -1 when it cannot stay split */
  int64_t k = 0;
  for (int d = 0; d < ot->rank; d++) {
    wdim[d] = -1;
    if (in_list(iwd, niwd, d) || in_list(ibd, nibd, d)) continue;
    if (k >= nuwd) return run_whole(S, op, "window dims do not match");
    int u = (int)uwd[k++];
    if (u >= 0 && u < ut->rank && ug[u] == og[d] && !in_list(sdo, nsdo, d)) wdim[d] = u;
  }
  int udim[64]; /* indices dim -> the updates' scatter dim it stands for (-1: index_vector_dim) */
  for (int d = 0, u = 0; d < it->rank; d++) {
    while (u < ut->rank && in_list(uwd, nuwd, u)) u++;
    udim[d] = d == ivd || u >= ut->rank ? -1 : u++;
  }
  sharding o, ix, us;
  bool have = sh_of(S, op->operands[0], &o), is = sh_of(S, op->operands[n], &ix);
  bool uss = sh_of(S, op->operands[n + 1], &us);
  if (!have && !uss && !is) return run_whole(S, op, "nothing split");
  if (nibd == 0) {
    bool done;
    CJ_RETURN_IF_ERROR(scatter_partial(S, op, udim, ivd, &done));
    if (done) return NULL;
  }
  const mesh *me = have ? o.mesh : uss ? us.mesh : ix.mesh;
  is = is && ix.mesh == me; /* (splits on another mesh are resharded through replicated) */
  uss = uss && us.mesh == me;
  sharding lead, upd, ind;
  sh_init(&lead, me, ot->rank);
  sh_init(&upd, me, ut->rank);
  sh_init(&ind, me, it->rank);
  scatter_batching(ibd, sibd, nibd, udim, have ? &o : NULL, is ? &ix : NULL, uss ? &us : NULL,
                   &lead, &ind, &upd);
  if (!have) { /* the updates' split, read back onto the operand */
    sh_init(&o, me, ot->rank);
    for (int d = 0; uss && d < ot->rank; d++)
      if (wdim[d] >= 0) sh_copy_dim(&o, d, &us, wdim[d]);
    cj_spmd_canon(&o);
  }
  for (int d = 0; d < ot->rank; d++) {
    bool clash = false;
    for (int q = 0; q < o.nax[d]; q++) clash |= sh_uses(&lead, o.ax[d][q]);
    if (wdim[d] >= 0 && o.div[d] > 1 && !clash) {
      sh_copy_dim(&lead, d, &o, d);
      sh_copy_dim(&upd, wdim[d], &o, d);
    }
  }
  cj_spmd_canon(&lead);
  cj_spmd_canon(&upd);
  cj_spmd_canon(&ind);
  if (!lead.split) return run_whole(S, op, "split only along indexed or partly updated dims");
  for (uint32_t i = 0; i < n; i++) {
    if (op->operands[i]->type->rank != ot->rank || op->operands[n + 1 + i]->type->rank != ut->rank)
      return run_whole(S, op, "inputs of different ranks");
  }
  for (uint32_t i = 0; i < op->nopnds; i++)
    CJ_RETURN_IF_ERROR(need(S, op, i, i < n ? &lead : i == n ? &ind : &upd));
  for (uint32_t j = 0; j < op->nresults; j++) CJ_RETURN_IF_ERROR(set_result(S, op, j, &lead));
  return NULL;
}

/* One partitioning of while loop w's regions with carries split as car/sp: arguments marked,
 * condition and body partitioned, the body's yields resharded to the carries (unless dry: then
 * what the body yields for the carries that start whole is returned in y/ysp instead). */
static CJ_MUST_USE cj_status while_regions(state *S, cj_op *w, sharding *car, const bool *sp, bool dry,
                               sharding *y, bool *ysp) {
  uint32_t n = w->nopnds;
  cj_block *cb = w->regions[0].first, *bb = w->regions[1].first;
  for (uint32_t i = 0; i < n; i++) {
    if (!sp[i]) continue;
    cj_block *blocks[2] = {cb, bb};
    for (int k = 0; k < 2; k++) {
      blocks[k]->args[i].type = w->operands[i]->type;
      CJ_RETURN_IF_ERROR(cj_spmd_mark(S, &blocks[k]->args[i], &car[i]));
    }
  }
  CJ_RETURN_IF_ERROR(cj_spmd_partition_block(S, cb));
  CJ_RETURN_IF_ERROR(need(S, cb->last, 0, NULL));
  CJ_RETURN_IF_ERROR(cj_spmd_partition_block(S, bb));
  for (uint32_t i = 0; i < n; i++) {
    if (dry) {
      ysp[i] = !sp[i] && sh_of(S, bb->last->operands[i], &y[i]) && !y[i].subaxis;
      continue;
    }
    sharding yy;
    if (!sp[i] && sh_of(S, bb->last->operands[i], &yy))
      say(bb->last, "loop value %u starts whole but the body splits it as [%s]: gathered each "
          "iteration", i, yy.canon);
    CJ_RETURN_IF_ERROR(need(S, bb->last, i, sp[i] ? &car[i] : NULL));
  }
  return NULL;
}

/* while: the loop-carried values keep the shardings of the operands that start them; the
 * condition and body are partitioned with their arguments so split (values they capture from
 * above are ordinary split values there), and each value the body yields is resharded to its
 * carry's sharding. A carry that starts whole but that the body splits (an accumulator of
 * split values) is split from the start instead: a dry run on a copy of the loop finds them
 * (slicing the whole start is free). */
static CJ_MUST_USE cj_status rule_while(state *S, cj_op *op) {
  uint32_t n = op->nopnds;
  cj_block *cb = op->nregions == 2 ? op->regions[0].first : NULL;
  cj_block *bb = op->nregions == 2 ? op->regions[1].first : NULL;
  if (!cb || !bb || cb->next || bb->next || cb->nargs != n || bb->nargs != n || op->nresults != n ||
      !cb->last || !bb->last || bb->last->nopnds != n || cb->last->nopnds != 1)
    return run_whole(S, op, "an unusual while");
  sharding *car = malloc(sizeof(sharding) * 2 * (n ? n : 1)), *y = car ? car + (n ? n : 1) : NULL;
  bool *sp = calloc(2 * (n ? n : 1), sizeof(bool)), *ysp = sp ? sp + (n ? n : 1) : NULL;
  cj_status st = (!car || !sp) ? cj_oom() : NULL;
  for (uint32_t i = 0; !st && i < n; i++) sp[i] = sh_of(S, op->operands[i], &car[i]);
  if (!st) { /* the dry run, on a copy inserted before the loop and removed after */
    cj_op *dry = cj_op_clone(S->m, op, 0, NULL, NULL);
    if (!dry) st = cj_oom();
    if (!st) {
      cj_block_insert_before(op->block, op, dry);
      st = while_regions(S, dry, car, sp, true, y, ysp);
      cj_block_remove(op->block, dry);
    }
  }
  for (uint32_t i = 0; !st && i < n; i++)
    if (ysp[i]) {
      car[i] = y[i];
      sp[i] = true;
      st = need(S, op, i, &car[i]);
    }
  sharding *ps = st ? NULL : malloc(sizeof(sharding) * (n ? n : 1)); /* (partial carries) */
  bool *pc = ps ? calloc(n ? n : 1, sizeof(bool)) : NULL;
  if (!st && !pc) st = cj_oom();
  if (!st) st = cj_spmd_partial_carries(S, op, sp, ps, pc);
  if (!st) st = while_regions(S, op, car, sp, false, NULL, NULL);
  if (!st) st = cj_spmd_partial_carries_out(S, op, ps, pc);
  for (uint32_t i = 0; !st && i < n; i++)
    if (sp[i]) st = set_result(S, op, i, &car[i]);
  free(car);
  free(sp);
  free(ps);
  free(pc);
  return st;
}

/* case / if: every branch is partitioned like a loop body (the values it captures from above
 * stay split there); each result takes the sharding of the first branch that yields it split,
 * and every branch's yield is resharded to it (slicing a whole value is free). */
static CJ_MUST_USE cj_status rule_case(state *S, cj_op *op) {
  uint32_t n = op->nresults;
  for (uint32_t r = 0; r < op->nregions; r++) {
    cj_block *b = op->regions[r].first;
    if (!b || b->next || b->nargs || !b->last || b->last->nopnds != n) return NULL; /* the verifier says */
  }
  for (uint32_t r = 0; r < op->nregions; r++)
    CJ_RETURN_IF_ERROR(cj_spmd_partition_block(S, op->regions[r].first));
  sharding *res = malloc(sizeof(sharding) * (n ? n : 1));
  bool *sp = calloc(n ? n : 1, sizeof(bool));
  cj_status st = (!res || !sp) ? cj_oom() : NULL;
  for (uint32_t j = 0; !st && j < n; j++)
    for (uint32_t r = 0; r < op->nregions && !sp[j]; r++)
      sp[j] = sh_of(S, op->regions[r].first->last->operands[j], &res[j]) && !res[j].subaxis &&
              res[j].rank == op->results[j].type->rank;
  for (uint32_t r = 0; !st && r < op->nregions; r++)
    for (uint32_t j = 0; !st && j < n; j++) {
      cj_op *ret = op->regions[r].first->last;
      st = need(S, ret, j, sp[j] ? &res[j] : NULL);
    }
  for (uint32_t j = 0; !st && j < n; j++)
    if (sp[j]) st = set_result(S, op, j, &res[j]);
  free(res);
  free(sp);
  return st;
}

/* ======================================================================== dispatch */

/* The SPMD column of opfacts.def: how a split op is partitioned. rule_elementwise takes
 * same-shaped (or scalar) operands; rule_none runs the op whole (its operands gathered). */
typedef cj_status (*spmd_rule)(state *S, cj_op *op);

static CJ_MUST_USE cj_status rule_none(state *S, cj_op *op) {
  return run_whole(S, op, "no partitioning rule for this op");
}

static CJ_MUST_USE cj_status rule_ew(state *S, cj_op *op) {
  if (is_ew(op)) return rule_elementwise(S, op);
  return rule_none(S, op);
}

static const spmd_rule spmd_rules[CJ_OP_COUNT] = {
#define OPF(id, infer, canon, ev, quant, va, spmd, ...) spmd,
#include "ir/opfacts.def"
#undef OPF
};

cj_status cj_spmd_partition_op(state *S, cj_op *op) {
  /* (a loop of whole values may still split them: a constraint or shard_map in its body) */
  if (op->kind == CJ_OP_WHILE && (any_split_operand(S, op) || cj_spmd_regions_marked(op))) {
    for (uint32_t i = 0; i < op->nopnds; i++) {
      const sharded_val *sv = cj_spmd_find(S, op->operands[i]);
      if (sv && sv->sh.subaxis) return run_whole(S, op, "sub-axes");
    }
    return rule_while(S, op);
  }
  if (op->kind == CJ_OP_CASE || op->kind == CJ_OP_IF) return rule_case(S, op);
  capture_ctx C = {S, op, NULL};
  whole_captures(&C, op);
  CJ_RETURN_IF_ERROR(C.st);
  if (!any_split_operand(S, op)) return NULL; /* replicated in, replicated out */
  for (uint32_t i = 0; i < op->nopnds; i++) {
    const sharded_val *sv = cj_spmd_find(S, op->operands[i]);
    if (sv && sv->sh.subaxis)
      return cj_op_error(op, CJ_UNIMPLEMENTED,
                         "SPMD partitioning: operand %u is split over sub-axes ([%s]), which cjrt "
                         "does not support",
                         i, sv->sh.canon);
  }
  return spmd_rules[op->kind](S, op);
}
