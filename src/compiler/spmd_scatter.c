/* cjrt: elementwise work after an all_reduce done once per shard (reduce_scatter + all_gather).
 *
 * A data-parallel training step all-reduces each gradient over the devices and then runs the
 * optimizer's update (Adam: a dozen elementwise ops over the gradient, the parameter and two
 * moment buffers, all replicated) on every device: N devices each do the whole update, where one
 * device of twice the cores would do it once. When the elementwise ops that follow an all_reduce
 * over all N devices only combine its result with replicated values of the same shape (and
 * scalars), the same values come out of
 *     %s = reduce_scatter(%x) over dimension 0    (the device's 1/N of the summed rows)
 *     the elementwise ops on the device's rows     (replicated operands sliced to those rows)
 *     all_gather(%r) over dimension 0              (for each value used outside the ops)
 * because an elementwise op computes each element from the same elements of its operands; the
 * device then does 1/N of the update and the reduction, and the two collectives move the same
 * bytes as the all_reduce. "Replicated" is proven, not assumed: a value is replicated when it is
 * a constant, the result of an all_reduce or all_gather over one group of every device, an
 * argument the partitioner reported as {replicated}, or a pure op (elementwise, broadcast,
 * reshape, transpose, slice, concatenate, iota) of replicated values. Anything else stops the
 * region: the value is gathered for it.
 *
 * Only programs partitioned by cjrt (mhlo.spmd_parameters_shardings present), with one replica,
 * N partitions and collectives whose single group is 0..N-1 in order, are rewritten, and only
 * regions worth it: at least 4 elementwise ops, at least two per value gathered, at least 16K
 * elements, the first dimension divisible by N.
 */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

enum { MIN_EW_OPS = 4, MIN_ELEMENTS = 1 << 14 };

typedef struct scat {
  cj_module *m;
  cj_block *body;
  int64_t n;           /* devices */
  uint32_t nv;         /* value ids */
  uint8_t *repl;       /* [nv] replicated */
  uint8_t *nested_use; /* [nv] used inside a nested region */
  int32_t *region;     /* [nv] region number + 1 of the value, 0 = none */
  uint8_t *done;       /* [nv] all_reduce results already tried as a seed */
} scat;

/* The op's only group when it is 0..n-1 in order (use_global_device_ids, one replica). */
static bool full_group(const cj_op *op, int64_t n) {
  if (!cj_op_attr(op, "use_global_device_ids")) return false;
  const cj_attr *g = cj_op_attr(op, "replica_groups");
  if (!g || g->kind != CJ_ATTR_DENSE || g->dense.splat || !g->dense.type) return false;
  const cj_type *t = g->dense.type;
  if (t->rank != 2 || t->dims[0] != 1 || t->dims[1] != n || t->dtype != CJ_S64) return false;
  const int64_t *ids = g->dense.data;
  for (int64_t i = 0; i < n; i++)
    if (ids[i] != i) return false;
  return true;
}

static bool is_ew(const cj_op *op) {
  return (cj_op_info_get(op->kind)->flags & CJ_OPF_ELEMENTWISE) && op->nregions == 0 &&
         op->nresults == 1;
}

/* ops that compute the same on every device from the same operands */
static bool pure_data_op(const cj_op *op) {
  if (op->nregions) return false;
  if (is_ew(op)) return true;
  switch (op->kind) {
    case CJ_OP_BROADCAST_IN_DIM:
    case CJ_OP_RESHAPE:
    case CJ_OP_TRANSPOSE:
    case CJ_OP_SLICE:
    case CJ_OP_CONCATENATE:
    case CJ_OP_IOTA:
      return true;
    default:
      return false;
  }
}

static bool seed_ok(const scat *S, const cj_op *op) {
  if (op->kind != CJ_OP_ALL_REDUCE || op->nopnds != 1 || op->nresults != 1) return false;
  const cj_type *t = op->results[0].type;
  return t && t->kind == CJ_TYPE_TENSOR && t->rank >= 1 && t->num_elements >= MIN_ELEMENTS &&
         t->dims[0] % S->n == 0 && full_group(op, S->n) && !S->done[op->results[0].id];
}

