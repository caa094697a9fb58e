/* cjrt: helpers shared by the indexing, sorting and window op families of the CPU backend
 * (k_gather*.c, k_sort*.c, k_window*.c; private to src/cpu/).
 *
 *   - tensors whose element type may be a per-tensor quantized type (data movement ops move the
 *     storage values unchanged);
 *   - index readers: one function per index dtype, picked at lowering time;
 *   - combiners: acc[i] = acc[i] op x[i] over strided runs, for the bodies that are one
 *     add/multiply/maximum/minimum/and/or/xor of their two arguments, or that return one of them
 *     (scatter's "replace");
 *   - bodies as nested plans: a region lowered into its own plan over scalar argument buffers,
 *     run by a kernel once per element (any body, any number of operands).
 */
#ifndef CJ_CPU_K_GATHER_H
#define CJ_CPU_K_GATHER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cpu/lower.h"

/* ---- tensors ----
 * Like cj_lw_operand / cj_lw_result, but a per-tensor quantized element type is accepted when
 * allow_quant (its storage dtype is described). */
CJ_MUST_USE cj_status cj_kg_operand(cj_lw *L, cj_op *op, uint32_t i, bool allow_quant, cj_lw_tensor *out);
CJ_MUST_USE cj_status cj_kg_result(cj_lw *L, cj_op *op, uint32_t i, bool allow_quant, cj_lw_tensor *out);

/* ---- index readers ---- */
/* Reads one integer index. Unsigned values above INT64_MAX read as INT64_MAX. */
typedef int64_t (*kg_idx_fn)(const char *p);
kg_idx_fn cj_kg_idx_reader(cj_dtype dt); /* NULL if dt is not an integer type */
/* Reads n indices at byte stride `stride` into out (same rules); NULL for sub-byte types. */
typedef void (*kg_idx_block_fn)(const char *p, int64_t stride, int64_t n, int64_t *out);
kg_idx_block_fn cj_kg_idx_block_reader(cj_dtype dt);

/* ---- combiners ---- */
enum { KG_ADD, KG_MUL, KG_MAX, KG_MIN, KG_AND, KG_OR, KG_XOR, KG_REPLACE, KG_KEEP, KG_NOPS };
/* acc[i*as] = acc[i*as] op x[i*xs] for i in [0, n) (strides in bytes; xs may be 0). */
typedef void (*kg_comb_fn)(char *acc, int64_t as, const char *x, int64_t xs, int64_t n);
/* The combiner of op on dt, NULL if there is no fast one (then use the body plan). */
kg_comb_fn cj_kg_comb_lookup(int kop, cj_dtype dt);
/* res[off[i]] = res[off[i]] op x[i * xs] for i in [0, n) with off[i] >= 0 (element offsets;
 * negative ones are skipped), in order. */
typedef void (*kg_sc_fn)(char *res, const int64_t *off, const char *x, int64_t xs, int64_t n);
kg_sc_fn cj_kg_sc_lookup(int kop, cj_dtype dt);
/* Running combine of a contiguous run: dst[i] = init op src[0] op ... op src[i]. NULL for
 * replace/keep. */
typedef void (*kg_scan_fn)(char *dst, const char *src, int64_t n, const char *init);
kg_scan_fn cj_kg_scan_lookup(int kop, cj_dtype dt);
/* Whether region `r` of op is a fast body over scalars of dtype dt with 2 arguments (a, b):
 * one commutative binary op of a and b, or returning b (KG_REPLACE) or a (KG_KEEP).
 * Returns the KG_* op, or -1. */
int cj_kg_body_binop(const cj_op *op, uint32_t r, cj_dtype dt);
/* How padding elements holding the init value may be skipped by a reduction with kop:
 * KG_PAD_NEVER, KG_PAD_ALWAYS (idempotent ops), KG_PAD_IF_IDENTITY (skip when the init value
 * equals the identity, whose bytes are written to ident[16]). */
enum { KG_PAD_NEVER, KG_PAD_ALWAYS, KG_PAD_IF_IDENTITY };
int cj_kg_pad_rule(int kop, cj_dtype dt, unsigned char ident[16]);

/* ---- conversions ---- */
typedef struct kg_cvt {
  cj_ew_fn fn; /* NULL: same type, a copy of es bytes */
  cj_ew_aux aux;
  int32_t ses, des; /* source / destination element bytes */
} kg_cvt;
/* false if there is no conversion between the two */
bool cj_kg_cvt_init(kg_cvt *c, cj_dtype src, cj_dtype dst);
static inline void kg_cvt_run(const kg_cvt *c, char *dst, const char *src, int64_t n) {
  if (c->fn)
    c->fn(dst, src, 0, 0, n, &c->aux);
  else
    memcpy(dst, src, (size_t)(n * c->ses));
}

/* ---- bodies as nested plans ----
 * cj_kg_body_lower lowers region `r` of op into b->plan: each block argument is bound to a new
 * scalar arena buffer defined at `start` (the position the caller reserved with cj_lw_advance
 * before), and the terminator's operands give the return buffers. bufs[] receives the nargs
 * argument buffers then the nrets return buffers: the caller puts them into its step's inputs
 * starting at index b->slot0 (which it sets), emits the step, then calls
 * cj_lw_extend_region(L, start). A kernel must not run a body plan from several threads. */
typedef struct kg_body {
  cj_plan plan;
  uint32_t nargs, nrets;
  uint32_t slot0;
  const cj_type *const *arg_types; /* element types (dtype via ->dtype) */
  const cj_type *const *ret_types;
} kg_body;
enum { KG_MAX_BODY_VALUES = 64 };
CJ_MUST_USE cj_status cj_kg_body_lower(cj_lw *L, cj_op *op, uint32_t r, int32_t start, kg_body *b,
                        int32_t *bufs);
/* The same body lowered a second time over `lanes` elements per value (tensor<lanes x T>
 * arguments and returns), when every op in it is elementwise over scalars (or a scalar
 * constant, splat over the lanes): one run of b->plan folds `lanes` independent elements as
 * `lanes` runs of the scalar body would. *done false (and nothing lowered) otherwise. */
CJ_MUST_USE cj_status cj_kg_body_lower_lanes(cj_lw *L, cj_op *op, uint32_t r, int32_t start,
                                             int64_t lanes, kg_body *b, int32_t *bufs, bool *done);
#define KG_ARG(ctx, st, b, i) CJ_PTR((ctx), (st)->in[(b)->slot0 + (uint32_t)(i)])
#define KG_RET(ctx, st, b, i) CJ_PTR((ctx), (st)->in[(b)->slot0 + (b)->nargs + (uint32_t)(i)])

/* ---- small things ---- */
/* A scalar type's dtype if t is a rank-0 static tensor (not quantized), else CJ_INVALID. */
cj_dtype cj_kg_scalar_dtype(const cj_type *t);
/* Reads an i64 list attribute (any spelling) of at most cap values; false if absent or
 * longer. */
bool cj_kg_i64s(const cj_op *op, const char *name, int64_t *out, int64_t cap, int64_t *n);
/* The padding attribute (a [rank, 2] i64 dense) into lo/hi; absent = zeros. */
CJ_MUST_USE cj_status cj_kg_padding(const cj_op *op, int32_t rank, int64_t *lo, int64_t *hi);

#endif
