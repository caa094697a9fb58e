/* cjrt: collectives across the devices of one launch: all_reduce, collective_reduce,
 * reduce_scatter, all_gather, all_to_all, collective_broadcast, collective_permute.
 *
 * Every device of a group joins one meeting of the launch (launch.h) publishing the addresses
 * of its operands and results, then does its share of the work directly in its peers' memory
 * (all device memory is host memory), then leaves (which waits for the whole group):
 *   all_reduce          rank q reduces the q-th slice of the elements over every member's
 *                       operand, in rank order, and writes it into every member's result: each
 *                       element is reduced once, and every member gets the same bits
 *   collective_reduce   the same, written into the root's result only; the others write zeros
 *                       after the meeting
 *   reduce_scatter      rank q reduces the q-th block of every member's operand into its own
 *                       result
 *   all_gather          rank q copies its operand into slot q of every member's result
 *   all_to_all          rank q copies part q of every member's operand into its own result
 *   collective_broadcast, collective_permute  each device copies its source's operand
 * Reduction bodies that are one add/multiply/maximum/minimum/and/or/xor of the two arguments
 * run as fast loops; any other body runs as a nested plan per element on the device's thread.
 * A device whose result overlaps its own operand (a donated argument) while peers read that
 * operand first copies the operand aside, so no peer ever reads overwritten data.
 * A device in a group of one does the work alone, without a meeting.
 * Groups whose members live in several processes (multi-process clients) take a two-level path
 * over the runtime's cross-process operations: see "across processes" below.
 */
#include "base/hash.h"
#include "cpu/k_collective.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ======================================================================== groups */

int64_t cj_coll_channel(const cj_op *op) {
  const cj_attr *ch = cj_op_attr(op, "channel_handle");
  int64_t v = 0;
  if (ch) {
    const cj_attr *h = cj_attr_field(ch, CJ_SK_CHANNEL_HANDLE, CJ_SF_CHANNEL_HANDLE_handle);
    if (h) cj_attr_get_i64(h, &v);
  }
  return v;
}

cj_status cj_coll_read_groups(cj_lw *L, cj_op *op, int how, coll_groups *g) {
  memset(g, 0, sizeof *g);
  const cj_attr *a = cj_op_attr(op, "replica_groups");
  int64_t channel = cj_coll_channel(op);
  bool global = cj_op_attr(op, "use_global_device_ids") != NULL;
  if (how == CG_GATHER_LIKE)
    g->mode = channel <= 0 ? CM_REPLICA : global ? CM_FLAT : CM_REPLICA_AND_PARTITION;
  else
    g->mode = global ? CM_FLAT : channel <= 0 ? CM_REPLICA : CM_PARTITION;
  if (!a) return NULL; /* one group of all */
  if (a->kind == CJ_ATTR_OPAQUE)
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "replica groups given as mesh axes (#stablehlo.replica_group_mesh_axes) "
                       "are not supported; give them as a dense tensor of ids");
  if (a->kind != CJ_ATTR_DENSE || !a->dense.type || a->dense.type->rank != 2)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "replica_groups must be a rank-2 tensor of ids");
  int64_t ng = a->dense.type->dims[0], gs = a->dense.type->dims[1];
  if (ng < 0 || gs < 0) return cj_op_error(op, CJ_INVALID_ARGUMENT, "replica_groups has a dynamic shape");
  if (ng * gs == 0) return NULL; /* empty: one group of all */
  if (gs > CJ_COLL_MAX_DEVICES)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "replica groups of more than %d devices",
                       (int)CJ_COLL_MAX_DEVICES);
  int64_t *ids = cj_lw_alloc(L, sizeof(int64_t) * (size_t)(ng * gs));
  if (!ids) return cj_oom();
  for (int64_t i = 0; i < ng * gs; i++) {
    ids[i] = cj_dense_get_i64(a, i);
    if (ids[i] < -1)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "replica_groups holds the invalid id %lld",
                         (long long)ids[i]);
  }
  g->ng = ng;
  g->gs = gs;
  g->ids = ids;
  return NULL;
}

static const char *mode_unit(int mode) {
  switch (mode) {
    case CM_REPLICA: case CM_REPLICA_AND_PARTITION: return "replica";
    case CM_PARTITION: return "partition";
    default: return "device";
  }
}

cj_status cj_coll_find_group(const coll_groups *g, const cj_exec_ctx *ctx, const char *what,
                          int32_t *members, int32_t *size, int32_t *rank, uint64_t *gid,
                          bool *found) {
  const cj_exec_args *a = ctx->args;
  cj_launch *l = a->launch;
  int32_t nr = cj_cpu_launch_replicas(l), np = cj_cpu_launch_partitions(l);
  int32_t r = a->replica, p = a->partition;
  if (r < 0 || r >= nr || p < 0 || p >= np)
    return cj_internal("%s: device (replica %d, partition %d) is outside the %d x %d grid of its "
                       "execution",
                       what, r, p, nr, np);
  *found = false;
  int32_t n = 0;
  int mode = g->mode == CM_AXIS ? g->axis_mode : g->mode;
  /* the id this device has in the ids of the groups, and how many ids there are */
  int64_t me, nids;
  switch (mode) {
    case CM_PARTITION: me = p; nids = np; break;
    case CM_FLAT: me = (int64_t)r * np + p; nids = (int64_t)nr * np; break;
    default: me = r; nids = nr; break;
  }
  if (nids > CJ_COLL_MAX_DEVICES)
    return cj_unimplemented("%s: groups of more than %d devices", what, (int)CJ_COLL_MAX_DEVICES);
  /* the group's ids: ids[gi] or all of 0..nids-1 */
  const int64_t *gids = NULL;
  int64_t gcount = nids, gidx = -1;
  if (g->mode != CM_AXIS && g->ng > 0) {
    for (int64_t gi = 0; gi < g->ng && gidx < 0; gi++)
      for (int64_t k = 0; k < g->gs; k++) {
        int64_t id = g->ids[gi * g->gs + k];
        if (id == -1) continue;
        if (id < 0 || id >= nids)
          return cj_invalid("%s: replica_groups names %s %lld but the execution has %lld %ss",
                            what, mode_unit(mode), (long long)id, (long long)nids, mode_unit(mode));
        if (id == me) {
          gidx = gi;
          break;
        }
      }
    if (gidx < 0) return NULL; /* in no group */
    gids = g->ids + gidx * g->gs;
    gcount = g->gs;
  }
  int32_t myidx = -1, cnt = 0;
  for (int64_t k = 0; k < gcount; k++) {
    int64_t id = gids ? gids[k] : k;
    if (id == -1) continue;
    if (id < 0 || id >= nids)
      return cj_invalid("%s: replica_groups names %s %lld but the execution has %lld %ss", what,
                        mode_unit(mode), (long long)id, (long long)nids, mode_unit(mode));
    if (id == me) myidx = cnt;
    cnt++;
  }
  if (myidx < 0) return NULL;
  switch (mode) {
    case CM_REPLICA_AND_PARTITION:
      if ((int64_t)cnt * np > CJ_COLL_MAX_DEVICES)
        return cj_unimplemented("%s: groups of more than %d devices", what,
                                (int)CJ_COLL_MAX_DEVICES);
      for (int32_t pp = 0; pp < np; pp++)
        for (int64_t k = 0; k < gcount; k++) {
          int64_t id = gids ? gids[k] : k;
          if (id == -1) continue;
          members[n++] = (int32_t)(id * np + pp);
        }
      *rank = p * cnt + myidx;
      break;
    default:
      for (int64_t k = 0; k < gcount; k++) {
        int64_t id = gids ? gids[k] : k;
        if (id == -1) continue;
        if (mode == CM_PARTITION)
          members[n++] = (int32_t)((int64_t)r * np + id);
        else if (mode == CM_FLAT)
          members[n++] = (int32_t)id;
        else
          members[n++] = (int32_t)(id * np + p);
      }
      *rank = myidx;
      break;
  }
  *size = n;
  *gid = cj_fnv64(members, sizeof(int32_t) * (size_t)n, CJ_FNV64_SEED);
  *found = true;
  return NULL;
}

