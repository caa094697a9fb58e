/* cjrt: send and recv between the devices of one launch, matched by channel handle.
 *
 * A send copies its operands into the launch's mailbox for each target (it never waits, so
 * programs that send before they receive in a ring do not deadlock); a recv waits for the
 * message from its source on the same channel and copies it into its results. Pairs name ids
 * along the partitions when the execution has several partitions, else along the replicas. A
 * device that no pair targets receives zeros.
 *
 * Transfers to or from the host (is_host_transfer) need the PJRT send/recv callbacks, which cjrt
 * does not implement: they fail at compile time, except inside interpreter.run_parallel, whose
 * driver plays the host (one queue per channel, as the reference interpreter has).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu/k_collective.h"

enum { P2P_MAX_PARTS = 256 };

typedef struct p2p_params {
  bool host;
  int64_t channel;
  const char *what;
  uint32_t nparts;
  size_t *sizes;
  int64_t npairs;
  const int64_t *pairs;
} p2p_params;

/* This device's id along the axis the pairs name, the axis length, and the device index of id. */
static void axis_of(const cj_exec_ctx *ctx, int64_t *me, int64_t *len) {
  cj_launch *l = ctx->args->launch;
  int32_t np = cj_cpu_launch_partitions(l), nr = cj_cpu_launch_replicas(l);
  if (np > 1) {
    *me = ctx->args->partition;
    *len = np;
  } else {
    *me = ctx->args->replica;
    *len = nr;
  }
}

static int32_t device_of(const cj_exec_ctx *ctx, int64_t id) {
  cj_launch *l = ctx->args->launch;
  int32_t np = cj_cpu_launch_partitions(l);
  if (np > 1) return ctx->args->replica * np + (int32_t)id;
  return (int32_t)id * np + ctx->args->partition;
}

static CJ_MUST_USE cj_status check_pair(const p2p_params *p, int64_t id, int64_t len) {
  if (id < 0 || id >= len)
    return cj_invalid("%s: source_target_pairs names id %lld but the execution has %lld along "
                      "the axis of the pairs",
                      p->what, (long long)id, (long long)len);
  return NULL;
}

/* Send/recv between processes (a multi-process client) has no MPI path yet. */
static CJ_MUST_USE cj_status check_local(const cj_exec_ctx *ctx, const p2p_params *p, int32_t peer) {
  const cj_xproc *x = ctx->args->xproc;
  if (!x || peer < 0 || peer >= x->ngrid || x->proc_of[peer] == x->self) return NULL;
  return cj_unimplemented("%s: the peer device (grid position %d) runs in process %d: send/recv "
                          "across processes is not implemented by cjrt (collective_permute is)",
                          p->what, peer, x->proc_of[peer]);
}

static CJ_MUST_USE cj_status k_send(cj_exec_ctx *ctx, const cj_step *st) {
  const p2p_params *p = st->params;
  const void *parts[P2P_MAX_PARTS];
  for (uint32_t i = 0; i < p->nparts; i++) parts[i] = CJ_PTR(ctx, st->in[i]);
  cj_launch *l = ctx->args->launch;
  if (!l)
    return cj_invalid("%s: send needs a multi-device execution (this one runs on one device)",
                      p->what);
  if (p->host)
    return cj_mail_send(l, p->channel, -1, -1, parts, p->sizes, (int32_t)p->nparts, p->what);
  int64_t me, len;
  axis_of(ctx, &me, &len);
  for (int64_t i = 0; i < p->npairs; i++) {
    int64_t s = p->pairs[2 * i], t = p->pairs[2 * i + 1];
    CJ_RETURN_IF_ERROR(check_pair(p, s, len));
    CJ_RETURN_IF_ERROR(check_pair(p, t, len));
    if (s != me) continue;
    CJ_RETURN_IF_ERROR(check_local(ctx, p, device_of(ctx, t)));
    CJ_RETURN_IF_ERROR(cj_mail_send(l, p->channel, coll_self(ctx), device_of(ctx, t), parts,
                                    p->sizes, (int32_t)p->nparts, p->what));
  }
  return NULL;
}

static CJ_MUST_USE cj_status k_recv(cj_exec_ctx *ctx, const cj_step *st) {
  const p2p_params *p = st->params;
  void *parts[P2P_MAX_PARTS];
  for (uint32_t i = 0; i < p->nparts; i++) parts[i] = CJ_PTR(ctx, st->out[i]);
  cj_launch *l = ctx->args->launch;
  if (!l)
    return cj_invalid("%s: recv needs a multi-device execution (this one runs on one device)",
                      p->what);
  if (p->host)
    return cj_mail_recv(l, p->channel, -1, -1, parts, p->sizes, (int32_t)p->nparts, p->what);
  int64_t me, len;
  axis_of(ctx, &me, &len);
  int64_t src = -1;
  for (int64_t i = 0; i < p->npairs; i++) {
    int64_t s = p->pairs[2 * i], t = p->pairs[2 * i + 1];
    CJ_RETURN_IF_ERROR(check_pair(p, s, len));
    CJ_RETURN_IF_ERROR(check_pair(p, t, len));
    if (t == me) src = s;
  }
  if (src < 0) {
    for (uint32_t i = 0; i < p->nparts; i++) memset(parts[i], 0, p->sizes[i]);
    return NULL;
  }
  CJ_RETURN_IF_ERROR(check_local(ctx, p, device_of(ctx, src)));
  return cj_mail_recv(l, p->channel, device_of(ctx, src), coll_self(ctx), parts, p->sizes,
                      (int32_t)p->nparts, p->what);
}

