/* cjrt: lowering a compiled module's entry function into a plan (private to src/cpu/).
 *
 * The lowering walks the function's ops in order. Each op kind has one row in lower.def naming
 * its lowering function (which may live in any file of src/cpu/): it asks for its operands'
 * buffers, creates its results' buffers, and emits steps. Buffers are abstract while lowering
 * (ids with a size, a first definition and a last use, in a linear order of positions that
 * nested regions share); when the whole function is lowered the planner assigns arena offsets
 * (liveness, reuse, in-place hints, donation) and patches every slot.
 *
 * Values: a tensor or token value has one buffer; a tuple value has one per leaf (flattened).
 * Aliasing ops (reshape, bitcast of equal width, get_tuple_element, tuple, optimization_barrier)
 * share buffers. Elementwise ops are fused (lower_ew.c): broadcast_in_dim, splat constants and
 * static slices whose users are all elementwise ops stay virtual (a strided view of their
 * source, at an offset for slices).
 *
 * Adding an op: write `cj_status lower_<x>(cj_lw *L, cj_op *op)` using the helpers below and add
 * a row LOWER(<OP_ID>, lower_<x>) to lower.def.
 */
#ifndef CJ_CPU_LOWER_H
#define CJ_CPU_LOWER_H

#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "cpu/ew.h"
#include "cpu/plan.h"
#include "ir/ir.h"

typedef struct cj_lw cj_lw;

enum { CJ_BK_ARENA = 0, CJ_BK_CONST, CJ_BK_ARG, CJ_BK_RESULT, CJ_BK_NONE };
enum { CJ_MAX_RANK = 16 };

typedef struct cj_lw_buf {
  int64_t size;
  int32_t def, last; /* positions; def = -1 until defined */
  uint8_t kind;      /* CJ_BK_* */
  bool taken;        /* its memory was taken over by an in-place successor */
  int32_t index;     /* ARG / RESULT index */
  int64_t off;       /* CONST: pool offset; ARENA: assigned offset */
  int32_t hint;      /* an input buffer whose memory this one may reuse (-1) */
  int32_t merged;    /* merged into this buffer (-1): it is that buffer from then on */
  int32_t group;     /* the private group it was created in (-1: none) */
} cj_lw_buf;

/* A tensor operand as a kernel sees it. */
typedef struct cj_lw_tensor {
  int32_t buf;
  cj_dtype dtype;
  int32_t rank;
  const int64_t *dims;
  int64_t nelems;
  int64_t nbytes;
  const cj_type *type;
} cj_lw_tensor;

/* ---- positions and buffers ---- */
int32_t cj_lw_pos(cj_lw *L);       /* the position the next step will get */
int32_t cj_lw_advance(cj_lw *L);   /* reserves a position (region starts) and returns it */
int32_t cj_lw_new_buf(cj_lw *L, int64_t size, uint8_t kind);
cj_lw_buf *cj_lw_buf_at(cj_lw *L, int32_t id);
/* a buffer read (use) or written (def) at the current position */
void cj_lw_use(cj_lw *L, int32_t buf);
void cj_lw_def(cj_lw *L, int32_t buf);
/* The step about to be emitted may write `out` over `in` (elementwise: every output element
 * depends only on the input element at the same index, read before it is written). */
void cj_lw_hint_inplace(cj_lw *L, int32_t out, int32_t in);
bool cj_lw_has_hint(cj_lw *L, int32_t out, int32_t in, int32_t pos);
/* Makes buffer `from` the same buffer as `into` (every slot of `from` resolves to `into`). */
void cj_lw_merge(cj_lw *L, int32_t from, int32_t into);

/* ---- values ---- */
/* A (non-virtual) tensor operand: materializes a virtual broadcast if needed. */
CJ_MUST_USE cj_status cj_lw_operand(cj_lw *L, cj_op *op, uint32_t i, cj_lw_tensor *out);
/* Describes value v (which must be a static tensor with a buffer). */
CJ_MUST_USE cj_status cj_lw_tensor_of(cj_lw *L, const cj_op *op, cj_value *v, cj_lw_tensor *out);
/* The same, describing a quantized tensor as its storage (for kernels that run on the stored
 * integers: data movement, quantized convolution) instead of refusing it. */