/* ======================================================================== fast reductions */

/* (the combiners and the region matcher are the reductions': lower.h) */

/* ======================================================================== reductions */

typedef struct red_spec {
  cj_combine_fn comb; /* fast path, or NULL */
  int32_t rop;        /* its CJ_RED_* op (with comb), else -1 */
  cj_dtype dt;        /* the body's element type */
  /* general path: the body as a nested plan over scalar slots acc, x -> ret */
  cj_plan body;
  int32_t body_es;
  uint32_t acc_slot, x_slot, ret_slot; /* indices into st->in */
  cj_ew_fn *cvt;     /* per operand: operand -> body type (NULL = same type) */
  cj_ew_aux *cvt_aux;
} red_spec;

/* Reduces elements [lo, hi) of `S` sources into every one of `T` destinations. Sources and
 * destinations point at element 0; ses / des are their element sizes. */
typedef struct red_job {
  const red_spec *r;
  int32_t k; /* operand (for its conversion) */
  const char *const *src;
  int32_t S;
  char *const *dst;
  int32_t T;
  int32_t ses, des;
  int64_t lo, hi;
} red_job;

enum { RED_BLOCK_BYTES = 8192 };

static void red_fast_blocks(void *ctx, int64_t b0, int64_t b1) {
  const red_job *J = ctx;
  int es = J->ses;
  int64_t per = RED_BLOCK_BYTES / es;
  _Alignas(64) unsigned char tmp[RED_BLOCK_BYTES];
  for (int64_t b = b0; b < b1; b++) {
    int64_t lo = J->lo + b * per, hi = lo + per < J->hi ? lo + per : J->hi;
    size_t len = (size_t)((hi - lo) * es);
    memcpy(tmp, J->src[0] + lo * es, len);
    for (int32_t s = 1; s < J->S; s++) J->r->comb(tmp, J->src[s] + lo * es, hi - lo);
    for (int32_t t = 0; t < J->T; t++) memcpy(J->dst[t] + lo * es, tmp, len);
  }
}

static CJ_MUST_USE cj_status red_run(cj_exec_ctx *ctx, const cj_step *st, const red_job *J) {
  if (J->hi <= J->lo) return NULL;
  const red_spec *r = J->r;
  if (r->comb) {
    int64_t per = RED_BLOCK_BYTES / J->ses;
    int64_t nblocks = (J->hi - J->lo + per - 1) / per;
    if (ctx->pool && cj_pool_size(ctx->pool) > 1 && (J->hi - J->lo) * J->S >= 4 * CJ_PAR_MIN_ELEMS)
      cj_pool_parallel_for(ctx->pool, nblocks, 1, red_fast_blocks, (void *)J);
    else
      red_fast_blocks((void *)J, 0, nblocks);
    return NULL;
  }
  char *acc = CJ_PTR(ctx, st->in[r->acc_slot]);
  char *x = CJ_PTR(ctx, st->in[r->x_slot]);
  const char *ret = CJ_PTR(ctx, st->in[r->ret_slot]);
  cj_ew_fn cvt = r->cvt[J->k];
  const cj_ew_aux *aux = &r->cvt_aux[J->k];
  size_t bes = (size_t)r->body_es;
  for (int64_t e = J->lo; e < J->hi; e++) {
    if (cvt)
      cvt(acc, J->src[0] + e * J->ses, NULL, NULL, 1, aux);
    else
      memcpy(acc, J->src[0] + e * J->ses, bes);
    for (int32_t s = 1; s < J->S; s++) {
      if (cvt)
        cvt(x, J->src[s] + e * J->ses, NULL, NULL, 1, aux);
      else
        memcpy(x, J->src[s] + e * J->ses, bes);
      cj_status rs = cj_plan_run(ctx, &r->body);
      if (rs) return rs;
      if (acc != ret) memmove(acc, ret, bes);
    }
    for (int32_t t = 0; t < J->T; t++) memcpy(J->dst[t] + e * J->des, acc, bes);
  }
  return NULL;
}

/* Lowers the reduction body of `op` for data operands of the given dtypes: a fast combiner when
 * the body is one elementwise op and every operand has the body's type, else a nested plan.
 * Emits nothing; the caller emits the step with `extra` appended to its inputs (acc, x, ret) and
 * calls cj_lw_extend_region(start) after it. */
static CJ_MUST_USE cj_status red_lower(cj_lw *L, cj_op *op, uint32_t ndata, const cj_dtype *in_dt,
                           red_spec *r, int32_t extra[3], uint32_t *nextra, int32_t start) {
  cj_block *body = op->nregions == 1 ? op->regions[0].first : NULL;
  if (!body || body->nargs != 2)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the computation must take two arguments");
  const cj_type *bt = body->args[0].type;
  if (!cj_type_is_static(bt) || bt->num_elements != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the computation's arguments must be scalars");
  cj_dtype e = bt->dtype;
  bool same = true;
  for (uint32_t k = 0; k < ndata; k++) same = same && in_dt[k] == e;
  int rop = same ? cj_reduce_region_op(op, e) : -1;
  r->comb = rop >= 0 ? cj_reduce_combiner(rop, e) : NULL;
  r->rop = r->comb ? rop : -1;
  r->dt = e;
  r->body_es = cj_dtype_bytes(e);
  r->cvt = cj_lw_alloc(L, sizeof(cj_ew_fn) * (ndata ? ndata : 1));
  r->cvt_aux = cj_lw_alloc(L, sizeof(cj_ew_aux) * (ndata ? ndata : 1));
  if (!r->cvt || !r->cvt_aux) return cj_oom();
  *nextra = 0;
  if (r->comb) return NULL;
  for (uint32_t k = 0; k < ndata; k++) {
    if (in_dt[k] == e) continue;
    r->cvt[k] = cj_cvt_lookup(in_dt[k], e);
    r->cvt_aux[k].src = in_dt[k];
    r->cvt_aux[k].dt = e;
    if (!r->cvt[k])
      return cj_op_error(op, CJ_UNIMPLEMENTED, "no conversion from operand %u's element type to "
                         "the computation's", k);
  }
  int32_t acc = cj_lw_new_buf(L, r->body_es, CJ_BK_ARENA);
  int32_t x = cj_lw_new_buf(L, r->body_es, CJ_BK_ARENA);
  cj_lw_def_at(L, acc, start);
  cj_lw_def_at(L, x, start);
  CJ_RETURN_IF_ERROR(cj_lw_bind(L, &body->args[0], 1, &acc));
  CJ_RETURN_IF_ERROR(cj_lw_bind(L, &body->args[1], 1, &x));
  int32_t ret = -1;
  CJ_RETURN_IF_ERROR(cj_lw_value_plan(L, op, body, "the computation", &r->body, &ret));
  extra[0] = acc;
  extra[1] = x;
  extra[2] = ret;
  *nextra = 3;
  return NULL;
}

/* ======================================================================== common params */

typedef enum coll_kind {
  K_ALL_REDUCE = 1,
  K_COLLECTIVE_REDUCE,
  K_REDUCE_SCATTER,
  K_ALL_GATHER,
  K_ALL_TO_ALL,
  K_BROADCAST,
  K_PERMUTE,
} coll_kind;

typedef struct coll_params {
  coll_kind kind;
  coll_groups g;
  uint64_t key, check;
  const char *what;
  uint32_t n;          /* data operands (and results) */
  int64_t *in_bytes, *out_bytes;
  int32_t *in_es, *out_es;
  int64_t *nelems;     /* elements per data operand */
  red_spec red;
  bool dynamic_root;   /* collective_broadcast / collective_reduce: operand n is the roots */
  /* all_gather / reduce_scatter: operand k viewed as [outer][dim][inner] */
  int64_t *outer, *dim, *inner; /* dim: the operand's (all_gather) or the result's (reduce_scatter) */
  int64_t dim_ratio;  /* the group size the shapes were written for */
  /* all_to_all: per operand the copy of one part, and the offset steps of parts */
  cj_strided *parts;
  int64_t *src_step, *dst_step;
  /* collective_permute: pairs */
  int64_t npairs;
  const int64_t *pairs;
} coll_params;

static uint64_t sig_of(cj_lw *L, cj_op *op, uint32_t n) {
  (void)L;
  uint64_t h = cj_fnv64(&op->kind, sizeof op->kind, 0x84222325cbf29ce4ull);
  h = cj_fnv64(&n, sizeof n, h);
  for (uint32_t k = 0; k < n; k++) {
    const cj_type *t = op->operands[k]->type;
    h = cj_fnv64(&t->dtype, sizeof t->dtype, h);
    h = cj_fnv64(&t->num_elements, sizeof t->num_elements, h);
  }
  return h;
}

static CJ_MUST_USE cj_status params_new(cj_lw *L, cj_op *op, coll_kind kind, uint32_t n, coll_params **out) {
  coll_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  if (n > CJ_COLL_MAX_OPERANDS)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "more than %d operands in one collective",
                       (int)CJ_COLL_MAX_OPERANDS);
  p->kind = kind;
  p->n = n;
  p->what = cj_lw_what(L, op);
  p->key = ((uint64_t)kind << 56) ^ ((uint64_t)cj_coll_channel(op) & 0x00ffffffffffffffull);
  p->check = sig_of(L, op, n);
  size_t m = n ? n : 1;
  p->in_bytes = cj_lw_alloc(L, sizeof(int64_t) * m);
  p->out_bytes = cj_lw_alloc(L, sizeof(int64_t) * m);
  p->in_es = cj_lw_alloc(L, sizeof(int32_t) * m);
  p->out_es = cj_lw_alloc(L, sizeof(int32_t) * m);
  p->nelems = cj_lw_alloc(L, sizeof(int64_t) * m);
  if (!p->what || !p->in_bytes || !p->out_bytes || !p->in_es || !p->out_es || !p->nelems)
    return cj_oom();
  *out = p;
  return NULL;
}