static bool same_dims(const cj_type *a, const cj_type *b) {
  if (!a || !b || a->kind != CJ_TYPE_TENSOR || b->kind != CJ_TYPE_TENSOR || a->rank != b->rank)
    return false;
  for (int32_t d = 0; d < a->rank; d++)
    if (a->dims[d] != b->dims[d]) return false;
  return true;
}

static cj_status mark_nested(cj_op *op, void *ctx) {
  scat *S = ctx;
  for (uint32_t i = 0; i < op->nopnds; i++)
    if (op->operands[i]->id < S->nv) S->nested_use[op->operands[i]->id] = 1;
  return NULL;
}

static bool is_replicated_arg(const cj_attr *ps, uint32_t i) {
  if (!ps || ps->kind != CJ_ATTR_ARRAY || (int32_t)i >= ps->arr.n) return false;
  const cj_attr *s = ps->arr.items[i];
  return s && s->kind == CJ_ATTR_STRING && strcmp(s->str.s, "{replicated}") == 0;
}

static CJ_MUST_USE cj_status analyze(scat *S) {
  cj_block *b = S->body;
  const cj_attr *ps = cj_module_attr(S->m, "mhlo.spmd_parameters_shardings");
  for (uint32_t i = 0; i < b->nargs; i++)
    if (is_replicated_arg(ps, i)) S->repl[b->args[i].id] = 1;
  for (cj_op *op = b->first; op; op = op->next) {
    for (uint32_t r = 0; r < op->nregions; r++)
      for (cj_block *nb = op->regions[r].first; nb; nb = nb->next)
        CJ_RETURN_IF_ERROR(cj_walk_block(nb, mark_nested, S));
    bool rep = false;
    if (op->kind == CJ_OP_CONSTANT)
      rep = true;
    else if ((op->kind == CJ_OP_ALL_REDUCE || op->kind == CJ_OP_ALL_GATHER) && full_group(op, S->n))
      rep = true;
    else if (pure_data_op(op)) {
      rep = true;
      for (uint32_t i = 0; i < op->nopnds && rep; i++) rep = S->repl[op->operands[i]->id];
    }
    if (rep)
      for (uint32_t j = 0; j < op->nresults; j++) S->repl[op->results[j].id] = 1;
  }
  return NULL;
}

/* One region: the ops (in program order), the seeds, the values gathered. */
typedef struct region {
  int32_t tag;       /* S->region value */
  const cj_type *full;
  cj_op **ops;       /* elementwise ops, program order */
  uint32_t nops;
  cj_op **seeds;     /* all_reduce ops */
  uint32_t nseeds;
} region;

/* Whether elementwise `op` can join region R: one operand in it, the others in it, scalars, or
 * replicated values of the full shape (or seeds, which join with it: *pull). */
static bool can_join(const scat *S, const region *R, const cj_op *op, cj_op **pull, uint32_t *npull) {
  if (!is_ew(op) || !same_dims(op->results[0].type, R->full)) return false;
  bool any = false;
  *npull = 0;
  for (uint32_t i = 0; i < op->nopnds; i++) {
    cj_value *v = op->operands[i];
    if (S->region[v->id] == R->tag) {
      any = true;
      continue;
    }
    if (S->region[v->id]) return false; /* another region's value (reshaped already) */
    if (v->type->rank == 0 && op->kind == CJ_OP_CLAMP) continue;
    if (!same_dims(v->type, R->full)) return false;
    if (v->def && seed_ok(S, v->def)) {
      pull[(*npull)++] = v->def;
      any = true;
      continue;
    }
    if (!S->repl[v->id]) return false;
  }
  return any;
}

static bool grow(scat *S, region *R, cj_op *seed) {
  R->seeds[R->nseeds++] = seed;
  S->region[seed->results[0].id] = R->tag;
  S->done[seed->results[0].id] = 1;
  cj_op *pull[8];
  for (cj_op *op = seed->next; op; op = op->next) {
    uint32_t np = 0;
    if (op->nopnds > 8 || !can_join(S, R, op, pull, &np)) continue;
    for (uint32_t k = 0; k < np; k++)
      if (!S->done[pull[k]->results[0].id]) {
        R->seeds[R->nseeds++] = pull[k];
        S->region[pull[k]->results[0].id] = R->tag;
        S->done[pull[k]->results[0].id] = 1;
      }
    R->ops[R->nops++] = op;
    S->region[op->results[0].id] = R->tag;
  }
  return true;
}

