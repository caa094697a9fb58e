/* cjrt reference backend: collectives between the devices of one launch, and
 * interpreter.run_parallel (which makes a launch of its own and runs one thread per process).
 *
 * A launch is one mutex and one condition variable. Every collective is a meeting of its group:
 * each member posts its operands and waits until the whole group has posted, computes its own
 * result by reading its peers' operands, then waits until the whole group is done reading
 * before it returns (so no operand is freed while a peer reads it). A meeting is keyed by the
 * device's collective count and the group's first member: the devices of a group run the same
 * sequence of collectives. An aborted launch makes every waiting device fail.
 *
 * Groups follow StableHLO: the replica_groups ids name replicas, partitions, or flattened
 * device ids depending on channel_handle and use_global_device_ids. */
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

typedef struct meeting {
  uint64_t seq;
  int32_t first, size;
  int32_t arrived, left, gone;
  rv ***posted; /* per rank: that member's operands */
  struct meeting *next;
} meeting;

/* a value sent to the host on a channel (run_parallel plays the host: one FIFO per channel) */
typedef struct hostmsg {
  int64_t channel;
  rv *value;
  struct hostmsg *next;
} hostmsg;

struct rf_launch {
  int32_t nr, np;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  cj_status aborted;
  meeting *meetings;
  hostmsg *host; /* in order of sending */
  bool plays_host; /* made by run_parallel */
};

cj_status cj_rf_launch_new(int32_t nr, int32_t np, rf_launch **out) {
  *out = NULL;
  rf_launch *l = calloc(1, sizeof *l);
  if (!l) return cj_oom();
  l->nr = nr;
  l->np = np;
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
  *out = l;
  return NULL;
}

void cj_rf_launch_free(rf_launch *l) {
  if (!l) return;
  while (l->meetings) {
    meeting *m = l->meetings;
    l->meetings = m->next;
    free(m->posted);
    free(m);
  }
  while (l->host) {
    hostmsg *h = l->host;
    l->host = h->next;
    cj_rv_free(h->value);
    free(h);
  }
  cj_status_free(l->aborted);
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
  free(l);
}

void cj_rf_launch_abort(rf_launch *l, cj_status why) {
  pthread_mutex_lock(&l->mu);
  if (!l->aborted) {
    l->aborted = why;
    why = NULL;
  }
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
  cj_status_free(why);
}

static CJ_MUST_USE cj_status cancelled(rf_launch *l, const cj_op *op) {
  return cj_op_error(op, CJ_CANCELLED, "collective cancelled: a peer failed (%s)", cj_status_message(l->aborted));
}

/* Posts `mine` as member `rank` of the group and waits for everyone; *m is the meeting. */
static CJ_MUST_USE cj_status meet(rf_exec *x, const cj_op *op, const int32_t *members, int32_t size, int32_t rank, rv **mine,
                      meeting **out) {
  rf_launch *l = x->launch;
  uint64_t seq = x->coll_seq++;
  pthread_mutex_lock(&l->mu);
  meeting *m = l->meetings;
  while (m && !(m->seq == seq && m->first == members[0] && m->size == size)) m = m->next;
  if (!m) {
    m = calloc(1, sizeof *m);
    if (m) m->posted = calloc((size_t)size, sizeof(rv **));
    if (!m || !m->posted) {
      if (m) free(m);
      pthread_mutex_unlock(&l->mu);
      return cj_oom();
    }
    m->seq = seq;
    m->first = members[0];
    m->size = size;
    m->next = l->meetings;
    l->meetings = m;
  }
  m->posted[rank] = mine;
  m->arrived++;
  pthread_cond_broadcast(&l->cv);
  while (m->arrived < size && !l->aborted) pthread_cond_wait(&l->cv, &l->mu);
  cj_status st = m->arrived < size ? cancelled(l, op) : NULL;
  pthread_mutex_unlock(&l->mu);
  *out = m;
  return st;
}