CJ_MUST_USE cj_status cj_lw_storage_tensor_of(cj_lw *L, const cj_op *op, cj_value *v, cj_lw_tensor *out);
/* Creates the buffer of result i (a static tensor or token) and describes it. */
CJ_MUST_USE cj_status cj_lw_result(cj_lw *L, cj_op *op, uint32_t i, cj_lw_tensor *out);
/* Makes result i of op share the buffers of value `src` (aliasing ops). */
CJ_MUST_USE cj_status cj_lw_alias(cj_lw *L, cj_op *op, uint32_t i, cj_value *src);
/* Leaves (buffers) of a value; materializes virtual values. */
CJ_MUST_USE cj_status cj_lw_leaves(cj_lw *L, const cj_op *op, cj_value *v, int32_t *n, const int32_t **leaves);
/* Binds a value to given leaf buffers (block arguments, control-flow results). */
CJ_MUST_USE cj_status cj_lw_bind(cj_lw *L, cj_value *v, int32_t n, const int32_t *leaves);
/* Number of leaves of a type (tensor/token 1, tuple: sum over members) and their byte sizes. */
int32_t cj_lw_type_leaves(const cj_type *t);
CJ_MUST_USE cj_status cj_lw_leaf_types(const cj_type *t, const cj_type **out, int32_t cap, int32_t *n);
int64_t cj_lw_type_bytes(const cj_type *t); /* static tensor bytes (tokens: 0); -1 if dynamic */

/* ---- steps ---- */
/* Emits a step at the current position (the position then advances). Slots are created for
 * `nin` input buffers and `nout` output buffers (uses/defs are recorded). */
cj_step *cj_lw_emit(cj_lw *L, const cj_op *op, cj_kernel_fn fn, const void *params,
                    uint32_t nin, const int32_t *in, uint32_t nout, const int32_t *out);
/* Allocation in the program arena (zeroed; NULL -> the lowering fails with out-of-memory). */
void *cj_lw_alloc(cj_lw *L, size_t bytes);
/* A slot array for extra buffers a kernel reads or writes through its params (uses recorded
 * as reads at the current position when `use`, else as writes). */
cj_slot *cj_lw_slots(cj_lw *L, uint32_t n, const int32_t *bufs, bool use);
/* A constant buffer holding `bytes` (copied into the pool). */
int32_t cj_lw_const(cj_lw *L, const void *data, int64_t bytes);
/* The bytes of a constant buffer while lowering (NULL if `buf` is no constant); valid until the
 * next cj_lw_const. */
const void *cj_lw_const_bytes(cj_lw *L, int32_t buf);
/* Cost analysis (GetCostAnalysis): flops and transcendental evaluations this op performs. */
void cj_lw_add_cost(cj_lw *L, double flops, double transcendentals);
/* A kernel that claims a per-thread temporary area (cj_tls_claim) needs at least `bytes`. */
void cj_lw_set_tls_bytes(cj_lw *L, int64_t bytes);
/* "<op name> at <where>", in the program arena. */
const char *cj_lw_what(cj_lw *L, const cj_op *op);
/* Emits a step filling buffer `out` with n copies of the esize bytes at elem (k_data.c). */
CJ_MUST_USE cj_status cj_lw_emit_fill(cj_lw *L, cj_op *op, const void *elem, int esize, int64_t n,
                                      int32_t out);
/* A kernel's helper: dst[0..m) = the element of es bytes at src, in vector stores. */
void cj_fill_elems(char *dst, const char *src, int es, int64_t m);

/* ---- nested regions ----
 * Lowering a region into its own plan: begin() starts a new step list, the caller binds the
 * block arguments (cj_lw_bind), calls cj_lw_block, may emit more steps (copies into carried
 * buffers), then end() finishes the plan. Positions continue from the enclosing plan. */
typedef struct cj_lw_saved {
  void *steps;
  uint32_t n, cap;
} cj_lw_saved;
void cj_lw_plan_begin(cj_lw *L, cj_lw_saved *saved);
CJ_MUST_USE cj_status cj_lw_plan_end(cj_lw *L, cj_lw_saved *saved, cj_plan *out);
/* cj_lw_plan_end after a lowering whose status is st: the first error is the one returned (the
 * plan is ended either way). In k_control.c. */
CJ_MUST_USE cj_status cj_lw_plan_finish(cj_lw *L, cj_lw_saved *saved, cj_plan *out, cj_status st);
/* Lowers a block whose terminator returns one value into its own plan *out (the caller has
 * bound its arguments) and gives that value's buffer; `what` names the block in the error
 * ("the condition"). In k_control.c. */