static CJ_MUST_USE cj_status p2p_params_new(cj_lw *L, cj_op *op, uint32_t nparts, p2p_params **out) {
  if (nparts > P2P_MAX_PARTS)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "more than %d values in one transfer", P2P_MAX_PARTS);
  p2p_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->what = cj_lw_what(L, op);
  p->channel = cj_coll_channel(op);
  p->nparts = nparts;
  p->sizes = cj_lw_alloc(L, sizeof(size_t) * (nparts ? nparts : 1));
  if (!p->what || !p->sizes) return cj_oom();
  bool host = false;
  cj_op_get_bool(op, "is_host_transfer", &host);
  p->host = host;
  if (host && !cj_coll_in_run_parallel())
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "transfers to or from the host (is_host_transfer) need PJRT send/recv "
                       "callbacks, which cjrt does not implement");
  if (!host) {
    const cj_attr *a = cj_op_attr(op, "source_target_pairs");
    if (!a || a->kind != CJ_ATTR_DENSE || a->dense.type->rank != 2 || a->dense.type->dims[1] != 2 ||
        a->dense.type->dims[0] == 0)
      return cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "a transfer between devices needs source_target_pairs (an N x 2 tensor, "
                         "N > 0)");
    p->npairs = a->dense.type->dims[0];
    int64_t *pairs = cj_lw_alloc(L, sizeof(int64_t) * (size_t)(2 * p->npairs));
    if (!pairs) return cj_oom();
    for (int64_t i = 0; i < 2 * p->npairs; i++) pairs[i] = cj_dense_get_i64(a, i);
    p->pairs = pairs;
  }
  *out = p;
  return NULL;
}

static CJ_MUST_USE cj_status bind_token(cj_lw *L, cj_value *v) {
  int32_t b = cj_lw_new_buf(L, 0, CJ_BK_NONE);
  return cj_lw_bind(L, v, 1, &b);
}

cj_status cj_lower_send(cj_lw *L, cj_op *op) {
  if (op->nopnds < 1 || op->nresults != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "send takes values and a token");
  uint32_t n = op->nopnds - 1;
  p2p_params *p;
  CJ_RETURN_IF_ERROR(p2p_params_new(L, op, n, &p));
  int32_t *ins = cj_lw_alloc(L, sizeof(int32_t) * (n ? n : 1));
  if (!ins) return cj_oom();
  for (uint32_t i = 0; i < n; i++) {
    if (!cj_type_is_static(op->operands[i]->type))
      return cj_op_error(op, CJ_UNIMPLEMENTED, "operand %u must be a static tensor", i);
    cj_lw_tensor t;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, i, &t));
    ins[i] = t.buf;
    p->sizes[i] = (size_t)t.nbytes;
  }
  CJ_RETURN_IF_ERROR(bind_token(L, &op->results[0]));
  if (!cj_lw_emit(L, op, k_send, p, n, ins, 0, NULL)) return cj_oom();
  return NULL;
}

cj_status cj_lower_recv(cj_lw *L, cj_op *op) {
  if (op->nresults < 1) return cj_op_error(op, CJ_INVALID_ARGUMENT, "recv returns values and a token");
  uint32_t n = op->nresults - 1;
  p2p_params *p;
  CJ_RETURN_IF_ERROR(p2p_params_new(L, op, n, &p));
  int32_t *outs = cj_lw_alloc(L, sizeof(int32_t) * (n ? n : 1));
  if (!outs) return cj_oom();
  for (uint32_t i = 0; i < n; i++) {
    if (!cj_type_is_static(op->results[i].type))
      return cj_op_error(op, CJ_UNIMPLEMENTED, "result %u must be a static tensor", i);
    cj_lw_tensor r;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, i, &r));
    outs[i] = r.buf;
    p->sizes[i] = (size_t)r.nbytes;
  }
  CJ_RETURN_IF_ERROR(bind_token(L, &op->results[n]));
  if (!cj_lw_emit(L, op, k_recv, p, 0, NULL, n, outs)) return cj_oom();
  return NULL;
}

/* infeed/outfeed: PJRT has no infeed queues any more (frameworks use host callbacks), and the
 * reference interpreter's infeed is a test-only feature of run_parallel. */
cj_status cj_lower_infeed(cj_lw *L, cj_op *op) {
  (void)L;
  return cj_op_error(op, CJ_UNIMPLEMENTED, "infeed is not supported by cjrt (no infeed queues)");
}

cj_status cj_lower_outfeed(cj_lw *L, cj_op *op) {
  (void)L;
  return cj_op_error(op, CJ_UNIMPLEMENTED, "outfeed is not supported by cjrt (no outfeed queues)");
}