/* Waits until every member finished reading; the last to go frees the meeting. */
static CJ_MUST_USE cj_status leave(rf_exec *x, const cj_op *op, meeting *m) {
  rf_launch *l = x->launch;
  pthread_mutex_lock(&l->mu);
  m->left++;
  pthread_cond_broadcast(&l->cv);
  while (m->left < m->size && !l->aborted) pthread_cond_wait(&l->cv, &l->mu);
  cj_status st = m->left < m->size ? cancelled(l, op) : NULL;
  if (++m->gone == m->size) {
    meeting **pp = &l->meetings;
    while (*pp && *pp != m) pp = &(*pp)->next;
    if (*pp) *pp = m->next;
    free(m->posted);
    free(m);
  }
  pthread_mutex_unlock(&l->mu);
  return st;
}

/* ---------------------------------------------------------------- groups */

enum { MODE_REPLICA, MODE_PARTITION, MODE_FLAT, MODE_REPLICA_AND_PARTITION };
enum { MAXDEV = 256 };

static int64_t channel_of(const cj_op *op) {
  int64_t v = 0;
  const cj_attr *ch = cj_op_attr(op, "channel_handle");
  if (ch) cj_attr_get_i64(cj_attr_field(ch, CJ_SK_CHANNEL_HANDLE, CJ_SF_CHANNEL_HANDLE_handle), &v);
  return v;
}

/* The group of this device (members as flattened device ids, in rank order); *size 0 = in no
 * group. gather_like: all_gather, all_reduce, reduce_scatter. */
static CJ_MUST_USE cj_status group_of(rf_exec *x, const cj_op *op, bool gather_like, int32_t *members, int32_t *size,
                          int32_t *rank) {
  int64_t ch = channel_of(op);
  bool global = cj_op_attr(op, "use_global_device_ids") != NULL;
  int mode = gather_like ? (ch <= 0 ? MODE_REPLICA : global ? MODE_FLAT : MODE_REPLICA_AND_PARTITION)
                         : (global ? MODE_FLAT : ch <= 0 ? MODE_REPLICA : MODE_PARTITION);
  int32_t nr = x->nreplicas, np = x->npartitions, r = x->replica, p = x->partition;
  int64_t me, nids;
  switch (mode) {
    case MODE_PARTITION: me = p; nids = np; break;
    case MODE_FLAT: me = (int64_t)r * np + p; nids = (int64_t)nr * np; break;
    default: me = r; nids = nr; break;
  }
  int64_t ids[MAXDEV], nid = 0;
  const cj_attr *a = cj_op_attr(op, "replica_groups");
  bool found = false;
  if (a && a->kind == CJ_ATTR_DENSE && a->dense.type && a->dense.type->rank == 2 && a->dense.type->dims[0] > 0 &&
      a->dense.type->dims[1] > 0) {
    int64_t ng = a->dense.type->dims[0], gs = a->dense.type->dims[1];
    for (int64_t g = 0; g < ng && !found; g++) {
      nid = 0;
      for (int64_t k = 0; k < gs && nid < MAXDEV; k++) {
        int64_t id = cj_dense_get_i64(a, g * gs + k);
        if (id < 0) continue;
        if (id >= nids) return cj_op_error(op, CJ_INVALID_ARGUMENT, "replica_groups names id %lld of %lld", (long long)id, (long long)nids);
        if (id == me) found = true;
        ids[nid++] = id;
      }
    }
  } else {
    for (int64_t k = 0; k < nids && k < MAXDEV; k++) ids[nid++] = k;
    found = true;
  }
  *size = 0;
  if (!found) return NULL;
  int32_t myidx = 0;
  for (int64_t k = 0; k < nid; k++)
    if (ids[k] == me) myidx = (int32_t)k;
  int32_t n = 0;
  if (mode == MODE_REPLICA_AND_PARTITION) {
    if (nid * np > MAXDEV) return cj_op_error(op, CJ_UNIMPLEMENTED, "a group of more than %d devices", MAXDEV);
    for (int32_t pp = 0; pp < np; pp++)
      for (int64_t k = 0; k < nid; k++) members[n++] = (int32_t)(ids[k] * np + pp);
    *rank = p * (int32_t)nid + myidx;
  } else {
    for (int64_t k = 0; k < nid; k++)
      members[n++] = (int32_t)(mode == MODE_PARTITION ? (int64_t)r * np + ids[k]
                               : mode == MODE_FLAT  ? ids[k]
                                                    : ids[k] * np + p);
    *rank = myidx;
  }
  *size = n;
  return NULL;
}

