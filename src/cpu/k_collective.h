/* cjrt: shared pieces of the collective kernels (private to src/cpu/k_collective*.c).
 *
 * Process groups: the spec splits the grid of (replica, partition) processes into groups in one
 * of four modes (cross_replica, cross_partition, cross_replica_and_partition, flattened_ids)
 * from `replica_groups`. The lowering reads the attributes once (coll_groups); each execution
 * finds its own group from its place in the grid, which only the launch knows (the grid of a
 * run_parallel op or of the PJRT execution).
 */
#ifndef CJ_CPU_K_COLLECTIVE_H
#define CJ_CPU_K_COLLECTIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu/launch.h"
#include "cpu/lower.h"

enum { CM_REPLICA, CM_PARTITION, CM_REPLICA_AND_PARTITION, CM_FLAT, CM_AXIS };

/* Most devices a group may have in one execution (a stack array of member indices). */
enum { CJ_COLL_MAX_DEVICES = 1024, CJ_COLL_MAX_OPERANDS = 256 };

typedef struct coll_groups {
  int32_t mode;        /* CM_*; CM_AXIS: every process along the mode's axis (permute) */
  int32_t axis_mode;   /* for CM_AXIS: CM_REPLICA or CM_PARTITION */
  int64_t ng, gs;      /* ng groups of gs ids (-1 pads); ng == 0: one group of all */
  const int64_t *ids;
} coll_groups;

/* This device's group: members (device indices r * np + p, in rank order), its rank, and an id
 * that differs between groups with different members. *found = false when the device is in no
 * group (then only *found is set). */
CJ_MUST_USE cj_status cj_coll_find_group(const coll_groups *g, const cj_exec_ctx *ctx, const char *what,
                          int32_t *members, int32_t *size, int32_t *rank, uint64_t *gid,
                          bool *found);

/* Reads replica_groups (and picks the mode from channel_handle / use_global_device_ids as the
 * spec says for `kind`) into *g, in the program arena. */
enum { CG_GATHER_LIKE, CG_REPLICA_OR_PARTITION };
CJ_MUST_USE cj_status cj_coll_read_groups(cj_lw *L, cj_op *op, int how, coll_groups *g);
int64_t cj_coll_channel(const cj_op *op);

/* The device index of this execution in its launch (0 without one). */
static inline int32_t coll_self(const cj_exec_ctx *ctx) {
  const cj_exec_args *a = ctx->args;
  return a->replica * cj_cpu_launch_partitions(a->launch) + a->partition;
}

/* Lowering context flag: send/recv to the host are allowed only inside interpreter.run_parallel,
 * whose driver plays the host (k_collective_parallel.c). */
bool cj_coll_in_run_parallel(void);

#endif