/* Data operands and results of a collective: inputs/outputs of its step. */
static CJ_MUST_USE cj_status data_slots(cj_lw *L, cj_op *op, coll_params *p, uint32_t nin_total, int32_t *ins,
                            int32_t *outs, cj_dtype *in_dt, int32_t start) {
  for (uint32_t k = 0; k < nin_total; k++) {
    cj_lw_tensor t;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, k, &t));
    ins[k] = t.buf;
    if (k < p->n) {
      p->in_bytes[k] = t.nbytes;
      p->in_es[k] = cj_dtype_bytes(t.dtype);
      p->nelems[k] = t.nelems;
      if (in_dt) in_dt[k] = t.dtype;
    }
  }
  for (uint32_t k = 0; k < p->n; k++) {
    cj_lw_tensor r;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, k, &r));
    outs[k] = r.buf;
    p->out_bytes[k] = r.nbytes;
    p->out_es[k] = cj_dtype_bytes(r.dtype);
    if (start >= 0) cj_lw_def_at(L, r.buf, start);
  }
  return NULL;
}

/* ======================================================================== execution helpers */

typedef struct coll_exec {
  int32_t members[CJ_COLL_MAX_DEVICES];
  int32_t size, rank;
  uint64_t gid;
  bool found;
} coll_exec;

static bool overlaps(const void *a, size_t an, const void *b, size_t bn) {
  const char *x = a, *y = b;
  return an && bn && x < y + bn && y < x + an;
}

/* Joins the group's meeting with `mine` (an array of pointers); a group of one needs none. */
static CJ_MUST_USE cj_status meet(cj_exec_ctx *ctx, const coll_params *p, coll_exec *E, void *mine,
                      cj_meet **m, void *const **peers) {
  *m = NULL;
  *peers = NULL;
  if (E->size == 1) return NULL;
  cj_meet_req req = {p->key,  (int64_t)E->gid, E->size, E->rank, E->members,
                     p->check, mine,           p->what};
  return cj_meet_join(ctx->args->launch, &req, m, peers);
}

static CJ_MUST_USE cj_status group_of(cj_exec_ctx *ctx, const coll_params *p, coll_exec *E) {
  E->found = false;
  E->size = 0;
  E->rank = 0;
  cj_status st = cj_coll_find_group(&p->g, ctx, p->what, E->members, &E->size, &E->rank, &E->gid,
                                 &E->found);
  if (st) return st;
  if (E->found && E->size > 1 && !ctx->args->launch)
    return cj_internal("%s: a group of %d devices in an execution without a launch", p->what,
                       E->size);
  return NULL;
}

/* Groups that span processes (see "across processes" below). */
static bool spans_processes(const cj_exec_ctx *ctx, const coll_exec *E);
static CJ_MUST_USE cj_status xp_run(cj_exec_ctx *ctx, const cj_step *st, const coll_params *p,
                        const coll_exec *E);
#define XP_DISPATCH(ctx, st, p, E) \
  if (spans_processes(ctx, &(E))) return xp_run(ctx, st, p, &(E))

/* ======================================================================== all_reduce */

/* The published record of reductions: in[0..n) then out[0..n). */
static CJ_MUST_USE cj_status k_all_reduce(cj_exec_ctx *ctx, const cj_step *st) {
  const coll_params *p = st->params;
  coll_exec E;
  CJ_RETURN_IF_ERROR(group_of(ctx, p, &E));
  XP_DISPATCH(ctx, st, p, E);
  void *mine[2 * CJ_COLL_MAX_OPERANDS];
  for (uint32_t k = 0; k < p->n; k++) {
    mine[k] = CJ_PTR(ctx, st->in[k]);
    mine[p->n + k] = CJ_PTR(ctx, st->out[k]);
  }
  if (!E.found) { /* a device in no group reduces its own value */
    E.size = 1;
    E.rank = 0;
  }
  cj_meet *m;
  void *const *peers;
  CJ_RETURN_IF_ERROR(meet(ctx, p, &E, mine, &m, &peers));
  const char *src[CJ_COLL_MAX_DEVICES];
  char *dst[CJ_COLL_MAX_DEVICES];
  cj_status err = NULL;
  for (uint32_t k = 0; k < p->n && !err; k++) {
    for (int32_t s = 0; s < E.size; s++) {
      void *const *rec = E.size == 1 ? (void *const *)mine : (void *const *)peers[s];
      src[s] = rec[k];
      dst[s] = rec[p->n + k];
    }
    int64_t n = p->nelems[k];
    red_job J = {&p->red, (int32_t)k, src, E.size, dst, E.size, p->in_es[k], p->out_es[k],
                 n * E.rank / E.size, n * (E.rank + 1) / E.size};
    err = red_run(ctx, st, &J);
  }
  cj_meet_leave(ctx->args->launch, m);
  return err;
}

/* ======================================================================== collective_reduce */

static CJ_MUST_USE cj_status root_of(const cj_exec_ctx *ctx, const cj_step *st, const coll_params *p,
                         uint32_t k, int32_t size, int32_t *root) {
  *root = 0;
  if (!p->dynamic_root) return NULL;
  int32_t v;
  memcpy(&v, CJ_PTR(ctx, st->in[p->n]) + 4 * k, 4);
  if (v < 0 || v >= size)
    return cj_invalid("%s: root %d of operand %u is outside its group of %d", p->what, v, k, size);
  *root = v;
  return NULL;
}

