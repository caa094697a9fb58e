/* cjrt: what the SPMD passes (spmd.c: meshes, shardings, manual computations; spmd_partition.c:
 * the per-op rules of the partitioner) share. Private to src/compiler/spmd*.c. */
#ifndef CJ_COMPILER_SPMD_INTERNAL_H
#define CJ_COMPILER_SPMD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "ir/ir.h"

enum { MAX_AXES = 32, MAX_MESHES = 16, NAME_MAX_LEN = 64 };

enum { MAX_MESH_IDS = 4096 };

typedef struct mesh {
  char name[NAME_MAX_LEN];
  int n;
  char axes[MAX_AXES][NAME_MAX_LEN];
  int64_t sizes[MAX_AXES];
  int64_t total;
  /* device_ids=[...]: the logical (partition) id at each mesh position; absent = iota */
  int64_t *ids;
  int64_t nids;
} mesh;

typedef struct meshes {
  mesh m[MAX_MESHES];
  int n;
} meshes;

/* One value's sharding: per dimension the product of the axis sizes it is split over, and a
 * canonical text of the split (to compare two shardings). */
typedef struct sharding {
  int rank;
  int64_t div[64];
  char canon[512];
  const mesh *mesh;
  bool split;   /* some dimension is divided */
  bool subaxis; /* some dimension is split over a sub-axis */
  bool partial;   /* has unreduced={...} axes (of size > 1): each device holds a partial sum */
  uint64_t unred; /* those axes (bit i: mesh axis i) */
  int8_t ukind;   /* how the partial values make the value: 0 their sum, 1 max, 2 min */
  uint64_t open;  /* dims marked open ("?"): propagation may split them further (bit d) */
  int8_t nax[64];
  int8_t ax[64][8]; /* per dimension: the mesh axes (indices), major to minor */
} sharding;

typedef struct sharded_val {
  cj_value *v;
  char canon[512];
  sharding sh;
  cj_value *whole; /* v gathered whole on every device, once needed */
  bool argument;   /* an argument of @main (else a result of a manual computation) */
} sharded_val;

/* A value held as partial sums over some axes (an unreduced argument of @main or result of a
 * manual computation) and its all_reduce over them, which every other use reads. */
typedef struct partial_val {
  cj_value *sum, *part;
  uint64_t unred;
  int8_t ukind;
} partial_val;

typedef struct state {
  cj_module *m;
  cj_op *main;
  meshes ms;
  int64_t ndev;
  sharded_val *sv;
  uint32_t nsv, capsv;
  partial_val *pv;
  uint32_t npv, cappv;
} state;

/* ---- spmd.c ---- */
/* #sdy.sharding<...> (or the body <...> alone) on a value of type t */
CJ_MUST_USE cj_status cj_spmd_read_sharding(const cj_op *where, const char *what, const cj_attr *a,
                                const meshes *ms, const cj_type *t, sharding *out);
/* The per-device type of a value of global type t split as sh. */
CJ_MUST_USE cj_status cj_spmd_local_type(cj_module *m, const cj_op *where, const char *what, const cj_type *t,
                             const sharding *sh, const cj_type **out);
/* Device groups along `axes` of mesh me ([*ng x *gs] ids, malloc'd; NULL: out of memory). */
int64_t *cj_spmd_mesh_groups(const mesh *me, const int *axes, int naxes, int64_t *ng, int64_t *gs);
/* Records that value v (a per-device value) is sharded as sh. */
CJ_MUST_USE cj_status cj_spmd_mark(state *S, cj_value *v, const sharding *sh);
const sharded_val *cj_spmd_find(const state *S, const cj_value *v);
/* v (sharded as sh) gathered whole on every device, before `before`. */
CJ_MUST_USE cj_status cj_spmd_gather_whole(state *S, cj_op *before, cj_value *v, const sharding *sh,
                               cj_value **out);

/* Partitions the ops of block b in order (@main's body, or a loop's region): manual
 * computations (only in @main's body), sharding constraints, cj_spmd_partition_op. */
CJ_MUST_USE cj_status cj_spmd_partition_block(state *S, cj_block *b);

/* While loop w's whole carries that its body yields through a constraint asking for unreduced
 * axes (a scan's gradient accumulator): carried as partial values (pc[i], ps[i] their sharding):
 * the operand made partial, the condition's and body's arguments summed once for their other
 * uses. Before the regions are partitioned; split[i]: carry i is split. */
CJ_MUST_USE cj_status cj_spmd_partial_carries(state *S, cj_op *w, const bool *split, sharding *ps, bool *pc);
/* After: the body yields those carries' partial values, and each result is summed once after the
 * loop for its uses that are not unreduced. */
CJ_MUST_USE cj_status cj_spmd_partial_carries_out(state *S, cj_op *w, const sharding *ps, const bool *pc);

/* Whether op's regions hold a sharding constraint or a manual computation (at any depth). */
bool cj_spmd_regions_marked(const cj_op *op);

/* ---- spmd_gspmd.c ---- */
/* GSPMD's HloSharding text (an mhlo.sharding: "{devices=[2,1]<=[2]}", "{replicated}",
 * "{maximal device=0}", "{manual}", ...) on a value of global type t: a sharding over a mesh made
 * from its tile assignment (added to ms, or one there with the same tiles and devices). ndev:
 * the program's partitions. *manual: the value is per-device already ({manual}). */
CJ_MUST_USE cj_status cj_spmd_read_hlo(meshes *ms, int64_t ndev, const cj_op *where, const char *what,
                                       const char *text, size_t len, const cj_type *t, sharding *out,
                                       bool *manual);

/* ---- spmd_partition.c ---- */
/* Rewrites op (in @main's body, not a manual computation or the return) into its per-device
 * form: operands resharded as its rule needs, result types local, collectives added; results
 * that stay split are recorded (cj_spmd_mark). */
CJ_MUST_USE cj_status cj_spmd_partition_op(state *S, cj_op *op);
/* v, a per-device value sharded as `from` (NULL: replicated), as `to` (NULL: replicated),
 * inserted before `before`. */
CJ_MUST_USE cj_status cj_spmd_reshard(state *S, cj_op *before, cj_value *v, const sharding *from,
                          const sharding *to, cj_value **out);
/* v, held as partial sums over sh's unreduced axes, summed over them (an all_reduce before
 * `before`); v itself when sh has none. */
CJ_MUST_USE cj_status cj_spmd_reduce_partial(state *S, cj_op *before, cj_value *v, const sharding *sh,
                                             cj_value **out);
/* v, a whole (reduced) value, as partial sums over sh's unreduced axes: v on the first device of
 * each group along them, zeros on the others (before `before`); for max or min partial values,
 * v itself. */
CJ_MUST_USE cj_status cj_spmd_make_partial(state *S, cj_op *before, cj_value *v, const sharding *sh,
                                           cj_value **out);
/* v, split as `from`, as partial sums over the axes of `unred` that split its dims whole (each
 * device's tile in place among zeros, as XLA reshards P("x") to P(unreduced={"x"})): *out, with
 * *psh its sharding (those dims whole, those axes unreduced); *out = NULL when no dim is split
 * only over such axes. */
CJ_MUST_USE cj_status cj_spmd_pad_partial(state *S, cj_op *before, cj_value *v, const sharding *from,
                                          uint64_t unred, sharding *psh, cj_value **out);
/* Rewrites the canonical text of sh from its axes (after a rule built it). */
void cj_spmd_canon(sharding *sh);

#endif