CJ_MUST_USE cj_status cj_lw_value_plan(cj_lw *L, cj_op *op, cj_block *b, const char *what, cj_plan *out,
                                       int32_t *buf);
/* Numbers the values of a block built during lowering (not part of the function when the
 * lowering began; no nested regions) so that it can be lowered with cj_lw_block. */
CJ_MUST_USE cj_status cj_lw_adopt_block(cj_lw *L, cj_block *b);
/* Lowers every op of the block except its terminator, whose operand values are returned. */
CJ_MUST_USE cj_status cj_lw_block(cj_lw *L, cj_block *b, cj_op **out_terminator);
/* Buffers live across [start, now]: every buffer defined before `start` and used at or after it
 * lives until now; every buffer used by the driver step lives from start. Call after emitting a
 * step that runs nested plans repeatedly (while, reduce with a body, ...). */
void cj_lw_extend_region(cj_lw *L, int32_t start);
void cj_lw_def_at(cj_lw *L, int32_t buf, int32_t pos);
/* Slot lists registered so far (a mark for cj_lw_plan_self_contained). */
uint32_t cj_lw_slot_mark(const cj_lw *L);
/* Whether the steps of plan p (NULL: the plan being built) reach buffers only through their own
 * in/out slots: the slot lists registered in [mark, end) while it was lowered are exactly those
 * (no nested plans, no extra slot lists). */
bool cj_lw_plan_self_contained(const cj_lw *L, const cj_plan *p, uint32_t mark, uint32_t end);
/* The steps of the plan being lowered: their count, and step i (NULL past the end). */
uint32_t cj_lw_nsteps(const cj_lw *L);
cj_step *cj_lw_step_at(cj_lw *L, uint32_t i);
/* Replaces the input list of step st (of the plan being lowered) by the n buffers bufs, used
 * from the current position on (st->nin = n); false if st has no input list or on out of memory.
 * The kernel's parameters must say how to read the new list. */
bool cj_lw_step_set_inputs(cj_lw *L, cj_step *st, uint32_t n, const int32_t *bufs);
/* A copy of plan p whose slots of buffer a[i] name b[i] and of b[i] name a[i] (a loop's
 * double-buffered carry), recording no uses; p must be self-contained. */
CJ_MUST_USE cj_status cj_lw_plan_swapped(cj_lw *L, const cj_plan *p, int32_t n, const int32_t *a,
                                         const int32_t *b, cj_plan *out);

/* ---- private groups: nested plans run on several threads at once ----
 * Buffers created between cj_lw_group_begin and cj_lw_group_end form a group: the planner packs
 * them into one region of the arena and reserves `copies` copies of it, `stride` bytes apart.
 * A kernel that runs the group's nested plan on several threads at once gives the k-th
 * concurrent run copy k, through a context whose scratch base is shifted by k * stride
 * (cj_exec_ctx_shifted). `isolated` says that every arena buffer the steps lowered inside the
 * group touch belongs to the group (no captured arena values): otherwise only copy 0 (the
 * plan as planned) may be used. The descriptor is filled in when the lowering ends. */
typedef struct cj_lw_group {
  int64_t stride;
  int32_t copies;
  bool isolated;
} cj_lw_group;
int32_t cj_lw_group_begin(cj_lw *L);
/* `copies` wanted (the planner may give fewer, at least 1, when the region is large) */
cj_lw_group *cj_lw_group_end(cj_lw *L, int32_t group, int32_t copies);

/* ---- common kernels ---- */
CJ_MUST_USE cj_status cj_k_copy(cj_exec_ctx *ctx, const cj_step *st); /* in[i] -> out[i], params: sizes */
/* Emits a copy of `n` buffer pairs (sizes from the buffers). */
CJ_MUST_USE cj_status cj_lw_emit_copies(cj_lw *L, const cj_op *op, uint32_t n, const int32_t *src,
                            const int32_t *dst);

/* Whether the CPU backend has a lowering for `op` (its supports_op); on false *why says why. */
bool cj_cpu_can_lower(const cj_op *op, const char **why);

/* Elementwise lowering (lower_ew.c): called for every op; returns true if the op was taken
 * into the current fusion group. cj_lw_ew_flush emits the pending group. */