static CJ_MUST_USE cj_status k_collective_reduce(cj_exec_ctx *ctx, const cj_step *st) {
  const coll_params *p = st->params;
  coll_exec E;
  CJ_RETURN_IF_ERROR(group_of(ctx, p, &E));
  if (!E.found) { /* no group: zeros */
    for (uint32_t k = 0; k < p->n; k++)
      memset(CJ_PTR(ctx, st->out[k]), 0, (size_t)p->out_bytes[k]);
    return NULL;
  }
  XP_DISPATCH(ctx, st, p, E);
  void *mine[2 * CJ_COLL_MAX_OPERANDS];
  for (uint32_t k = 0; k < p->n; k++) {
    mine[k] = CJ_PTR(ctx, st->in[k]);
    mine[p->n + k] = CJ_PTR(ctx, st->out[k]);
  }
  int32_t roots[CJ_COLL_MAX_OPERANDS];
  for (uint32_t k = 0; k < p->n; k++) CJ_RETURN_IF_ERROR(root_of(ctx, st, p, k, E.size, &roots[k]));
  cj_meet *m;
  void *const *peers;
  CJ_RETURN_IF_ERROR(meet(ctx, p, &E, mine, &m, &peers));
  const char *src[CJ_COLL_MAX_DEVICES];
  cj_status err = NULL;
  for (uint32_t k = 0; k < p->n && !err; k++) {
    char *dst[1];
    for (int32_t s = 0; s < E.size; s++) {
      void *const *rec = E.size == 1 ? (void *const *)mine : (void *const *)peers[s];
      src[s] = rec[k];
      if (s == roots[k]) dst[0] = rec[p->n + k];
    }
    int64_t n = p->nelems[k];
    red_job J = {&p->red, (int32_t)k, src, E.size, dst, 1, p->in_es[k], p->out_es[k],
                 n * E.rank / E.size, n * (E.rank + 1) / E.size};
    err = red_run(ctx, st, &J);
  }
  cj_meet_leave(ctx->args->launch, m);
  /* after everyone read the operands: the others' results are zeros */
  for (uint32_t k = 0; k < p->n; k++)
    if (E.rank != roots[k]) memset(CJ_PTR(ctx, st->out[k]), 0, (size_t)p->out_bytes[k]);
  return err;
}

/* ======================================================================== reduce_scatter */

static CJ_MUST_USE cj_status k_reduce_scatter(cj_exec_ctx *ctx, const cj_step *st) {
  const coll_params *p = st->params;
  coll_exec E;
  CJ_RETURN_IF_ERROR(group_of(ctx, p, &E));
  if (!E.found) E.size = 1, E.rank = 0;
  if (E.size != p->dim_ratio)
    return cj_invalid("%s: the operand's scatter dimension is %lld times the result's, but the "
                      "process group has %d members",
                      p->what, (long long)p->dim_ratio, E.size);
  XP_DISPATCH(ctx, st, p, E);
  void *mine[2] = {CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->out[0])};
  cj_meet *m;
  void *const *peers;
  CJ_RETURN_IF_ERROR(meet(ctx, p, &E, mine, &m, &peers));
  const char *src[CJ_COLL_MAX_DEVICES];
  char *dst[1];
  int64_t blk = p->dim[0] * p->inner[0]; /* elements of one block of the result per outer */
  cj_status err = NULL;
  for (int64_t o = 0; o < p->outer[0] && !err; o++) {
    for (int32_t s = 0; s < E.size; s++) {
      void *const *rec = E.size == 1 ? (void *const *)mine : (void *const *)peers[s];
      src[s] = (const char *)rec[0] + ((o * E.size + E.rank) * blk) * p->in_es[0];
    }
    dst[0] = (char *)mine[1] + o * blk * p->out_es[0];
    red_job J = {&p->red, 0, src, E.size, dst, 1, p->in_es[0], p->out_es[0], 0, blk};
    err = red_run(ctx, st, &J);
  }
  cj_meet_leave(ctx->args->launch, m);
  return err;
}

/* ======================================================================== all_gather */

static CJ_MUST_USE cj_status k_all_gather(cj_exec_ctx *ctx, const cj_step *st) {
  const coll_params *p = st->params;
  coll_exec E;
  CJ_RETURN_IF_ERROR(group_of(ctx, p, &E));
  if (!E.found) E.size = 1, E.rank = 0;
  for (uint32_t k = 0; k < p->n; k++)
    if (p->out_bytes[k] != p->in_bytes[k] * E.size)
      return cj_invalid("%s: result %u is written for a group of %lld devices but the process "
                        "group has %d members",
                        p->what, k, (long long)(p->in_bytes[k] ? p->out_bytes[k] / p->in_bytes[k] : 0),
                        E.size);
  XP_DISPATCH(ctx, st, p, E);
  void *mine[2 * CJ_COLL_MAX_OPERANDS];
  for (uint32_t k = 0; k < p->n; k++) {
    mine[k] = CJ_PTR(ctx, st->in[k]);
    mine[p->n + k] = CJ_PTR(ctx, st->out[k]);
  }
  cj_meet *m;
  void *const *peers;
  CJ_RETURN_IF_ERROR(meet(ctx, p, &E, mine, &m, &peers));
  for (uint32_t k = 0; k < p->n; k++) {
    size_t piece = (size_t)(p->dim[k] * p->inner[k] * p->in_es[k]);
    const char *in = mine[k];
    for (int32_t s = 0; s < E.size; s++) {
      void *const *rec = E.size == 1 ? (void *const *)mine : (void *const *)peers[s];
      char *out = rec[p->n + k];
      for (int64_t o = 0; o < p->outer[k]; o++)
        memmove(out + ((size_t)o * (size_t)E.size + (size_t)E.rank) * piece, in + (size_t)o * piece,
                piece);
    }
  }
  cj_meet_leave(ctx->args->launch, m);
  return NULL;
}

/* ======================================================================== all_to_all */

/* Operands that the device's own results overlap are copied aside before peers may read them. */
static CJ_MUST_USE cj_status stage_inputs(const coll_params *p, void **mine, void **copies, bool *any) {
  *any = false;
  for (uint32_t k = 0; k < p->n; k++) {
    copies[k] = NULL;
    bool hit = false;
    for (uint32_t j = 0; j < p->n && !hit; j++)
      hit = overlaps(mine[k], (size_t)p->in_bytes[k], mine[p->n + j], (size_t)p->out_bytes[j]);
    if (!hit) continue;
    copies[k] = malloc((size_t)p->in_bytes[k]);
    if (!copies[k]) return cj_oom();
    memcpy(copies[k], mine[k], (size_t)p->in_bytes[k]);
    mine[k] = copies[k];
    *any = true;
  }
  return NULL;
}

static void free_copies(const coll_params *p, void **copies) {
  for (uint32_t k = 0; k < p->n; k++) free(copies[k]);
}

