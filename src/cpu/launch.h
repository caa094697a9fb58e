/* cjrt: the CPU backend's launches: the devices of one multi-device execution meeting at
 * collectives (private to src/cpu/).
 *
 * A launch knows the execution's grid (num_replicas x num_partitions; device index
 * d = replica * num_partitions + partition, the runtime's order) and offers two ways to meet:
 *
 *   meetings   a group of devices rendezvous at one collective: each member joins with a
 *              pointer it publishes (its operand and result addresses), waits until every member
 *              joined, reads its peers' pointers and does its share of the work (which may read
 *              peers' operands and write peers' results: all device memory is host memory), then
 *              leaves; leaving waits until every member left, so no one's memory is reused while
 *              a peer still reads or writes it. Meetings are matched by (key, group) in order:
 *              the n-th meeting a device joins for a key meets the n-th of its peers.
 *   mailboxes  send/recv: a message is copied into the launch by the sender (which never waits)
 *              and taken by the receiver (which waits for it), matched by channel, source and
 *              target in order.
 *
 * Waiters sleep on a condition variable, after spinning up to 50 us at a meeting when the launch
 * has no more devices than the machine has cores (a futex wake costs ~70 us). Deadlock freedom:
 * a failing device aborts the launch (cj_cpu_launch_abort) and every member still waiting fails
 * with the reason; a device whose program ends (cj_cpu_launch_finished) while peers wait for it
 * at a meeting or a mailbox makes them fail, naming it, instead of hanging.
 *
 * Ownership: a launch is created by launch_create (the runtime) or by the run_parallel kernel,
 * and freed by its creator after every device finished. Meeting objects are recycled inside the
 * launch.
 */
#ifndef CJ_CPU_LAUNCH_H
#define CJ_CPU_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "runtime/backend.h"

CJ_MUST_USE cj_status cj_cpu_launch_new(int32_t num_replicas, int32_t num_partitions, cj_launch **out);
void cj_cpu_launch_free(cj_launch *l); /* NULL is fine */
/* Cancels the launch: waiters fail with `why` (consumed; the first reason is kept). */
void cj_cpu_launch_abort(cj_launch *l, cj_status why);
/* Device `device` ended its program (successfully or not). */
void cj_cpu_launch_finished(cj_launch *l, int32_t device);
int32_t cj_cpu_launch_replicas(const cj_launch *l);
int32_t cj_cpu_launch_partitions(const cj_launch *l);

/* ---- meetings ---- */
typedef struct cj_meet cj_meet;
typedef struct cj_meet_req {
  uint64_t key;           /* what meets (the op kind and channel) */
  int64_t group;          /* which process group of that key */
  int32_t size, rank;     /* the group's size and this device's index in it */
  const int32_t *members; /* size device indices, in rank order */
  uint64_t check;         /* a signature every member must bring (kind, types, sizes) */
  void *mine;             /* published to the peers */
  const char *what;       /* "stablehlo.all_reduce at f.mlir:3:5", for messages */
} cj_meet_req;

/* Joins a meeting and waits for the whole group; *peers then holds the `size` published
 * pointers in rank order. On error (abort, a peer that ended, a mismatch) nothing was joined. */
CJ_MUST_USE cj_status cj_meet_join(cj_launch *l, const cj_meet_req *r, cj_meet **out, void *const **peers);
/* Leaves a joined meeting; returns when every member left. */
void cj_meet_leave(cj_launch *l, cj_meet *m);

/* ---- mailboxes ----
 * from/to are device indices; -1/-1 is the host queue of a channel (run_parallel's host). */
CJ_MUST_USE cj_status cj_mail_send(cj_launch *l, int64_t channel, int32_t from, int32_t to,
                       const void *const *parts, const size_t *sizes, int32_t nparts,
                       const char *what);
CJ_MUST_USE cj_status cj_mail_recv(cj_launch *l, int64_t channel, int32_t from, int32_t to,
                       void *const *parts, const size_t *sizes, int32_t nparts,
                       const char *what);

#endif
