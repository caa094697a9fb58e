/* cjrt: the thread pool. One per client, never more threads than cores.
 *
 * Shape (DESIGN.md "Performance shape"): N-1 workers for N threads, the caller's thread takes
 * part in parallel loops, idle workers spin briefly (~100 us) before sleeping on a futex/condvar,
 * and only work worth more than a few microseconds is split.
 *
 * Two uses:
 *   - cj_pool_parallel_for: data-parallel loops inside a kernel; blocks until done. Safe to call
 *     from a pool worker (nested calls run inline on the caller) and from any thread.
 *   - cj_pool_submit: fire-and-forget tasks (asynchronous executions, event callbacks) run on a
 *     separate set of task threads so that a long task never blocks parallel loops.
 *
 * Ownership: the pool owns its threads; cj_pool_destroy waits for submitted tasks to finish.
 */
#ifndef CJ_BASE_THREADPOOL_H
#define CJ_BASE_THREADPOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct cj_threadpool cj_threadpool;

/* A thread of its own (not a pool's) running fn(arg) on a stack of stack_bytes:
 * cj_thread_start says whether it started; cj_thread_join waits for it if it did. */
typedef struct cj_thread {
  pthread_t id;
  bool started;
} cj_thread;
bool cj_thread_start(cj_thread *t, size_t stack_bytes, void *(*fn)(void *), void *arg);
void cj_thread_join(cj_thread *t);

/* nthreads = total threads taking part in parallel_for, including the caller; 0 = number of
 * cores. NULL on failure (*out_status set). */
cj_threadpool *cj_pool_create(int nthreads, cj_status *out_status);
void cj_pool_destroy(cj_threadpool *p); /* NULL is fine */
int cj_pool_size(const cj_threadpool *p); /* threads taking part in parallel_for (>= 1) */

/* Calls fn(ctx, begin, end) over [0, n) split into chunks of at least `grain` items, in
 * parallel, and returns when all calls are done. p may be NULL (runs inline). */
typedef void (*cj_range_fn)(void *ctx, int64_t begin, int64_t end);
void cj_pool_parallel_for(cj_threadpool *p, int64_t n, int64_t grain, cj_range_fn fn, void *ctx);

/* Sets whether parallel loops started on the calling thread may wake sleeping workers (the
 * default: yes) and returns the previous setting. With waking off a loop is shared only with
 * workers still awake (spinning after earlier work) and otherwise runs on the caller alone: for
 * work too short to pay for a wake-up (~70 us here). Results do not depend on the setting. */
bool cj_pool_set_waking(bool may_wake);

/* Runs fn(ctx) soon on a task thread. Returns an error only if the task could not be queued
 * (then fn is not called). */
typedef void (*cj_task_fn)(void *ctx);
CJ_MUST_USE cj_status cj_pool_submit(cj_threadpool *p, cj_task_fn fn, void *ctx);

/* Number of online cores (>= 1). */
int cj_num_cores(void);

#endif