static CJ_MUST_USE cj_status k_all_to_all(cj_exec_ctx *ctx, const cj_step *st) {
  const coll_params *p = st->params;
  coll_exec E;
  CJ_RETURN_IF_ERROR(group_of(ctx, p, &E));
  if (!E.found) E.size = 1, E.rank = 0;
  if (E.size != p->dim_ratio)
    return cj_invalid("%s: split_count is %lld but the process group has %d members", p->what,
                      (long long)p->dim_ratio, E.size);
  XP_DISPATCH(ctx, st, p, E);
  void *mine[2 * CJ_COLL_MAX_OPERANDS], *copies[CJ_COLL_MAX_OPERANDS];
  for (uint32_t k = 0; k < p->n; k++) {
    mine[k] = CJ_PTR(ctx, st->in[k]);
    mine[p->n + k] = CJ_PTR(ctx, st->out[k]);
  }
  bool staged;
  cj_status err = stage_inputs(p, mine, copies, &staged);
  if (err) {
    free_copies(p, copies);
    return err;
  }
  cj_meet *m;
  void *const *peers;
  err = meet(ctx, p, &E, mine, &m, &peers);
  if (err) {
    free_copies(p, copies);
    return err;
  }
  for (uint32_t k = 0; k < p->n; k++) {
    char *out = mine[p->n + k];
    for (int32_t s = 0; s < E.size; s++) {
      void *const *rec = E.size == 1 ? (void *const *)mine : (void *const *)peers[s];
      cj_strided c = p->parts[k];
      c.soff = E.rank * p->src_step[k];
      c.doff = s * p->dst_step[k];
      cj_strided_run(&c, out, rec[k]);
    }
  }
  cj_meet_leave(ctx->args->launch, m);
  free_copies(p, copies);
  return NULL;
}

/* ======================================================================== broadcast / permute */

static CJ_MUST_USE cj_status k_collective_broadcast(cj_exec_ctx *ctx, const cj_step *st) {
  const coll_params *p = st->params;
  coll_exec E;
  CJ_RETURN_IF_ERROR(group_of(ctx, p, &E));
  if (!E.found) {
    for (uint32_t k = 0; k < p->n; k++)
      memset(CJ_PTR(ctx, st->out[k]), 0, (size_t)p->out_bytes[k]);
    return NULL;
  }
  XP_DISPATCH(ctx, st, p, E);
  int32_t roots[CJ_COLL_MAX_OPERANDS];
  for (uint32_t k = 0; k < p->n; k++) CJ_RETURN_IF_ERROR(root_of(ctx, st, p, k, E.size, &roots[k]));
  void *mine[CJ_COLL_MAX_OPERANDS];
  for (uint32_t k = 0; k < p->n; k++) mine[k] = CJ_PTR(ctx, st->in[k]);
  cj_meet *m;
  void *const *peers;
  CJ_RETURN_IF_ERROR(meet(ctx, p, &E, mine, &m, &peers));
  /* Only the roots' operands are read, and a root's result is its own operand: writing results
   * never changes what a peer reads. */
  for (uint32_t k = 0; k < p->n; k++) {
    void *const *rec = E.size == 1 ? (void *const *)mine : (void *const *)peers[roots[k]];
    char *out = CJ_PTR(ctx, st->out[k]);
    if (out != rec[k]) memmove(out, rec[k], (size_t)p->out_bytes[k]);
  }
  cj_meet_leave(ctx->args->launch, m);
  return NULL;
}

static CJ_MUST_USE cj_status k_collective_permute(cj_exec_ctx *ctx, const cj_step *st) {
  const coll_params *p = st->params;
  coll_exec E;
  CJ_RETURN_IF_ERROR(group_of(ctx, p, &E));
  /* the source of this device, by its id along the axis (= its rank in the axis group) */
  int64_t src = -1;
  for (int64_t i = 0; i < p->npairs; i++) {
    int64_t s = p->pairs[2 * i], t = p->pairs[2 * i + 1];
    if (s < 0 || s >= E.size || t < 0 || t >= E.size)
      return cj_invalid("%s: source_target_pairs names %s %lld but the execution has %d",
                        p->what, mode_unit(p->g.axis_mode), (long long)(s < 0 || s >= E.size ? s : t),
                        E.size);
    if (t == E.rank) src = s;
  }
  XP_DISPATCH(ctx, st, p, E);
  void *mine[2] = {CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->out[0])}, *copies[1] = {NULL};
  bool staged;
  cj_status err = stage_inputs(p, mine, copies, &staged);
  if (!err && E.size > 1) {
    cj_meet *m;
    void *const *peers;
    err = meet(ctx, p, &E, mine, &m, &peers);
    if (!err) {
      char *out = mine[1];
      if (src < 0)
        memset(out, 0, (size_t)p->out_bytes[0]);
      else if (out != ((void *const *)peers[src])[0])
        memmove(out, ((void *const *)peers[src])[0], (size_t)p->out_bytes[0]);
      cj_meet_leave(ctx->args->launch, m);
    }
  } else if (!err) {
    char *out = mine[1];
    if (src < 0)
      memset(out, 0, (size_t)p->out_bytes[0]);
    else if (out != mine[0])
      memmove(out, mine[0], (size_t)p->out_bytes[0]);
  }
  free_copies(p, copies);
  return err;
}

/* ======================================================================== across processes */

/* A group whose members live in several processes (a multi-process client: args->xproc) runs in
 * two levels: the group's members in this process meet as usual (a meeting of their own), and
 * the first of them, the leader, exchanges data with the other processes through the runtime's
 * cross-process operations (MPI), computes the results of every member in this process, and
 * hands its status to them before they all leave. The generic way gathers every member's operand
 * into every process and computes locally what the in-process kernels compute; all_reduce with
 * a plain add/multiply/... body reduces the local members first and then reduces across
 * processes with one MPI all-reduce. */

static bool spans_processes(const cj_exec_ctx *ctx, const coll_exec *E) {
  const cj_xproc *x = ctx->args->xproc;
  if (!x || !E->found || E->size < 2) return false;
  for (int32_t s = 0; s < E->size; s++) {
    int32_t d = E->members[s];
    if (d < 0 || d >= x->ngrid || x->proc_of[d] != x->self) return true;
  }
  return false;
}

static int xred_of(int rop) {
  switch (rop) {
    case CJ_RED_ADD: return CJ_XRED_SUM;
    case CJ_RED_MUL: return CJ_XRED_PROD;
    case CJ_RED_MAX: return CJ_XRED_MAX;
    case CJ_RED_MIN: return CJ_XRED_MIN;
    case CJ_RED_AND: return CJ_XRED_AND;
    case CJ_RED_OR: return CJ_XRED_OR;
    case CJ_RED_XOR: return CJ_XRED_XOR;
  }
  return -1;
}

typedef struct xp_group {
  const coll_exec *E;
  int32_t nl;                         /* members in this process */
  int32_t lrank[CJ_COLL_MAX_DEVICES]; /* their ranks in the group, ascending */
  int32_t np;                         /* processes of the group, ascending */
  int32_t procs[CJ_COLL_MAX_DEVICES];
  int32_t pcount[CJ_COLL_MAX_DEVICES]; /* members per process */
  int32_t pidx[CJ_COLL_MAX_DEVICES];   /* member s: its index among its process's members */
  int32_t pof[CJ_COLL_MAX_DEVICES];    /* member s: index of its process in procs */
} xp_group;

/* Every member's operand k, gathered: all[s] points into *buf (freed by the caller). */
static CJ_MUST_USE cj_status xp_gather(const cj_xproc *x, const xp_group *G, int64_t bytes,
                           void *const *const *recs, uint32_t k, char **buf, const char **all) {
  *buf = NULL;
  const coll_exec *E = G->E;
  size_t b = (size_t)bytes;
  char *send = malloc(b * (size_t)G->nl + 1);
  size_t *rb = malloc(sizeof(size_t) * (size_t)G->np);
  size_t *off = malloc(sizeof(size_t) * (size_t)G->np);
  size_t total = 0;
  for (int32_t q = 0; rb && off && q < G->np; q++) {
    rb[q] = b * (size_t)G->pcount[q];
    off[q] = total;
    total += rb[q];
  }
  char *recv = malloc(total + 1);
  cj_status st = NULL;
  if (!send || !rb || !off || !recv) {
    st = cj_oom();
  } else {
    for (int32_t i = 0; i < G->nl; i++) memcpy(send + (size_t)i * b, recs[i][k], b);
    st = x->ops->allgatherv(x->ctx, E->gid, G->procs, G->np, send, b * (size_t)G->nl, recv, rb);
  }
  if (!st)
    for (int32_t s = 0; s < E->size; s++)
      all[s] = recv + off[G->pof[s]] + (size_t)G->pidx[s] * b;
  free(send);
  free(rb);
  free(off);
  if (st) free(recv);
  else *buf = recv;
  return st;
}

