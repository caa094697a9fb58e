/* cjrt: the compiler passes over the IR, run before a backend lowers the entry function.
 *
 *   identities  sdy.sharding_constraint / sdy.reshard and the JAX custom calls @Sharding,
 *               @SPMDFullToShardShape, @SPMDShardToFullShape, @annotate_device_placement (and
 *               @MoveToHost / @MoveToDevice) become their operand; sdy.manual_computation is
 *               inlined (one device: the manual region is the whole computation)
 *   inline      func.call and stablehlo.composite (a call of its decomposition) are replaced
 *               by the callee's body, recursively; recursion is an error (calls marked
 *               inlineable = "xla_late" are inlined last, by cj_compile_late_inline)
 *   refine      shapes made static from the argument shapes (refine.c): dynamic_* ops with
 *               computable shape operands become static ops; what stays dynamic is an error
 *   chlo        chlo ops the backend has no kernel for are decomposed into StableHLO:
 *               broadcast_* (numpy-style or broadcast_dimensions broadcasting + the op),
 *               broadcast_select, constant, constant_like, and the elementwise functions
 *               (via the backend's `native` answer: ops it runs directly stay)
 *   quant       uniform_quantize/dequantize and ops on quantized types become integer and f32
 *               math, as the reference interpreter lowers them (quant.c)
 *   fold        identities (same-type convert/reshape, identity transpose/broadcast/slice,
 *               reshape of reshape) and shape ops of splat constants
 *   licm        loop-invariant elementwise ops of while bodies computed once, before the loop
 *   dce         ops without side effects whose results are unused are removed; functions
 *               other than the entry one are dropped once nothing calls them
 * Errors name the op and its location (cj_op_error). Compilation is a few linear walks.
 */
#ifndef CJ_COMPILER_COMPILER_H
#define CJ_COMPILER_COMPILER_H

#include <stdbool.h>

#include "base/status.h"
#include "ir/ir.h"

typedef struct cj_compile_hooks {
  /* True if the backend runs `op` directly (a chlo op it has a kernel for is then kept). */
  bool (*native)(const cj_op *op, void *ctx);
  void *ctx;
} cj_compile_hooks;

/* Runs every pass on module m; *out_main is the entry function. Calls JAX marks to be inlined
 * late (mhlo.frontend_attributes inlineable = "xla_late") stay calls, their functions compiled
 * by the same passes: the module then is the optimized program a client may read back. */
CJ_MUST_USE cj_status cj_compile_passes(cj_module *m, const cj_compile_hooks *hooks, cj_op **out_main);
/* Inlines what cj_compile_passes kept as calls (then folds and removes dead code), leaving the
 * entry function alone in the module, as backends lower it. Nothing to do for most modules. */
CJ_MUST_USE cj_status cj_compile_late_inline(cj_module *m, cj_op *main);

/* The passes, one by one (each works on `func` and everything nested in it). */
CJ_MUST_USE cj_status cj_pass_identities(cj_module *m, cj_op *func);
CJ_MUST_USE cj_status cj_pass_inline(cj_module *m, cj_op *func);
CJ_MUST_USE cj_status cj_pass_chlo(cj_module *m, cj_op *func, const cj_compile_hooks *hooks);
/* Shape refinement (refine.c): static argument types (and known argument values) for the
 * entry function, propagated through the program; dynamic ops whose shape operands are known
 * become static ops. Entries of types/values may be NULL (kept / unknown). */
typedef struct cj_refine_args {
  int32_t nargs;
  const cj_type *const *types;
  const cj_attr *const *values;
} cj_refine_args;
/* args NULL: the entry function's own argument types (which must then be static). Whatever
 * stays dynamic is an error naming the op. */
CJ_MUST_USE cj_status cj_pass_refine(cj_module *m, cj_op *func, const cj_refine_args *args);
/* Quantized types and ops become integer and float math (quant.c); convolutions keep their
 * quantized types, bridged by bitcast_convert. */
CJ_MUST_USE cj_status cj_pass_quant(cj_module *m, cj_op *func);
CJ_MUST_USE cj_status cj_pass_fold(cj_module *m, cj_op *func);
CJ_MUST_USE cj_status cj_pass_dce(cj_module *m, cj_op *func);
/* Drops the top-level pure ops that repeat an earlier op's computation (cse.c). */
CJ_MUST_USE cj_status cj_pass_cse(cj_module *m, cj_op *func);
/* Moves the elementwise ops of while bodies whose operands do not change across iterations
 * before the loop (licm.c). */
CJ_MUST_USE cj_status cj_pass_licm(cj_module *m, cj_op *func);
/* Moves an all_reduce past the transpose or reshape that is its only use (sink.c), so that the
 * backend can fold that transpose into the op producing the reduced value. */
CJ_MUST_USE cj_status cj_pass_sink_collectives(cj_module *m, cj_op *func);
/* Numbers the values of b and its nested regions (cj_block_number_values, *nv of them) and
 * returns, malloc'ed, how many operands use each (by id); NULL on out-of-memory. */
uint32_t *cj_use_counts(cj_block *b, uint32_t *nv);
/* Removes every func.func of the module body except `keep` and the functions it references
 * (a custom call's called_computations, transitively). */
void cj_pass_strip_functions(cj_module *m, const cj_op *keep);

/* ---- small IR-building helpers for passes ---- */
/* Creates an op of `kind` with the given operands and one result of type rt, inserted before
 * `before` (in before's block), positioned (for messages) where `origin` is. NULL on OOM. */
cj_op *cj_build_op(cj_module *m, cj_op *before, const cj_op *origin, cj_op_kind kind,
                   uint32_t nopnds, cj_value *const *opnds, const cj_type *rt);
/* Appends to `rb` (a combiner block: two scalar arguments of type st) `kind`(arg0, arg1) and
 * the return of its result, positioned where `origin` is. */
CJ_MUST_USE cj_status cj_build_combiner(cj_module *m, cj_block *rb, const cj_op *origin,
                                        cj_op_kind kind, const cj_type *st);
/* Replaces every use of `from` inside `scope` by `to`. */
void cj_replace_all_uses(cj_op *scope, cj_value *from, cj_value *to);

#endif