bool cj_lw_ew_is_fusible(const cj_op *op);
CJ_MUST_USE cj_status cj_lw_ew_add(cj_lw *L, cj_op *op);
CJ_MUST_USE cj_status cj_lw_ew_flush(cj_lw *L);
/* lower_ew.c's per-lowering state (kept in the cj_lw: cj_lw_ew_state), and whether value v is
 * produced by the pending (not yet emitted) fusion group. */
void *cj_lw_ew_state_new(void);
void cj_lw_ew_state_free(void *s);
void *cj_lw_ew_state(cj_lw *L);
bool cj_lw_ew_pending_value(cj_lw *L, cj_value *v);
/* Input fusion (a reduction reading its operand once, not a stored copy): when the pending
 * group's only stored value would be v and v's one user is the op being lowered, the group is
 * taken as a source instead of a step: *taken is set, and *src can compute any run of v's
 * elements (row-major index) into a caller's buffer. Otherwise the group is flushed as usual.
 * src->in_bufs are the buffers the source reads (the taking step lists them as its inputs). */
enum { CJ_EW_SRC_MAX_IN = 48 };
typedef struct cj_ew_src {
  const void *prog; /* lower_ew.c's program, in the plan's arena */
  int32_t nin;
  const int32_t *in_bufs;
} cj_ew_src;
CJ_MUST_USE cj_status cj_lw_ew_take(cj_lw *L, cj_value *v, cj_ew_src *src, bool *taken);
/* elements [start, start + m) of the source's value into dst (its storage type); ins: the
 * pointers of src->in_bufs in this execution */
void cj_ew_src_eval(const void *prog, cj_exec_ctx *ctx, char *const *ins, int64_t start,
                    int64_t m, char *dst);
/* How many ops use value v (counted before lowering). */
uint32_t cj_lw_num_uses(cj_lw *L, cj_value *v);
/* Virtual values for elementwise fusion */
bool cj_lw_value_is_virtual(cj_lw *L, cj_value *v);
/* Whether v has its buffers already (bound, not virtual). */
bool cj_lw_value_is_bound(cj_lw *L, cj_value *v);
/* An op of the block being lowered that a step emitted earlier computes already (sibling
 * reductions in one step, k_reduce.c): cj_lw_take_op records it (false: out of memory);
 * cj_lw_was_taken, called when the walk reaches it, says whether it was and forgets it. */
bool cj_lw_take_op(cj_lw *L, const cj_op *op);
bool cj_lw_was_taken(cj_lw *L, const cj_op *op);
/* For a virtual value: its source buffer, dtype and element strides (rank of v). */
void cj_lw_virtual_view(cj_lw *L, cj_value *v, int32_t *src, cj_dtype *dt, const int64_t **strides);
/* Whether every user of v is an elementwise op of the same block, or a scatter reading it as an
 * input (for virtual broadcasts). */
bool cj_lw_only_ew_users(cj_lw *L, cj_value *v);
/* Marks v virtual with a view of buffer src. */
CJ_MUST_USE cj_status cj_lw_make_virtual(cj_lw *L, cj_value *v, int32_t src, cj_dtype dt,
                             const int64_t *strides);
/* Views with an offset (static slices read in place by fused loops, lower.c): the same, starting
 * `off` elements into src. cj_lw_value_is_virtual is false for them (readers that know no
 * offset materialize them); cj_lw_value_is_view is true for every virtual value, and
 * cj_lw_view_offset gives its offset (0 for broadcasts). */
CJ_MUST_USE cj_status cj_lw_make_view(cj_lw *L, cj_value *v, int32_t src, cj_dtype dt, int64_t off,
                                      const int64_t *strides);
bool cj_lw_value_is_view(cj_lw *L, cj_value *v);
/* Bounded views (virtual pads, k_data.c): a view whose elements outside [lo, hi) (per dim, in
 * v's indices) are the value in constant buffer `pad`; `off` may be negative (only in-bounds
 * elements are read). cj_lw_value_is_virtual is false for them. */
CJ_MUST_USE cj_status cj_lw_make_bounded_view(cj_lw *L, cj_value *v, int32_t src, cj_dtype dt,
                                              int64_t off, const int64_t *strides,
                                              const int64_t *lo, const int64_t *hi, int32_t pad);