/* The leader's work: recs[i] is local member i's record (in[0..n), out[0..n)). */
static CJ_MUST_USE cj_status xp_lead(cj_exec_ctx *ctx, const cj_step *st, const coll_params *p,
                         const xp_group *G, void *const *const *recs) {
  const cj_xproc *x = ctx->args->xproc;
  const coll_exec *E = G->E;
  int32_t roots[CJ_COLL_MAX_OPERANDS];
  if (p->kind == K_COLLECTIVE_REDUCE || p->kind == K_BROADCAST)
    for (uint32_t k = 0; k < p->n; k++)
      CJ_RETURN_IF_ERROR(root_of(ctx, st, p, k, E->size, &roots[k]));
  const char **all = malloc(sizeof(char *) * (size_t)E->size);
  const char **src = malloc(sizeof(char *) * (size_t)E->size);
  char **dst = malloc(sizeof(char *) * (size_t)(G->nl + 1));
  cj_status err = all && src && dst ? NULL : cj_oom();
  for (uint32_t k = 0; k < p->n && !err; k++) {
    /* all_reduce with a body MPI knows: local reduction, then one all-reduce across processes */
    int xop = p->kind == K_ALL_REDUCE && p->red.comb ? xred_of(p->red.rop) : -1;
    bool alias = false; /* a local pre-reduction must not write over an operand */
    for (int32_t i = 0; i < G->nl && xop >= 0 && G->nl > 1; i++)
      alias = alias || overlaps(recs[i][k], (size_t)p->in_bytes[k], recs[0][p->n + k],
                                (size_t)p->out_bytes[k]);
    if (xop >= 0 && !alias && p->in_es[k] == p->out_es[k]) {
      char *out0 = recs[0][p->n + k];
      const char *in0 = recs[0][k];
      if (G->nl > 1) {
        for (int32_t i = 0; i < G->nl; i++) src[i] = recs[i][k];
        dst[0] = out0;
        red_job J = {&p->red, (int32_t)k, src, G->nl, dst, 1, p->in_es[k], p->out_es[k], 0,
                     p->nelems[k]};
        err = red_run(ctx, st, &J);
        in0 = out0;
      }
      bool done = false;
      if (!err && xop >= 0)
        err = x->ops->allreduce(x->ctx, E->gid, G->procs, G->np, in0, out0, p->nelems[k],
                                p->red.dt, xop, &done);
      if (!err && done) {
        for (int32_t i = 1; i < G->nl; i++)
          memcpy(recs[i][p->n + k], out0, (size_t)p->out_bytes[k]);
        continue;
      }
      if (err) break;
      /* not supported by MPI: fall through to gathering (the operands are unchanged unless the
       * local reduction wrote into an operand, which only a donated operand allows) */
    }
    char *buf;
    err = xp_gather(x, G, p->in_bytes[k], recs, k, &buf, all);
    if (err) break;
    int64_t n = p->nelems[k];
    switch (p->kind) {
      case K_ALL_REDUCE: {
        for (int32_t i = 0; i < G->nl; i++) dst[i] = recs[i][p->n + k];
        red_job J = {&p->red, (int32_t)k, all, E->size, dst, G->nl, p->in_es[k], p->out_es[k],
                     0, n};
        err = red_run(ctx, st, &J);
        break;
      }
      case K_COLLECTIVE_REDUCE:
        for (int32_t i = 0; i < G->nl && !err; i++) {
          char *out = recs[i][p->n + k];
          if (G->lrank[i] != roots[k]) {
            memset(out, 0, (size_t)p->out_bytes[k]);
            continue;
          }
          dst[0] = out;
          red_job J = {&p->red, (int32_t)k, all, E->size, dst, 1, p->in_es[k], p->out_es[k], 0,
                       n};
          err = red_run(ctx, st, &J);
        }
        break;
      case K_REDUCE_SCATTER: {
        int64_t blk = p->dim[k] * p->inner[k];
        for (int32_t i = 0; i < G->nl && !err; i++)
          for (int64_t o = 0; o < p->outer[k] && !err; o++) {
            for (int32_t s = 0; s < E->size; s++)
              src[s] = all[s] + ((o * E->size + G->lrank[i]) * blk) * p->in_es[k];
            dst[0] = (char *)recs[i][p->n + k] + o * blk * p->out_es[k];
            red_job J = {&p->red, (int32_t)k, src, E->size, dst, 1, p->in_es[k], p->out_es[k],
                         0, blk};
            err = red_run(ctx, st, &J);
          }
        break;
      }
      case K_ALL_GATHER: {
        size_t piece = (size_t)(p->dim[k] * p->inner[k] * p->in_es[k]);
        for (int32_t i = 0; i < G->nl; i++) {
          char *out = recs[i][p->n + k];
          for (int32_t s = 0; s < E->size; s++)
            for (int64_t o = 0; o < p->outer[k]; o++)
              memcpy(out + ((size_t)o * (size_t)E->size + (size_t)s) * piece,
                     all[s] + (size_t)o * piece, piece);
        }
        break;
      }
      case K_ALL_TO_ALL:
        for (int32_t i = 0; i < G->nl; i++)
          for (int32_t s = 0; s < E->size; s++) {
            cj_strided c = p->parts[k];
            c.soff = G->lrank[i] * p->src_step[k];
            c.doff = s * p->dst_step[k];
            cj_strided_run(&c, recs[i][p->n + k], all[s]);
          }
        break;
      case K_BROADCAST:
        for (int32_t i = 0; i < G->nl; i++)
          memcpy(recs[i][p->n + k], all[roots[k]], (size_t)p->out_bytes[k]);
        break;
      case K_PERMUTE:
        for (int32_t i = 0; i < G->nl; i++) {
          int64_t from = -1;
          for (int64_t j = 0; j < p->npairs; j++)
            if (p->pairs[2 * j + 1] == G->lrank[i]) from = p->pairs[2 * j];
          char *out = recs[i][p->n + k];
          if (from < 0 || from >= E->size)
            memset(out, 0, (size_t)p->out_bytes[k]);
          else
            memcpy(out, all[from], (size_t)p->out_bytes[k]);
        }
        break;
    }
    free(buf);
  }
  free(all);
  free(src);
  free(dst);
  return err;
}