/* ---------------------------------------------------------------- the collectives */

/* out = the elementwise reduction of the members' operand k, in rank order */
static CJ_MUST_USE cj_status reduce_into(rf_exec *x, cj_op *op, rv ***posted, int32_t size, uint32_t k, rv *out,
                             int64_t off /* first element of the block */) {
  cj_block *b = op->regions[0].first;
  for (int64_t i = 0; i < out->n; i++) {
    const rv *v0 = posted[0][k];
    rs acc = cj_rs_get(v0->dt, v0->data, off + i);
    for (int32_t m = 1; m < size; m++) {
      rs a[2] = {acc, cj_rs_get(posted[m][k]->dt, posted[m][k]->data, off + i)};
      CJ_RETURN_IF_ERROR(cj_rf_call_scalar(x, b, a, &acc));
    }
    cj_rs_set(out->dt, out->data, i, acc);
  }
  return NULL;
}

/* copies `in` into `out` at offset `off` along dimension d */
static void place(const rv *in, rv *out, int64_t d, int64_t off) {
  int64_t idx[RF_MAX_RANK];
  for (int64_t i = 0; i < in->n; i++) {
    cj_rf_unravel(i, in->rank, in->dims, idx);
    idx[d] += off;
    memcpy(out->data + cj_rf_ravel(out->rank, out->dims, idx) * out->esize, in->data + i * in->esize, (size_t)in->esize);
  }
}

/* copies the block of `in` starting at `off` along d (of out's size) into out */
static void take(const rv *in, rv *out, int64_t d, int64_t off) {
  int64_t idx[RF_MAX_RANK];
  for (int64_t i = 0; i < out->n; i++) {
    cj_rf_unravel(i, out->rank, out->dims, idx);
    idx[d] += off;
    memcpy(out->data + i * out->esize, in->data + cj_rf_ravel(in->rank, in->dims, idx) * in->esize, (size_t)out->esize);
  }
}

/* What each collective makes of the members' operands (posted[q] for member q of size; this
 * device is member rank). */
typedef cj_status combine_fn(rf_exec *x, cj_op *op, rv ***posted, int32_t size, int32_t rank, rv **ins, rv **outs);

static CJ_MUST_USE cj_status all_reduce(rf_exec *x, cj_op *op, rv ***posted, int32_t size, int32_t rank, rv **ins,
                                        rv **outs) {
  cj_status st = NULL;
  for (uint32_t k = 0; k < op->nresults && !st; k++) st = reduce_into(x, op, posted, size, k, outs[k], 0);
  return st;
}

static CJ_MUST_USE cj_status reduce_scatter(rf_exec *x, cj_op *op, rv ***posted, int32_t size, int32_t rank, rv **ins,
                                            rv **outs) {
  int64_t d = 0;
  cj_op_get_i64(op, "scatter_dimension", &d);
  /* reduce the whole operand, then take this member's block */
  rv *full = NULL;
  cj_status st = cj_rv_new(outs[0]->dt, ins[0]->rank, ins[0]->dims, &full);
  if (!st) st = reduce_into(x, op, posted, size, 0, full, 0);
  if (!st) take(full, outs[0], d, (int64_t)rank * outs[0]->dims[d]);
  cj_rv_free(full);
  return st;
}

static CJ_MUST_USE cj_status all_gather(rf_exec *x, cj_op *op, rv ***posted, int32_t size, int32_t rank, rv **ins,
                                        rv **outs) {
  int64_t d = 0;
  cj_op_get_i64(op, "all_gather_dim", &d);
  for (uint32_t k = 0; k < op->nresults; k++)
    for (int32_t q = 0; q < size; q++) place(posted[q][k], outs[k], d, q * posted[q][k]->dims[d]);
  return NULL;
}