/* Whether op is one of region R's elementwise ops. */
static bool in_region(const scat *S, const region *R, const cj_op *op) {
  return op->nresults == 1 && is_ew(op) && op->results[0].id < S->nv &&
         S->region[op->results[0].id] == R->tag;
}

/* Whether value v of the region is used outside it (a later op not in it, a nested region). */
static bool escapes(const scat *S, const region *R, const cj_value *v) {
  if (S->nested_use[v->id]) return true;
  for (cj_op *op = v->def->next; op; op = op->next) {
    if (in_region(S, R, op)) continue;
    for (uint32_t i = 0; i < op->nopnds; i++)
      if (op->operands[i] == v) return true;
  }
  return false;
}

/* Values the pass creates get the id past the analysed ones (nothing known about them). */
static cj_op *fresh(const scat *S, cj_op *op) {
  if (op)
    for (uint32_t j = 0; j < op->nresults; j++) op->results[j].id = S->nv;
  return op;
}

static cj_value *const_s64(const scat *S, cj_op *before, int64_t v) {
  cj_module *m = S->m;
  const cj_type *sc = cj_type_tensor_of(m, CJ_S64, 0, NULL);
  cj_op *c = sc ? fresh(S, cj_build_op(m, before, before, CJ_OP_CONSTANT, 0, NULL, sc)) : NULL;
  const cj_attr *a = c ? cj_attr_dense(m, sc, &v, sizeof v, false) : NULL;
  if (!a || cj_op_set_attr(m, c, "value", a)) return NULL;
  return &c->results[0];
}

/* Copies the collective attributes of `from` onto `to`. */
static CJ_MUST_USE cj_status copy_group_attrs(cj_module *m, const cj_op *from, cj_op *to) {
  static const char *const names[] = {"replica_groups", "channel_handle", "use_global_device_ids"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const cj_attr *a = cj_op_attr(from, names[i]);
    if (a) CJ_RETURN_IF_ERROR(cj_op_set_attr(m, to, names[i], a));
  }
  return NULL;
}

typedef struct rewrite {
  cj_value *row0;        /* this device's first row (s64 scalar) */
  cj_value *zero;        /* s64 0 */
  cj_value **from, **to; /* replicated value -> its rows (in this region) */
  uint32_t nmap, cap;
} rewrite;

static const cj_type *shard_type(cj_module *m, const cj_type *t, int64_t n) {
  int64_t dims[64];
  if (t->rank > 64) return NULL;
  for (int32_t d = 0; d < t->rank; d++) dims[d] = t->dims[d];
  dims[0] /= n;
  return cj_type_tensor(m, t->elem, t->rank, dims, NULL, t->encoding);
}

/* This device's rows of replicated value v, sliced before `before` (once per value). */
static CJ_MUST_USE cj_status rows_of(scat *S, rewrite *W, cj_op *before, cj_value *v, cj_value **out) {
  for (uint32_t i = 0; i < W->nmap; i++)
    if (W->from[i] == v) {
      *out = W->to[i];
      return NULL;
    }
  cj_module *m = S->m;
  const cj_type *st = shard_type(m, v->type, S->n);
  int32_t rank = v->type->rank;
  cj_value *opnds[65];
  opnds[0] = v;
  opnds[1] = W->row0;
  for (int32_t d = 1; d < rank; d++) opnds[1 + d] = W->zero;
  cj_op *ds = st ? fresh(S, cj_build_op(m, before, before, CJ_OP_DYNAMIC_SLICE, (uint32_t)(1 + rank),
                                        opnds, st))
                 : NULL;
  if (!ds) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, ds, "slice_sizes", cj_attr_i64_array(m, rank, st->dims)));
  if (W->nmap == W->cap) {
    uint32_t cap = W->cap ? 2 * W->cap : 16;
    cj_value **f = realloc(W->from, sizeof *f * cap), **t = f ? realloc(W->to, sizeof *t * cap) : NULL;
    if (f) W->from = f;
    if (!t) return cj_oom();
    W->to = t;
    W->cap = cap;
  }
  W->from[W->nmap] = v;
  W->to[W->nmap++] = &ds->results[0];
  *out = &ds->results[0];
  return NULL;
}

