/* cjrt reference backend: which ops the interpreter runs (supports_op). Ops the compiler passes
 * remove (calls, composites, chlo broadcasts, quantized ops) are accepted: the passes run first.
 * Anything else is refused at compile time with the op named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

bool rf_is_check_target(const char *t, size_t n);

bool rf_supports(const cj_op *op, const char **why) {
  static _Thread_local char msg[256];
  const char *unused;
  if (!why) why = &unused; /* the compiler's question (runtime/compile.c) wants no reason */
  const cj_op_info *info = cj_op_info_get(op->kind);
  if (info->flags & CJ_OPF_TERMINATOR) return true;
  if (rf_is_ew(op->kind) && op->kind != CJ_OP_CHLO_ASIN_ACOS_KERNEL) return true;
  switch (op->kind) {
    /* removed or rewritten by the compiler passes */
    case CJ_OP_FUNC:
    case CJ_OP_FUNC_CALL:
    case CJ_OP_COMPOSITE:
    case CJ_OP_UNIFORM_QUANTIZE:
    case CJ_OP_UNIFORM_DEQUANTIZE:
    /* interp_data.c */
    case CJ_OP_CONSTANT:
    case CJ_OP_CHLO_CONSTANT:
    case CJ_OP_IOTA:
    case CJ_OP_BROADCAST_IN_DIM:
    case CJ_OP_BROADCAST:
    case CJ_OP_RESHAPE:
    case CJ_OP_TRANSPOSE:
    case CJ_OP_REVERSE:
    case CJ_OP_SLICE:
    case CJ_OP_DYNAMIC_SLICE:
    case CJ_OP_DYNAMIC_UPDATE_SLICE:
    case CJ_OP_CONCATENATE:
    case CJ_OP_PAD:
    case CJ_OP_BITCAST_CONVERT:
    case CJ_OP_REPLICA_ID:
    case CJ_OP_PARTITION_ID:
    case CJ_OP_AFTER_ALL:
    case CJ_OP_CREATE_TOKEN:
    /* interp.c */
    case CJ_OP_WHILE:
    case CJ_OP_IF:
    case CJ_OP_CASE:
    case CJ_OP_MAP:
    case CJ_OP_TUPLE:
    case CJ_OP_GET_TUPLE_ELEMENT:
    case CJ_OP_OPTIMIZATION_BARRIER:
    case CJ_OP_SDY_SHARDING_CONSTRAINT:
    case CJ_OP_SDY_RESHARD:
    /* interp_reduce.c */
    case CJ_OP_REDUCE:
    case CJ_OP_REDUCE_WINDOW:
    case CJ_OP_SELECT_AND_SCATTER:
    case CJ_OP_SORT:
    case CJ_OP_GATHER:
    case CJ_OP_SCATTER:
    case CJ_OP_CHLO_TOP_K:
    /* interp_linalg.c */
    case CJ_OP_DOT_GENERAL:
    case CJ_OP_DOT:
    case CJ_OP_CONVOLUTION:
    case CJ_OP_FFT:
    case CJ_OP_TRIANGULAR_SOLVE:
    case CJ_OP_CHOLESKY:
    /* interp_coll.c */
    case CJ_OP_ALL_REDUCE:
    case CJ_OP_ALL_GATHER:
    case CJ_OP_REDUCE_SCATTER:
    case CJ_OP_ALL_TO_ALL:
    case CJ_OP_COLLECTIVE_PERMUTE:
    case CJ_OP_COLLECTIVE_BROADCAST:
    case CJ_OP_COLLECTIVE_REDUCE:
    case CJ_OP_INTERP_RUN_PARALLEL:
    /* interp_check.c */
    case CJ_OP_CHECK_EXPECT_EQ:
    case CJ_OP_CHECK_EXPECT_EQ_CONST:
    case CJ_OP_CHECK_EXPECT_ALMOST_EQ:
    case CJ_OP_CHECK_EXPECT_ALMOST_EQ_CONST:
    case CJ_OP_CHECK_EXPECT_CLOSE:
      return true;
    case CJ_OP_INTERP_PROBE:
    case CJ_OP_CHECK_EXPECT_SERIALIZED_EQ: /* files in $CJRT_PROBE_DIR (interp_probe.c) */
      if (getenv("CJRT_PROBE_DIR") && *getenv("CJRT_PROBE_DIR")) return true;
      snprintf(msg, sizeof msg, "%s needs CJRT_PROBE_DIR (the interpreter's --probe-output-dir)", op->name);
      *why = msg;
      return false;
    case CJ_OP_RNG_BIT_GENERATOR: {
      int32_t alg = 0;
      cj_op_get_enum(op, "rng_algorithm", CJ_EK_RNG_ALGORITHM, &alg);
      const cj_type *t = op->nresults == 2 ? op->results[1].type : NULL;
      const cj_type *s = op->nopnds == 1 ? op->operands[0]->type : NULL;
      if (alg == CJ_RNG_ALGORITHM_THREE_FRY && t && cj_type_is_static(t) && cj_dtype_bits(t->dtype) == 64 &&
          cj_type_is_static(s) && s->num_elements == 2)
        return true;
      snprintf(msg, sizeof msg, "stablehlo.rng_bit_generator is supported by the reference backend only "
               "as THREE_FRY with a state of 2 and 64-bit outputs");
      *why = msg;
      return false;
    }
    case CJ_OP_SEND:
    case CJ_OP_RECV:
    case CJ_OP_OUTFEED: { /* host transfers: run_parallel's driver plays the host */
      bool host = false;
      cj_op_get_bool(op, "is_host_transfer", &host);
      for (const cj_op *p = op; p && p->block && p->block->region; p = p->block->region->op)
        if (p->kind == CJ_OP_INTERP_RUN_PARALLEL && (host || op->kind == CJ_OP_OUTFEED)) return true;
      snprintf(msg, sizeof msg, "%s is supported by the reference backend only as a host transfer inside "
               "interpreter.run_parallel", op->name);
      *why = msg;
      return false;
    }
    case CJ_OP_CUSTOM_CALL: {
      const char *t = NULL;
      size_t n = 0;
      cj_attr_get_str(cj_op_attr(op, "call_target_name"), &t, &n);
      if (t && rf_is_check_target(t, n)) return true;
      snprintf(msg, sizeof msg, "custom_call @%.*s is not supported by the reference backend",
               (int)(n < 200 ? n : 200), t ? t : "");
      *why = msg;
      return false;
    }
    default:
      snprintf(msg, sizeof msg, "%s is not supported by the reference backend", op->name);
      *why = msg;
      return false;
  }
}