static CJ_MUST_USE cj_status all_to_all(rf_exec *x, cj_op *op, rv ***posted, int32_t size, int32_t rank, rv **ins,
                                        rv **outs) {
  int64_t sd = 0, cd = 0, cnt = 1;
  cj_op_get_i64(op, "split_dimension", &sd);
  cj_op_get_i64(op, "concat_dimension", &cd);
  cj_op_get_i64(op, "split_count", &cnt);
  cj_status st = NULL;
  for (uint32_t k = 0; k < op->nresults && !st; k++) {
    int64_t pd[RF_MAX_RANK];
    memcpy(pd, ins[k]->dims, sizeof(int64_t) * (size_t)ins[k]->rank);
    pd[sd] /= cnt;
    for (int32_t q = 0; q < size && !st; q++) {
      rv *part = NULL;
      st = cj_rv_new(ins[k]->dt, ins[k]->rank, pd, &part);
      if (st) break;
      take(posted[q][k], part, sd, (int64_t)rank * pd[sd]);
      place(part, outs[k], cd, q * pd[cd]);
      cj_rv_free(part);
    }
  }
  return st;
}

/* collective_broadcast and collective_reduce */
static CJ_MUST_USE cj_status to_root(rf_exec *x, cj_op *op, rv ***posted, int32_t size, int32_t rank, rv **ins,
                                     rv **outs) {
  /* the root of operand k: member 0, or element k of the last operand (has_dynamic_root) */
  bool dyn = cj_op_attr(op, "has_dynamic_root") != NULL;
  cj_status st = NULL;
  for (uint32_t k = 0; k < op->nresults && !st; k++) {
    int32_t root = dyn ? (int32_t)cj_rf_geti(ins[op->nopnds - 1]->dt, ins[op->nopnds - 1]->data, k) : 0;
    if (root < 0 || root >= size) {
      st = cj_op_error(op, CJ_INVALID_ARGUMENT, "root %d is outside its group of %d", root, size);
    } else if (op->kind == CJ_OP_COLLECTIVE_BROADCAST) {
      memcpy(outs[k]->data, posted[root][k]->data, (size_t)outs[k]->n * (size_t)outs[k]->esize);
    } else if (rank == root) {
      st = reduce_into(x, op, posted, size, k, outs[k], 0);
    }
  }
  return st;
}

static CJ_MUST_USE cj_status permute(rf_exec *x, cj_op *op, rv ***posted, int32_t size, int32_t rank, rv **ins,
                                     rv **outs) {
  const cj_attr *a = cj_op_attr(op, "source_target_pairs");
  int64_t npairs = a && a->kind == CJ_ATTR_DENSE && a->dense.type && a->dense.type->rank == 2 ? a->dense.type->dims[0] : 0;
  for (int64_t q = 0; q < npairs; q++) {
    int64_t s = cj_dense_get_i64(a, 2 * q), t = cj_dense_get_i64(a, 2 * q + 1);
    if (t == rank && s >= 0 && s < size)
      memcpy(outs[0]->data, posted[s][0]->data, (size_t)outs[0]->n * (size_t)outs[0]->esize);
  }
  return NULL;
}

/* meets the op's group (none for a group of one), combines, leaves */
static CJ_MUST_USE cj_status run_collective(rf_exec *x, cj_op *op, rv **ins, rv **outs, combine_fn *combine) {
  int32_t members[MAXDEV], size = 0, rank = 0;
  bool gather_like = op->kind == CJ_OP_ALL_GATHER || op->kind == CJ_OP_ALL_REDUCE || op->kind == CJ_OP_REDUCE_SCATTER;
  if (op->kind == CJ_OP_COLLECTIVE_REDUCE) gather_like = false;
  if (op->kind == CJ_OP_COLLECTIVE_PERMUTE) {
    /* every device along the axis meets; pairs name replicas (no channel) or partitions */
    bool part = channel_of(op) > 0;
    int32_t cnt = part ? x->npartitions : x->nreplicas;
    for (int32_t k = 0; k < cnt; k++)
      members[size++] = part ? x->replica * x->npartitions + k : k * x->npartitions + x->partition;
    rank = part ? x->partition : x->replica;
  } else {
    CJ_RETURN_IF_ERROR(group_of(x, op, gather_like, members, &size, &rank));
  }
  if (size == 0) { /* in no group: zeros (collective_broadcast), else its own operand */
    if (op->kind != CJ_OP_COLLECTIVE_BROADCAST && op->kind != CJ_OP_COLLECTIVE_REDUCE)
      for (uint32_t k = 0; k < op->nresults && k < op->nopnds; k++)
        if (outs[k]->n == ins[k]->n) memcpy(outs[k]->data, ins[k]->data, (size_t)ins[k]->n * (size_t)ins[k]->esize);
    return NULL;
  }
  meeting *m = NULL;
  rv **mine = ins;
  if (size > 1 && !x->launch)
    return cj_op_error(op, CJ_INTERNAL, "a collective of %d devices without a launch", size);
  rv **solo[1] = {mine};
  rv ***posted = solo;
  if (size > 1) {
    CJ_RETURN_IF_ERROR(meet(x, op, members, size, rank, mine, &m));
    posted = m->posted;
  }
  cj_status st = combine(x, op, posted, size, rank, ins, outs);
  if (m) {
    cj_status ls = leave(x, op, m);
    if (!st) st = ls;
    else cj_status_free(ls);
  }
  return st;
}

