/* cjrt reference backend: which ops the interpreter runs (supports_op): those with a row in
 * ref.def, where a REF_IF row's check accepts the op's attributes. Ops the compiler passes remove
 * (calls, composites, quantized ops: REF_PASS rows) are accepted: the passes run first. Anything
 * else is refused at compile time with the op named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

bool cj_rf_is_check_target(const char *t, size_t n);

/* ---------------------------------------------------------------- REF_IF checks */

static bool can_probe(const cj_op *op, char *msg, size_t cap) { /* files in $CJRT_PROBE_DIR */
  if (getenv("CJRT_PROBE_DIR") && *getenv("CJRT_PROBE_DIR")) return true;
  snprintf(msg, cap, "%s needs CJRT_PROBE_DIR (the interpreter's --probe-output-dir)", op->name);
  return false;
}

static bool can_rng(const cj_op *op, char *msg, size_t cap) {
  int32_t alg = 0;
  cj_op_get_enum(op, "rng_algorithm", CJ_EK_RNG_ALGORITHM, &alg);
  const cj_type *t = op->nresults == 2 ? op->results[1].type : NULL;
  const cj_type *s = op->nopnds == 1 ? op->operands[0]->type : NULL;
  if (alg == CJ_RNG_ALGORITHM_THREE_FRY && t && cj_type_is_static(t) && cj_dtype_bits(t->dtype) == 64 &&
      cj_type_is_static(s) && s->num_elements == 2)
    return true;
  snprintf(msg, cap, "stablehlo.rng_bit_generator is supported by the reference backend only "
           "as THREE_FRY with a state of 2 and 64-bit outputs");
  return false;
}

/* send, recv, outfeed: host transfers, where run_parallel's driver plays the host */
static bool can_host_transfer(const cj_op *op, char *msg, size_t cap) {
  bool host = false;
  cj_op_get_bool(op, "is_host_transfer", &host);
  for (const cj_op *p = op; p && p->block && p->block->region; p = p->block->region->op)
    if (p->kind == CJ_OP_INTERP_RUN_PARALLEL && (host || op->kind == CJ_OP_OUTFEED)) return true;
  snprintf(msg, cap, "%s is supported by the reference backend only as a host transfer inside "
           "interpreter.run_parallel", op->name);
  return false;
}

static bool can_custom_call(const cj_op *op, char *msg, size_t cap) {
  const char *t = NULL;
  size_t n = 0;
  cj_attr_get_str(cj_op_attr(op, "call_target_name"), &t, &n);
  if (t && cj_rf_is_check_target(t, n)) return true;
  snprintf(msg, cap, "custom_call @%.*s is not supported by the reference backend", (int)(n < 200 ? n : 200),
           t ? t : "");
  return false;
}

/* ---------------------------------------------------------------- the table */

typedef bool rf_can_fn(const cj_op *op, char *msg, size_t cap);

static const struct {
  bool row;
  rf_can_fn *can; /* NULL: every op of the kind */
} rows[CJ_OP_COUNT] = {
#define REF(OP, fn) [CJ_OP_##OP] = {true, NULL},
#define REF_IF(OP, fn, c) [CJ_OP_##OP] = {true, c},
#define REF_BIND(OP, fn) [CJ_OP_##OP] = {true, NULL},
#define REF_PASS(OP) [CJ_OP_##OP] = {true, NULL},
#define REF_EW(OP, i, f, c, b) [CJ_OP_##OP] = {true, NULL},
#define REF_EWT(OP, i, f, c, b) [CJ_OP_##OP] = {true, NULL},
#define REF_EW_ANY(OP, fn) [CJ_OP_##OP] = {true, NULL},
#include "reference/ref.def"
};

bool cj_rf_supports(const cj_op *op, const char **why) {
  static _Thread_local char msg[256];
  const char *unused;
  if (!why) why = &unused; /* the compiler's question (runtime/compile.c) wants no reason */
  if (cj_op_info_get(op->kind)->flags & CJ_OPF_TERMINATOR) return true;
  if ((unsigned)op->kind < CJ_OP_COUNT && rows[op->kind].row) {
    if (!rows[op->kind].can || rows[op->kind].can(op, msg, sizeof msg)) return true;
    *why = msg;
    return false;
  }
  snprintf(msg, sizeof msg, "%s is not supported by the reference backend", op->name);
  *why = msg;
  return false;
}