/* Whether v is a bounded view; then its bounds and padding buffer. */
bool cj_lw_view_bounds(cj_lw *L, cj_value *v, const int64_t **lo, const int64_t **hi, int32_t *pad);
/* Whether every user of v is an elementwise op of its block or a static slice there. */
bool cj_lw_only_view_users(cj_lw *L, cj_value *v);
/* A select whose on_true or on_false is a gather lowered there (k_gather.c): the gather, and the
 * select too when one step can do both (*done). */
CJ_MUST_USE cj_status cj_lw_gather_select(cj_lw *L, cj_op *op, bool *done);
/* A pad kept as a bounded view when it can be (*done), k_data.c. */
CJ_MUST_USE cj_status cj_lw_pad_view(cj_lw *L, cj_op *op, bool *done);
/* Emits the step writing bounded view (type t) out into buffer out. */
CJ_MUST_USE cj_status cj_lw_emit_bounded(cj_lw *L, const cj_op *op, const cj_type *t, int32_t src,
                                         int64_t off, const int64_t *strides, const int64_t *lo,
                                         const int64_t *hi, int32_t pad, int32_t out);
int64_t cj_lw_view_offset(cj_lw *L, cj_value *v);
/* Strided copy parameters / kernel, shared by data movement ops. */
typedef struct cj_strided {
  int32_t rank;        /* after collapsing */
  int32_t esize;
  int64_t dims[CJ_MAX_RANK];
  int64_t sstride[CJ_MAX_RANK]; /* bytes */
  int64_t dstride[CJ_MAX_RANK]; /* bytes */
  int64_t soff, doff; /* byte offsets */
} cj_strided;
/* Collapses dims that are contiguous in both. */
void cj_strided_simplify(cj_strided *s);
/* A strided copy (in L's arena) into a row-major tensor of `rank` `dims` of es-byte elements,
 * reading along dimension d with a stride of sst[d] elements, offsets 0 (not simplified);
 * NULL when out of memory. */
cj_strided *cj_strided_new(cj_lw *L, int32_t rank, const int64_t *dims, const int64_t *sst, int es);
void cj_strided_run(const cj_strided *s, char *dst, const char *src);
/* Reductions whose body is a single binary op (k_reduce.c), shared with the collectives. */
enum { CJ_RED_ADD, CJ_RED_MUL, CJ_RED_MAX, CJ_RED_MIN, CJ_RED_AND, CJ_RED_OR, CJ_RED_XOR };
/* The CJ_RED_* op of `op`'s region when it is `^bb0(%a, %b): %r = op %a, %b; return %r` (either
 * argument order) on scalars of dt, else -1. */
int cj_reduce_region_op(const cj_op *op, cj_dtype dt);
/* acc[i] = acc[i] op x[i] for i < n, with op a CJ_RED_* on elements of dt (maximum/minimum
 * propagate NaN; integers wrap); NULL when op does not apply to dt. */
typedef void (*cj_combine_fn)(void *acc, const void *x, int64_t n);
cj_combine_fn cj_reduce_combiner(int op, cj_dtype dt);

/* Writes n copies of the es-byte value at v to out (k_data.c): a memset when the value's bytes
 * are all equal, fixed-size stores otherwise. */
void cj_fill_value(char *out, const char *v, int es, int64_t n);
void cj_strided_run_par(cj_exec_ctx *ctx, const cj_strided *s, char *dst, const char *src);

/* The module being lowered (for new types) */
cj_module *cj_lw_module(cj_lw *L);
/* Always NULL: the pool is known only when a program runs (cj_exec_ctx.pool); split work there. */
cj_threadpool *cj_lw_pool(cj_lw *L);

/* Row-major strides (elements) of dims. */
static inline void cj_row_strides(int32_t rank, const int64_t *dims, int64_t *out) {
  int64_t s = 1;
  for (int32_t d = rank - 1; d >= 0; d--) {
    out[d] = s;
    s *= dims[d];
  }
}

/* custom_call to a registered XLA FFI handler (k_ffi.c) */
CJ_MUST_USE cj_status cj_lower_cc_ffi(cj_lw *L, cj_op *op, const char *target, size_t len);

/* lowering functions: one per lower.def row */
#define LOWER(id, fn) CJ_MUST_USE cj_status fn(cj_lw *L, cj_op *op);
#include "cpu/lower.def"
#undef LOWER

#endif