/* The full value of region value v for its uses outside the region: an all_gather after it. */
static CJ_MUST_USE cj_status gather_for_outside(scat *S, const region *R, cj_value *v,
                                                const cj_type *full) {
  cj_module *m = S->m;
  cj_op *at = v->def->next;
  cj_op *g = fresh(S, cj_build_op(m, at, v->def, CJ_OP_ALL_GATHER, 1, &v, full));
  const cj_attr *dim = cj_attr_int(m, 0, cj_type_elem(m, CJ_S64));
  if (!g || !dim) return cj_oom();
  CJ_RETURN_IF_ERROR(cj_op_set_attr(m, g, "all_gather_dim", dim));
  CJ_RETURN_IF_ERROR(copy_group_attrs(m, R->seeds[0], g));
  /* every use after the gather that is not a region op reads the gathered value */
  for (cj_op *op = g->next; op; op = op->next)
    if (!in_region(S, R, op)) cj_replace_uses_in_op(op, v, &g->results[0]);
  return NULL;
}

static CJ_MUST_USE cj_status apply(scat *S, region *R, rewrite *W) {
  cj_module *m = S->m;
  /* which region values are used outside, decided before any operand changes */
  uint32_t nvals = R->nseeds + R->nops;
  cj_value **outside = malloc(sizeof *outside * nvals);
  const cj_type **fulls = malloc(sizeof *fulls * nvals);
  if (!outside || !fulls) {
    free(outside);
    free(fulls);
    return cj_oom();
  }
  uint32_t nout = 0;
  for (uint32_t i = 0; i < nvals; i++) {
    cj_value *v = i < R->nseeds ? &R->seeds[i]->results[0] : &R->ops[i - R->nseeds]->results[0];
    if (escapes(S, R, v)) {
      fulls[nout] = v->type;
      outside[nout++] = v;
    }
  }
  cj_status st = NULL;
  /* the seeds become reduce_scatters in place (their combiner region stays) */
  for (uint32_t i = 0; i < R->nseeds && !st; i++) {
    cj_op *ar = R->seeds[i];
    ar->kind = CJ_OP_REDUCE_SCATTER;
    ar->name = cj_intern(m, "stablehlo.reduce_scatter", strlen("stablehlo.reduce_scatter"));
    const cj_attr *dim = cj_attr_int(m, 0, cj_type_elem(m, CJ_S64));
    const cj_type *st_t = shard_type(m, ar->results[0].type, S->n);
    if (!ar->name || !dim || !st_t) st = cj_oom();
    if (!st) st = cj_op_set_attr(m, ar, "scatter_dimension", dim);
    if (!st) ar->results[0].type = st_t;
  }
  /* the elementwise ops read rows: replicated operands are sliced, results retyped */
  for (uint32_t k = 0; k < R->nops && !st; k++) {
    cj_op *op = R->ops[k];
    for (uint32_t i = 0; i < op->nopnds && !st; i++) {
      cj_value *v = op->operands[i];
      if (S->region[v->id] == R->tag || v->type->rank == 0) continue;
      cj_value *rows = NULL;
      st = rows_of(S, W, op, v, &rows);
      if (!st) op->operands[i] = rows;
    }
    const cj_type *t = st ? NULL : shard_type(m, op->results[0].type, S->n);
    if (!st && !t) st = cj_oom();
    if (!st) op->results[0].type = t;
  }
  for (uint32_t i = 0; i < nout && !st; i++) st = gather_for_outside(S, R, outside[i], fulls[i]);
  free(outside);
  free(fulls);
  return st;
}

/* Region R's worth: enough elementwise work per value gathered. */
static bool worth_it(const scat *S, const region *R) {
  uint32_t nout = 0;
  for (uint32_t i = 0; i < R->nseeds + R->nops; i++) {
    const cj_value *v = i < R->nseeds ? &R->seeds[i]->results[0] : &R->ops[i - R->nseeds]->results[0];
    nout += escapes(S, R, v);
  }
  return R->nops >= MIN_EW_OPS && R->nops >= 2 * nout;
}