static CJ_MUST_USE cj_status xp_run(cj_exec_ctx *ctx, const cj_step *st, const coll_params *p,
                        const coll_exec *E) {
  const cj_xproc *x = ctx->args->xproc;
  xp_group *G = malloc(sizeof *G);
  if (!G) return cj_oom();
  G->E = E;
  G->nl = 0;
  G->np = 0;
  int32_t me = -1;
  int32_t lmem[CJ_COLL_MAX_DEVICES];
  for (int32_t s = 0; s < E->size; s++) {
    int32_t d = E->members[s];
    int32_t proc = d >= 0 && d < x->ngrid ? x->proc_of[d] : -1;
    if (proc < 0) {
      free(G);
      return cj_internal("%s: member %d of the group is outside the execution's grid", p->what,
                         d);
    }
    if (proc == x->self) {
      if (s == E->rank) me = G->nl;
      lmem[G->nl] = d;
      G->lrank[G->nl++] = s;
    }
    int32_t q = 0;
    while (q < G->np && G->procs[q] < proc) q++;
    if (q == G->np || G->procs[q] != proc) {
      memmove(G->procs + q + 1, G->procs + q, sizeof(int32_t) * (size_t)(G->np - q));
      G->np++;
      G->procs[q] = proc;
    }
  }
  for (int32_t q = 0; q < G->np; q++) G->pcount[q] = 0;
  for (int32_t s = 0; s < E->size; s++) {
    int32_t proc = x->proc_of[E->members[s]], q = 0;
    while (G->procs[q] != proc) q++;
    G->pof[s] = q;
    G->pidx[s] = G->pcount[q]++;
  }
  /* the record each local member publishes: operands, results, and its status slot */
  cj_status mystatus = NULL;
  void *mine[2 * CJ_COLL_MAX_OPERANDS + 1];
  for (uint32_t k = 0; k < p->n; k++) {
    mine[k] = CJ_PTR(ctx, st->in[k]);
    mine[p->n + k] = CJ_PTR(ctx, st->out[k]);
  }
  mine[2 * p->n] = &mystatus;
  cj_meet *m = NULL;
  void *const *peers = NULL;
  void *self_rec[1] = {mine};
  cj_status err = NULL;
  if (G->nl > 1) {
    cj_meet_req req = {p->key, (int64_t)(E->gid ^ 0x5851f42d4c957f2dull), G->nl, me, lmem,
                       p->check, mine, p->what};
    err = cj_meet_join(ctx->args->launch, &req, &m, &peers);
  } else {
    peers = self_rec;
  }
  if (!err && me == 0) {
    cj_status r = xp_lead(ctx, st, p, G, (void *const *const *)peers);
    if (r)
      r = cj_status_annotate(r, "%s: across %d processes", p->what, G->np);
    for (int32_t i = 1; i < G->nl; i++)
      *(cj_status *)((void *const *)peers[i])[2 * p->n] = r ? cj_status_copy(r) : NULL;
    mystatus = r;
  }
  if (m) cj_meet_leave(ctx->args->launch, m);
  free(G);
  return err ? err : mystatus;
}

/* ======================================================================== lowering */

static CJ_MUST_USE cj_status check_tensors(cj_op *op, uint32_t from, uint32_t n) {
  for (uint32_t k = from; k < n; k++)
    if (!cj_type_is_static(op->operands[k]->type))
      return cj_op_error(op, CJ_UNIMPLEMENTED, "operand %u must be a static tensor", k);
  return NULL;
}

/* all_reduce, collective_reduce (reductions to every member / to the root) */
static CJ_MUST_USE cj_status lower_reduction(cj_lw *L, cj_op *op, coll_kind kind) {
  bool dyn = kind == K_COLLECTIVE_REDUCE && cj_op_attr(op, "has_dynamic_root") != NULL;
  uint32_t n = dyn ? op->nopnds - 1 : op->nopnds;
  if (op->nresults != n) return cj_op_error(op, CJ_INVALID_ARGUMENT, "operand and result counts differ");
  CJ_RETURN_IF_ERROR(check_tensors(op, 0, op->nopnds));
  coll_params *p;
  CJ_RETURN_IF_ERROR(params_new(L, op, kind, n, &p));
  p->dynamic_root = dyn;
  CJ_RETURN_IF_ERROR(cj_coll_read_groups(L, op, kind == K_ALL_REDUCE ? CG_GATHER_LIKE : CG_REPLICA_OR_PARTITION,
                                      &p->g));
  int32_t *ins = cj_lw_alloc(L, sizeof(int32_t) * (op->nopnds + 3));
  int32_t *outs = cj_lw_alloc(L, sizeof(int32_t) * (n ? n : 1));
  cj_dtype *dts = cj_lw_alloc(L, sizeof(cj_dtype) * (op->nopnds ? op->nopnds : 1));
  if (!ins || !outs || !dts) return cj_oom();
  int32_t start = cj_lw_advance(L);
  CJ_RETURN_IF_ERROR(data_slots(L, op, p, op->nopnds, ins, outs, dts, start));
  int32_t extra[3];
  uint32_t nextra = 0;
  CJ_RETURN_IF_ERROR(red_lower(L, op, n, dts, &p->red, extra, &nextra, start));
  for (uint32_t i = 0; i < nextra; i++) ins[op->nopnds + i] = extra[i];
  p->red.acc_slot = op->nopnds;
  p->red.x_slot = op->nopnds + 1;
  p->red.ret_slot = op->nopnds + 2;
  double work = 0;
  for (uint32_t k = 0; k < n; k++) work += (double)p->nelems[k];
  cj_lw_add_cost(L, work, 0);
  if (!cj_lw_emit(L, op, kind == K_ALL_REDUCE ? k_all_reduce : k_collective_reduce, p,
                  op->nopnds + nextra, ins, n, outs))
    return cj_oom();
  if (nextra) cj_lw_extend_region(L, start);
  return NULL;
}

cj_status cj_lower_all_reduce(cj_lw *L, cj_op *op) { return lower_reduction(L, op, K_ALL_REDUCE); }
cj_status cj_lower_collective_reduce(cj_lw *L, cj_op *op) {
  return lower_reduction(L, op, K_COLLECTIVE_REDUCE);
}

/* [outer][dim][inner] of a shape around dimension d */
static void split_at(const cj_type *t, int64_t d, int64_t *outer, int64_t *dim, int64_t *inner) {
  *outer = 1;
  *inner = 1;
  for (int32_t i = 0; i < t->rank; i++) {
    if (i < d) *outer *= t->dims[i];
    if (i > d) *inner *= t->dims[i];
  }
  *dim = t->dims[d];
}

cj_status cj_lower_reduce_scatter(cj_lw *L, cj_op *op) {
  CJ_RETURN_IF_ERROR(check_tensors(op, 0, 1));
  coll_params *p;
  CJ_RETURN_IF_ERROR(params_new(L, op, K_REDUCE_SCATTER, 1, &p));
  CJ_RETURN_IF_ERROR(cj_coll_read_groups(L, op, CG_GATHER_LIKE, &p->g));
  int64_t d;
  if (!cj_op_get_i64(op, "scatter_dimension", &d))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "no scatter_dimension");
  const cj_type *x = op->operands[0]->type, *r = op->results[0].type;
  if (d < 0 || d >= x->rank || !cj_type_is_static(r) || r->rank != x->rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad scatter_dimension or shapes");
  p->outer = cj_lw_alloc(L, sizeof(int64_t));
  p->dim = cj_lw_alloc(L, sizeof(int64_t));
  p->inner = cj_lw_alloc(L, sizeof(int64_t));
  if (!p->outer || !p->dim || !p->inner) return cj_oom();
  split_at(r, d, p->outer, p->dim, p->inner);
  if (r->dims[d] <= 0 || x->dims[d] % r->dims[d])
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the scatter dimension does not divide");
  p->dim_ratio = x->dims[d] / r->dims[d];
  int32_t ins[4], outs[1];
  cj_dtype dts[1];
  int32_t start = cj_lw_advance(L);
  CJ_RETURN_IF_ERROR(data_slots(L, op, p, 1, ins, outs, dts, start));
  int32_t extra[3];
  uint32_t nextra = 0;
  CJ_RETURN_IF_ERROR(red_lower(L, op, 1, dts, &p->red, extra, &nextra, start));
  for (uint32_t i = 0; i < nextra; i++) ins[1 + i] = extra[i];
  p->red.acc_slot = 1;
  p->red.x_slot = 2;
  p->red.ret_slot = 3;
  cj_lw_add_cost(L, (double)p->nelems[0], 0);
  if (!cj_lw_emit(L, op, k_reduce_scatter, p, 1 + nextra, ins, 1, outs)) return cj_oom();
  if (nextra) cj_lw_extend_region(L, start);
  return NULL;
}

