/* cjrt: multi-device programs in the compiler.
 *
 *   run_parallel   interpreter.run_parallel (the reference interpreter's test op that runs one
 *                  function per process of a replicas x partitions grid) is made self-contained:
 *                  one region per process, replica-major, holding a copy of its function, and
 *                  the attribute cj.grid = array<i64: replicas, partitions>. Later passes
 *                  (inlining, folding, dead code, stripping other functions) then see the
 *                  programs as nested code; the backend runs the regions concurrently.
 *
 *   partition      the per-device program of a multi-partition module (docs/SPMD.md). @main's
 *                  sharded arguments and results take their per-device (local) shapes from their
 *                  sdy.sharding; manual computations (jax.shard_map, jax.pmap) are inlined (their
 *                  collectives already name the devices of the mesh); every other op is
 *                  partitioned by its rule (spmd_partition.c: elementwise, broadcast, reshape,
 *                  transpose, dot_general, reduce, batch-split convolution, ops that leave some
 *                  dims alone), its operands resharded (all_gather + slice by partition id) as
 *                  the rule needs and all_reduces added where a contraction or reduction was
 *                  split; ops without a rule run whole on every device. Sharding constraints
 *                  reshard. Results take the sharding @main asks for, else the one propagation
 *                  gave them, reported as mhlo.spmd_output_sharding. Shardy's round-trip form
 *                  (xla.sdy.* custom calls and frontend attributes) is read back as the sdy
 *                  ops first. Sub-axes and uneven splits (but for constraints) fail with
 *                  UNIMPLEMENTED naming them. Nothing happens for one partition.
 */
#ifndef CJ_COMPILER_SPMD_H
#define CJ_COMPILER_SPMD_H

#include <stdint.h>

#include "base/status.h"
#include "ir/ir.h"

CJ_MUST_USE cj_status cj_pass_run_parallel(cj_module *m, cj_op *func);

/* Replica groups given as mesh axes (#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [...]>,
 * what jaxlib 0.12 emits for collectives over named axes), on every op of m, become the dense
 * [groups x size] tensors of ids they stand for. The mesh is an sdy.mesh of the module (or its
 * round-trip spelling) or an inline #stablehlo.mesh. Sub-axes are not supported. */
CJ_MUST_USE cj_status cj_spmd_resolve_groups(cj_module *m);

/* Rewrites module m (before cj_compile_passes) into the program one device runs, for a
 * num_replicas x num_partitions execution. Resolves mesh-axes replica groups first (whatever
 * the device count). */
CJ_MUST_USE cj_status cj_spmd_partition(cj_module *m, int64_t num_replicas, int64_t num_partitions);

#endif