/* send / recv with is_host_transfer and outfeed, inside run_parallel: the driver is the host */
static CJ_MUST_USE cj_status host_transfer(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  rf_launch *l = x->launch;
  if (!l || !l->plays_host)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "%s to the host runs only inside interpreter.run_parallel", op->name);
  if (op->kind == CJ_OP_OUTFEED) return NULL; /* the host takes it */
  int64_t ch = channel_of(op);
  if (op->kind == CJ_OP_SEND) {
    for (uint32_t k = 0; k + 1 < op->nopnds; k++) {
      hostmsg *h = calloc(1, sizeof *h);
      if (!h) return cj_oom();
      cj_status st = cj_rv_clone(ins[k], &h->value);
      if (st) {
        free(h);
        return st;
      }
      h->channel = ch;
      pthread_mutex_lock(&l->mu);
      hostmsg **pp = &l->host;
      while (*pp) pp = &(*pp)->next;
      *pp = h;
      pthread_cond_broadcast(&l->cv);
      pthread_mutex_unlock(&l->mu);
    }
    return NULL;
  }
  /* recv: every result but the token, in order, from the channel's queue */
  for (uint32_t k = 0; k + 1 < op->nresults; k++) {
    pthread_mutex_lock(&l->mu);
    hostmsg *h = NULL;
    for (;;) {
      hostmsg **pp = &l->host;
      while (*pp && (*pp)->channel != ch) pp = &(*pp)->next;
      if (*pp) {
        h = *pp;
        *pp = h->next;
        break;
      }
      if (l->aborted) break;
      pthread_cond_wait(&l->cv, &l->mu);
    }
    cj_status st = h ? NULL : cancelled(l, op);
    pthread_mutex_unlock(&l->mu);
    if (st) return st;
    if (h->value->kind != RV_TENSOR || h->value->n != outs[k]->n || h->value->dt != outs[k]->dt) {
      cj_rv_free(h->value);
      free(h);
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "recv: the value sent on channel %lld has another type", (long long)ch);
    }
    memcpy(outs[k]->data, h->value->data, (size_t)outs[k]->n * (size_t)outs[k]->esize);
    cj_rv_free(h->value);
    free(h);
  }
  return NULL;
}

/* ---------------------------------------------------------------- ref.def's rows */

cj_status cj_rf_x_all_reduce(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return run_collective(x, op, ins, outs, all_reduce); }
cj_status cj_rf_x_reduce_scatter(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  return run_collective(x, op, ins, outs, reduce_scatter);
}
cj_status cj_rf_x_all_gather(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return run_collective(x, op, ins, outs, all_gather); }
cj_status cj_rf_x_all_to_all(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return run_collective(x, op, ins, outs, all_to_all); }
cj_status cj_rf_x_to_root(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return run_collective(x, op, ins, outs, to_root); }
cj_status cj_rf_x_permute(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return run_collective(x, op, ins, outs, permute); }
cj_status cj_rf_x_host_transfer(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return host_transfer(x, op, ins, outs); }