cj_status cj_lower_all_gather(cj_lw *L, cj_op *op) {
  uint32_t n = op->nopnds;
  if (op->nresults != n) return cj_op_error(op, CJ_INVALID_ARGUMENT, "operand and result counts differ");
  CJ_RETURN_IF_ERROR(check_tensors(op, 0, n));
  coll_params *p;
  CJ_RETURN_IF_ERROR(params_new(L, op, K_ALL_GATHER, n, &p));
  CJ_RETURN_IF_ERROR(cj_coll_read_groups(L, op, CG_GATHER_LIKE, &p->g));
  int64_t d;
  if (!cj_op_get_i64(op, "all_gather_dim", &d))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "no all_gather_dim");
  size_t m = n ? n : 1;
  p->outer = cj_lw_alloc(L, sizeof(int64_t) * m);
  p->dim = cj_lw_alloc(L, sizeof(int64_t) * m);
  p->inner = cj_lw_alloc(L, sizeof(int64_t) * m);
  int32_t *ins = cj_lw_alloc(L, sizeof(int32_t) * m), *outs = cj_lw_alloc(L, sizeof(int32_t) * m);
  if (!p->outer || !p->dim || !p->inner || !ins || !outs) return cj_oom();
  for (uint32_t k = 0; k < n; k++) {
    const cj_type *x = op->operands[k]->type;
    if (d < 0 || d >= x->rank) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad all_gather_dim");
    split_at(x, d, &p->outer[k], &p->dim[k], &p->inner[k]);
  }
  CJ_RETURN_IF_ERROR(data_slots(L, op, p, n, ins, outs, NULL, -1));
  if (!cj_lw_emit(L, op, k_all_gather, p, n, ins, n, outs)) return cj_oom();
  return NULL;
}

cj_status cj_lower_all_to_all(cj_lw *L, cj_op *op) {
  uint32_t n = op->nopnds;
  if (op->nresults != n) return cj_op_error(op, CJ_INVALID_ARGUMENT, "operand and result counts differ");
  CJ_RETURN_IF_ERROR(check_tensors(op, 0, n));
  coll_params *p;
  CJ_RETURN_IF_ERROR(params_new(L, op, K_ALL_TO_ALL, n, &p));
  CJ_RETURN_IF_ERROR(cj_coll_read_groups(L, op, CG_REPLICA_OR_PARTITION, &p->g));
  int64_t sd, cd, count;
  if (!cj_op_get_i64(op, "split_dimension", &sd) || !cj_op_get_i64(op, "concat_dimension", &cd) ||
      !cj_op_get_i64(op, "split_count", &count) || count <= 0)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad split/concat attributes");
  p->dim_ratio = count;
  size_t m = n ? n : 1;
  p->parts = cj_lw_alloc(L, sizeof(cj_strided) * m);
  p->src_step = cj_lw_alloc(L, sizeof(int64_t) * m);
  p->dst_step = cj_lw_alloc(L, sizeof(int64_t) * m);
  int32_t *ins = cj_lw_alloc(L, sizeof(int32_t) * m), *outs = cj_lw_alloc(L, sizeof(int32_t) * m);
  if (!p->parts || !p->src_step || !p->dst_step || !ins || !outs) return cj_oom();
  for (uint32_t k = 0; k < n; k++) {
    const cj_type *x = op->operands[k]->type, *r = op->results[k].type;
    if (sd < 0 || sd >= x->rank || cd < 0 || cd >= x->rank || !cj_type_is_static(r) ||
        r->rank != x->rank || x->dims[sd] % count)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad all_to_all shapes");
    if (x->rank > CJ_MAX_RANK) return cj_op_error(op, CJ_UNIMPLEMENTED, "rank above %d", CJ_MAX_RANK);
    int es = cj_dtype_bytes(x->dtype);
    int64_t xs[CJ_MAX_RANK], rs[CJ_MAX_RANK];
    cj_row_strides(x->rank, x->dims, xs);
    cj_row_strides(r->rank, r->dims, rs);
    cj_strided *c = &p->parts[k];
    memset(c, 0, sizeof *c);
    c->rank = x->rank;
    c->esize = es;
    for (int32_t i = 0; i < x->rank; i++) {
      c->dims[i] = i == sd ? x->dims[i] / count : x->dims[i];
      c->sstride[i] = xs[i] * es;
      c->dstride[i] = rs[i] * es;
    }
    /* part q starts at q * (dim/count) along the split dimension of the operand; the part from
     * sender s lands at s * part extent along the concat dimension of the result */
    p->src_step[k] = (x->dims[sd] / count) * xs[sd] * es;
    p->dst_step[k] = c->dims[cd] * rs[cd] * es;
    cj_strided_simplify(c);
  }
  CJ_RETURN_IF_ERROR(data_slots(L, op, p, n, ins, outs, NULL, -1));
  if (!cj_lw_emit(L, op, k_all_to_all, p, n, ins, n, outs)) return cj_oom();
  return NULL;
}

cj_status cj_lower_collective_broadcast(cj_lw *L, cj_op *op) {
  bool dyn = cj_op_attr(op, "has_dynamic_root") != NULL;
  uint32_t n = dyn ? op->nopnds - 1 : op->nopnds;
  if (op->nresults != n) return cj_op_error(op, CJ_INVALID_ARGUMENT, "operand and result counts differ");
  CJ_RETURN_IF_ERROR(check_tensors(op, 0, op->nopnds));
  coll_params *p;
  CJ_RETURN_IF_ERROR(params_new(L, op, K_BROADCAST, n, &p));
  p->dynamic_root = dyn;
  CJ_RETURN_IF_ERROR(cj_coll_read_groups(L, op, CG_REPLICA_OR_PARTITION, &p->g));
  int32_t *ins = cj_lw_alloc(L, sizeof(int32_t) * (op->nopnds ? op->nopnds : 1));
  int32_t *outs = cj_lw_alloc(L, sizeof(int32_t) * (n ? n : 1));
  if (!ins || !outs) return cj_oom();
  CJ_RETURN_IF_ERROR(data_slots(L, op, p, op->nopnds, ins, outs, NULL, -1));
  if (!cj_lw_emit(L, op, k_collective_broadcast, p, op->nopnds, ins, n, outs)) return cj_oom();
  return NULL;
}

cj_status cj_lower_collective_permute(cj_lw *L, cj_op *op) {
  CJ_RETURN_IF_ERROR(check_tensors(op, 0, 1));
  coll_params *p;
  CJ_RETURN_IF_ERROR(params_new(L, op, K_PERMUTE, 1, &p));
  p->g.mode = CM_AXIS;
  p->g.axis_mode = cj_coll_channel(op) <= 0 ? CM_REPLICA : CM_PARTITION;
  const cj_attr *a = cj_op_attr(op, "source_target_pairs");
  if (!a || a->kind != CJ_ATTR_DENSE || a->dense.type->rank != 2 || a->dense.type->dims[1] != 2)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "source_target_pairs must be an N x 2 tensor");
  p->npairs = a->dense.type->dims[0];
  int64_t *pairs = cj_lw_alloc(L, sizeof(int64_t) * (size_t)(2 * p->npairs + 1));
  if (!pairs) return cj_oom();
  for (int64_t i = 0; i < 2 * p->npairs; i++) pairs[i] = cj_dense_get_i64(a, i);
  p->pairs = pairs;
  int32_t ins[1], outs[1];
  CJ_RETURN_IF_ERROR(data_slots(L, op, p, 1, ins, outs, NULL, -1));
  if (!cj_lw_emit(L, op, k_collective_permute, p, 1, ins, 1, outs)) return cj_oom();
  return NULL;
}
