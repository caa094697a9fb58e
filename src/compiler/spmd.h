/* cjrt: multi-device programs in the compiler.
 *
 *   run_parallel   interpreter.run_parallel (the reference interpreter's test op that runs one
 *                  function per process of a replicas x partitions grid) is made self-contained:
 *                  one region per process, replica-major, holding a copy of its function, and
 *                  the attribute cj.grid = array<i64: replicas, partitions>. Later passes
 *                  (inlining, folding, dead code, stripping other functions) then see the
 *                  programs as nested code; the backend runs the regions concurrently.
 *
 *   partition      the per-device program of a multi-partition module whose sharded values are
 *                  all handled manually (jax.shard_map and jax.pmap: sdy.manual_computation over
 *                  every mesh axis) or replicated. @main's sharded arguments and results take
 *                  their per-device (local) shapes from their sdy.sharding / mhlo.sharding, the
 *                  manual computation's body is inlined (its collectives already name the
 *                  devices of the mesh), and the sharding attributes are dropped. A manual
 *                  computation in a called function (jit of a jitted shard_map) is inlined into
 *                  @main first. Programs that need real SPMD propagation (a sharded argument of
 *                  @main used outside a manual computation, a partially manual computation)
 *                  fail with UNIMPLEMENTED naming what is missing. A replicated value that a
 *                  manual computation takes in shards is sliced on each device (by
 *                  partition_id); a sharded result of a manual computation read by ops outside
 *                  one, or a value sharded otherwise than a manual computation or @main's
 *                  result takes it, is gathered whole (all_gather over the mesh axes) and then
 *                  sliced as needed. Shardy's round-trip form
 *                  (xla.sdy.* custom calls and frontend attributes) is read back as the sdy
 *                  ops first. Nothing happens for one partition.
 */
#ifndef CJ_COMPILER_SPMD_H
#define CJ_COMPILER_SPMD_H

#include <stdint.h>

#include "base/status.h"
#include "ir/ir.h"

cj_status cj_pass_run_parallel(cj_module *m, cj_op *func);

/* Replica groups given as mesh axes (#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [...]>,
 * what jaxlib 0.12 emits for collectives over named axes), on every op of m, become the dense
 * [groups x size] tensors of ids they stand for. The mesh is an sdy.mesh of the module (or its
 * round-trip spelling) or an inline #stablehlo.mesh. Sub-axes are not supported. */
cj_status cj_spmd_resolve_groups(cj_module *m);

/* Rewrites module m (before cj_compile_passes) into the program one device runs, for a
 * num_replicas x num_partitions execution. Resolves mesh-axes replica groups first (whatever
 * the device count). */
cj_status cj_spmd_partition(cj_module *m, int64_t num_replicas, int64_t num_partitions);

#endif