/* ---------------------------------------------------------------- run_parallel */

typedef struct proc {
  rf_exec x;
  cj_block *b;
  rv **args;
  uint32_t nargs;
  rv **res;
  uint32_t nres;
  cj_status st;
  cj_thread thread;
} proc;

static void *proc_main(void *arg) {
  proc *P = arg;
  P->st = cj_rf_run_block(&P->x, P->b, P->args, P->nargs, &P->res, &P->nres);
  if (P->st) {
    P->st = cj_status_annotate(P->st, "process (replica %d, partition %d)", P->x.replica, P->x.partition);
    cj_rf_launch_abort(P->x.launch, cj_status_copy(P->st));
  }
  return NULL;
}

cj_status cj_rf_run_parallel(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  const cj_attr *grid = cj_op_attr(op, "cj.grid");
  int64_t g[2], ng = 0;
  if (op->nregions == 0 || !grid || !cj_attr_get_i64s(grid, g, 2, &ng) || ng != 2 || g[0] < 1 || g[1] < 1 ||
      g[0] * g[1] != (int64_t)op->nregions)
    return cj_op_error(op, CJ_INTERNAL, "interpreter.run_parallel was not prepared by the compiler");
  int32_t n = (int32_t)op->nregions;
  rf_launch *l = NULL;
  CJ_RETURN_IF_ERROR(cj_rf_launch_new((int32_t)g[0], (int32_t)g[1], &l));
  l->plays_host = true;
  proc *ps = calloc((size_t)n, sizeof *ps);
  if (!ps) {
    cj_rf_launch_free(l);
    return cj_oom();
  }
  cj_status st = NULL;
  uint32_t opi = 0;
  for (int32_t k = 0; k < n && !st; k++) {
    proc *P = &ps[k];
    P->x = *x;
    P->x.replica = k / (int32_t)g[1];
    P->x.partition = k % (int32_t)g[1];
    P->x.nreplicas = (int32_t)g[0];
    P->x.npartitions = (int32_t)g[1];
    P->x.dev = k;
    P->x.launch = l;
    P->x.coll_seq = 0;
    P->x.env = calloc(x->prog->nvalues + 1, sizeof(rv *));
    P->x.senv = calloc(x->prog->nvalues + 1, sizeof(rs));
    if (!P->x.env || !P->x.senv) st = cj_oom();
    P->b = op->regions[k].first;
    if (!P->b || opi + P->b->nargs > op->nopnds) {
      if (!st) st = cj_op_error(op, CJ_INVALID_ARGUMENT, "the programs take more arguments than given");
      break;
    }
    P->args = ins + opi;
    P->nargs = P->b->nargs;
    opi += P->b->nargs;
  }
  for (int32_t k = 0; k < n && !st; k++) {
    if (!cj_thread_start(&ps[k].thread, (size_t)16 << 20, proc_main, &ps[k])) {
      st = cj_op_error(op, CJ_RESOURCE_EXHAUSTED, "cannot start a thread for process %d", k);
      cj_rf_launch_abort(l, cj_status_copy(st));
    }
  }
  uint32_t resi = 0;
  for (int32_t k = 0; k < n; k++) {
    proc *P = &ps[k];
    cj_thread_join(&P->thread);
    if (P->st && (!st || (cj_status_code(st) == CJ_CANCELLED && cj_status_code(P->st) != CJ_CANCELLED))) {
      cj_status_free(st);
      st = P->st;
      P->st = NULL;
    }
    cj_status_free(P->st);
    for (uint32_t j = 0; j < P->nres && !st; j++) {
      if (resi >= op->nresults) {
        st = cj_op_error(op, CJ_INVALID_ARGUMENT, "the programs return more values than it has results");
        break;
      }
      cj_rv_free(outs[resi]);
      outs[resi++] = P->res[j];
      P->res[j] = NULL;
    }
    cj_rf_free_results(P->res, P->nres);
    if (P->x.env)
      for (uint32_t i = 0; i < x->prog->nvalues; i++) cj_rv_free(P->x.env[i]);
    free(P->x.env);
    free(P->x.senv);
  }
  free(ps);
  cj_rf_launch_free(l);
  return st;
}