static CJ_MUST_USE cj_status run(scat *S) {
  CJ_RETURN_IF_ERROR(analyze(S));
  cj_block *b = S->body;
  cj_op *anchor = b->first; /* the prologue the pass adds goes before the original first op */
  cj_value *pid64 = NULL, *zero = NULL;
  region R = {0};
  R.ops = malloc(sizeof(cj_op *) * (b->nops + 1));
  R.seeds = malloc(sizeof(cj_op *) * (b->nops + 1));
  cj_status st = R.ops && R.seeds ? NULL : cj_oom();
  int32_t tag = 0;
  for (cj_op *op = b->first; op && !st; op = op->next) {
    if (!seed_ok(S, op)) continue;
    R.tag = ++tag;
    R.full = op->results[0].type;
    R.nops = R.nseeds = 0;
    grow(S, &R, op);
    if (!worth_it(S, &R)) {
      /* give the values back: another seed may still use them as replicated operands */
      for (uint32_t i = 0; i < R.nseeds; i++) S->region[R.seeds[i]->results[0].id] = 0;
      for (uint32_t i = 0; i < R.nops; i++) S->region[R.ops[i]->results[0].id] = 0;
      continue;
    }
    if (!pid64) { /* partition_id as s64, and a zero index */
      cj_op *pid = fresh(S, cj_build_op(S->m, anchor, anchor, CJ_OP_PARTITION_ID, 0, NULL,
                                        cj_type_tensor_of(S->m, CJ_U32, 0, NULL)));
      cj_value *pv = pid ? &pid->results[0] : NULL;
      cj_op *cv = pv ? fresh(S, cj_build_op(S->m, anchor, anchor, CJ_OP_CONVERT, 1, &pv,
                                            cj_type_tensor_of(S->m, CJ_S64, 0, NULL)))
                     : NULL;
      zero = cv ? const_s64(S, anchor, 0) : NULL;
      if (!zero) {
        st = cj_oom();
        break;
      }
      pid64 = &cv->results[0];
    }
    /* this device's first row in this region's shape: partition_id * rows per device */
    cj_value *mo[2] = {pid64, const_s64(S, anchor, R.full->dims[0] / S->n)};
    cj_op *mul = mo[1] ? fresh(S, cj_build_op(S->m, anchor, anchor, CJ_OP_MULTIPLY, 2, mo,
                                              cj_type_tensor_of(S->m, CJ_S64, 0, NULL)))
                       : NULL;
    if (!mul) {
      st = cj_oom();
      break;
    }
    rewrite W = {&mul->results[0], zero, NULL, NULL, 0, 0};
    st = apply(S, &R, &W);
    free(W.from);
    free(W.to);
  }
  free(R.ops);
  free(R.seeds);
  return st;
}

static int64_t module_int(const cj_module *m, const char *name, int64_t dflt) {
  const cj_attr *a = cj_module_attr(m, name);
  return a && a->kind == CJ_ATTR_INT ? a->i.v : dflt;
}

cj_status cj_pass_spmd_scatter(cj_module *m, cj_op *func) {
  if (!cj_module_attr(m, "mhlo.spmd_parameters_shardings")) return NULL;
  int64_t n = module_int(m, "mhlo.num_partitions", 1);
  if (n < 2 || module_int(m, "mhlo.num_replicas", 1) != 1) return NULL;
  cj_block *body = cj_func_body(func);
  if (!body) return NULL;
  scat S = {m, body, n, 0, NULL, NULL, NULL, NULL};
  cj_block_number_values(body, &S.nv);
  S.repl = calloc(S.nv + 1, 1);
  S.nested_use = calloc(S.nv + 1, 1);
  S.region = calloc(S.nv + 1, sizeof(int32_t));
  S.done = calloc(S.nv + 1, 1);
  cj_status st = S.repl && S.nested_use && S.region && S.done ? run(&S) : cj_oom();
  free(S.repl);
  free(S.nested_use);
  free(S.region);
  free(S.done);
  return st;
}
