/* cjrt: the thread pool (see threadpool.h and DESIGN.md "Performance shape").
 *
 * Parallel loops: the caller offers the loop to each worker through the worker's own slot (an
 * atomic pointer), works on chunks itself, then takes back every offer no worker has claimed
 * yet. A worker claims an offer with a compare-and-swap, so a job (which lives on the caller's
 * stack) is only ever touched by workers that claimed it, and the caller waits only for those.
 * A worker that was asleep when the loop was offered therefore never delays the caller.
 *
 * A thread that has turned waking off (cj_pool_set_waking) offers a loop only to workers that are
 * not asleep: the take-back below makes that safe even when a worker falls asleep between the
 * look and the offer (the offer is then taken back unclaimed).
 *
 * Idle workers spin for about 100 us (a spin hand-off costs ~0.2 us, a futex wake ~70 us), then
 * sleep on a condition variable. Sleeping and offering follow the Dekker pattern with sequentially
 * consistent atomics (worker: sleeping = 1, then read slot; caller: write slot, then read
 * sleeping), so a wake-up is never lost.
 *
 * Submitted tasks run on separate task threads, created on demand (a task may block, e.g. one
 * device of a multi-device execution waiting for its peers at a collective, so a new thread is
 * started whenever a task is queued and no task thread is idle).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include "base/threadpool.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fifo.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CJ_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CJ_CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CJ_CPU_RELAX() ((void)0)
#endif

enum { SPIN_NS = 100000, MAX_TASK_THREADS = 1024 };

typedef struct pf_job {
  cj_range_fn fn;
  void *ctx;
  int64_t n, chunk;
  _Atomic int64_t next;
} pf_job;

typedef struct worker {
  _Alignas(64) _Atomic(pf_job *) slot; /* NULL idle, a job offered, or CLAIMED(job) */
  atomic_int sleeping;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
  bool started;
  struct cj_threadpool *pool;
} worker;

typedef struct task_node {
  cj_task_fn fn;
  void *ctx;
  struct task_node *next;
} task_node;

struct cj_threadpool {
  int nthreads; /* including the caller */
  int nworkers; /* nthreads - 1 */
  worker *workers;
  atomic_int stop;
  pthread_mutex_t job_lock; /* one parallel loop at a time; others run inline */

  /* task threads */
  pthread_mutex_t tmu;
  pthread_cond_t tcv;      /* tasks queued or stopping */
  pthread_cond_t tdone_cv; /* a task finished (for destroy) */
  task_node *thead, *ttail;
  int tthreads, tidle, trunning;
  pthread_t *tids;
  int tcap;
  bool tstop;
};

static _Thread_local int tl_in_parallel; /* inside a parallel_for body: nested loops run inline */
static _Thread_local bool tl_no_wake;   /* cj_pool_set_waking(false) on this thread */

#define CLAIMED(j) ((pf_job *)((uintptr_t)(j) | 1u))

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int cj_num_cores(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n >= 1) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n >= 1 ? (int)n : 1;
}

static void run_chunks(pf_job *j) {
  for (;;) {
    int64_t b = atomic_fetch_add_explicit(&j->next, j->chunk, memory_order_relaxed);
    if (b >= j->n) break;
    int64_t e = b + j->chunk < j->n ? b + j->chunk : j->n;
    j->fn(j->ctx, b, e);
  }
}

static void *worker_main(void *arg) {
  worker *w = arg;
  struct cj_threadpool *p = w->pool;
  tl_in_parallel = 1; /* a worker never starts nested parallel loops */
  for (;;) {
    pf_job *j = atomic_load(&w->slot);
    if (!j) {
      uint64_t t0 = now_ns();
      unsigned spins = 0;
      while (!(j = atomic_load_explicit(&w->slot, memory_order_acquire))) {
        if (atomic_load_explicit(&p->stop, memory_order_relaxed)) return NULL;
        CJ_CPU_RELAX();
        if ((++spins & 63) == 0 && now_ns() - t0 > SPIN_NS) break;
      }
      if (!j) {
        pthread_mutex_lock(&w->mu);
        atomic_store(&w->sleeping, 1);
        while (!(j = atomic_load(&w->slot)) && !atomic_load(&p->stop))
          pthread_cond_wait(&w->cv, &w->mu);
        atomic_store(&w->sleeping, 0);
        pthread_mutex_unlock(&w->mu);
        if (!j) return NULL; /* stopping */
      }
    }
    if ((uintptr_t)j & 1u) continue; /* cannot happen: claims are ours */
    pf_job *expect = j;
    if (atomic_compare_exchange_strong(&w->slot, &expect, CLAIMED(j))) {
      run_chunks(j);
      atomic_store_explicit(&w->slot, NULL, memory_order_release);
    }
  }
}

static void wake_worker(worker *w) {
  if (atomic_load(&w->sleeping)) {
    pthread_mutex_lock(&w->mu);
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
  }
}

/* ---- task threads ---- */

static void *task_main(void *arg) {
  struct cj_threadpool *p = arg;
  pthread_mutex_lock(&p->tmu);
  for (;;) {
    while (!p->thead && !p->tstop) {
      p->tidle++;
      pthread_cond_wait(&p->tcv, &p->tmu);
      p->tidle--;
    }
    if (!p->thead) break; /* stopping and nothing left */
    task_node *t = p->thead;
    p->thead = t->next;
    if (!p->thead) p->ttail = NULL;
    p->trunning++;
    pthread_mutex_unlock(&p->tmu);
    t->fn(t->ctx);
    free(t);
    pthread_mutex_lock(&p->tmu);
    p->trunning--;
    pthread_cond_broadcast(&p->tdone_cv);
  }
  pthread_mutex_unlock(&p->tmu);
  return NULL;
}

cj_status cj_pool_submit(cj_threadpool *p, cj_task_fn fn, void *ctx) {
  if (!p || !fn) return cj_invalid("cj_pool_submit: no pool or no function");
  task_node *t = malloc(sizeof *t);
  if (!t) return cj_oom();
  t->fn = fn;
  t->ctx = ctx;
  t->next = NULL;
  pthread_mutex_lock(&p->tmu);
  if (p->tstop) {
    pthread_mutex_unlock(&p->tmu);
    free(t);
    return cj_status_make(CJ_FAILED_PRECONDITION, "cj_pool_submit: the pool is shutting down");
  }
  /* Count tasks already queued: each needs its own idle thread. */
  int queued = 0;
  for (task_node *q = p->thead; q; q = q->next) queued++;
  if (p->tidle <= queued && p->tthreads < MAX_TASK_THREADS) {
    if (p->tthreads == p->tcap) {
      int ncap = p->tcap ? p->tcap * 2 : 8;
      pthread_t *nt = realloc(p->tids, sizeof(pthread_t) * (size_t)ncap);
      if (!nt) {
        pthread_mutex_unlock(&p->tmu);
        free(t);
        return cj_oom();
      }
      p->tids = nt;
      p->tcap = ncap;
    }
    if (pthread_create(&p->tids[p->tthreads], NULL, task_main, p) == 0) {
      p->tthreads++;
    } else if (p->tthreads == 0) {
      pthread_mutex_unlock(&p->tmu);
      free(t);
      return cj_status_make(CJ_RESOURCE_EXHAUSTED, "cj_pool_submit: cannot start a task thread");
    }
  }
  CJ_FIFO_APPEND(p->thead, p->ttail, t, next);
  pthread_cond_signal(&p->tcv);
  pthread_mutex_unlock(&p->tmu);
  return NULL;
}

/* ---- the pool ---- */

cj_threadpool *cj_pool_create(int nthreads, cj_status *out_status) {
  if (out_status) *out_status = NULL;
  int cores = cj_num_cores();
  if (nthreads <= 0 || nthreads > cores) nthreads = cores;
  struct cj_threadpool *p = calloc(1, sizeof *p);
  if (!p) {
    if (out_status) *out_status = cj_oom();
    return NULL;
  }
  p->nthreads = nthreads;
  pthread_mutex_init(&p->job_lock, NULL);
  pthread_mutex_init(&p->tmu, NULL);
  pthread_cond_init(&p->tcv, NULL);
  pthread_cond_init(&p->tdone_cv, NULL);
  if (nthreads > 1) {
    p->workers = aligned_alloc(64, sizeof(worker) * (size_t)(nthreads - 1));
    if (!p->workers) {
      cj_pool_destroy(p);
      if (out_status) *out_status = cj_oom();
      return NULL;
    }
    memset(p->workers, 0, sizeof(worker) * (size_t)(nthreads - 1));
    for (int i = 0; i < nthreads - 1; i++) {
      worker *w = &p->workers[i];
      w->pool = p;
      pthread_mutex_init(&w->mu, NULL);
      pthread_cond_init(&w->cv, NULL);
      if (pthread_create(&w->thread, NULL, worker_main, w) != 0) break;
      w->started = true;
      p->nworkers++;
    }
  }
  p->nthreads = p->nworkers + 1;
  return p;
}

void cj_pool_destroy(cj_threadpool *p) {
  if (!p) return;
  /* finish submitted tasks first (they may use the workers) */
  pthread_mutex_lock(&p->tmu);
  while (p->thead || p->trunning) pthread_cond_wait(&p->tdone_cv, &p->tmu);
  p->tstop = true;
  pthread_cond_broadcast(&p->tcv);
  pthread_mutex_unlock(&p->tmu);
  for (int i = 0; i < p->tthreads; i++) pthread_join(p->tids[i], NULL);
  free(p->tids);

  atomic_store(&p->stop, 1);
  if (p->workers) {
    for (int i = 0; i < p->nworkers; i++) {
      worker *w = &p->workers[i];
      pthread_mutex_lock(&w->mu);
      pthread_cond_signal(&w->cv);
      pthread_mutex_unlock(&w->mu);
    }
    for (int i = 0; i < p->nworkers; i++) {
      pthread_join(p->workers[i].thread, NULL);
      pthread_mutex_destroy(&p->workers[i].mu);
      pthread_cond_destroy(&p->workers[i].cv);
    }
    /* workers whose thread failed to start still had their mutex initialised */
    free(p->workers);
  }
  pthread_mutex_destroy(&p->job_lock);
  pthread_mutex_destroy(&p->tmu);
  pthread_cond_destroy(&p->tcv);
  pthread_cond_destroy(&p->tdone_cv);
  free(p);
}

int cj_pool_size(const cj_threadpool *p) { return p ? p->nthreads : 1; }

bool cj_pool_set_waking(bool may_wake) {
  bool was = !tl_no_wake;
  tl_no_wake = !may_wake;
  return was;
}

/* Offers job to at most `want` workers that are not asleep; returns one past the last worker
 * offered it (0: none), the range the caller takes offers back from. */
static int offer_awake(struct cj_threadpool *p, pf_job *job, int want) {
  int end = 0;
  for (int i = 0; i < p->nworkers && want > 0; i++) {
    if (atomic_load(&p->workers[i].sleeping)) continue;
    atomic_store(&p->workers[i].slot, job);
    want--;
    end = i + 1;
  }
  return end;
}

void cj_pool_parallel_for(cj_threadpool *p, int64_t n, int64_t grain, cj_range_fn fn, void *ctx) {
  if (n <= 0 || !fn) return;
  if (grain < 1) grain = 1;
  if (!p || p->nworkers == 0 || n <= grain || tl_in_parallel ||
      pthread_mutex_trylock(&p->job_lock) != 0) {
    int saved = tl_in_parallel;
    tl_in_parallel = 1;
    fn(ctx, 0, n);
    tl_in_parallel = saved;
    return;
  }
  /* Chunks: about 4 per thread for balance, never smaller than the grain. */
  int64_t nthreads = p->nthreads;
  int64_t chunk = (n + nthreads * 4 - 1) / (nthreads * 4);
  if (chunk < grain) chunk = grain;
  int64_t nchunks = (n + chunk - 1) / chunk;
  pf_job job;
  job.fn = fn;
  job.ctx = ctx;
  job.n = n;
  job.chunk = chunk;
  atomic_init(&job.next, 0);
  int offer = (int)(nchunks - 1 < p->nworkers ? nchunks - 1 : p->nworkers);
  if (tl_no_wake) {
    offer = offer_awake(p, &job, offer);
  } else {
    for (int i = 0; i < offer; i++) {
      atomic_store(&p->workers[i].slot, &job);
      wake_worker(&p->workers[i]);
    }
  }
  tl_in_parallel = 1;
  run_chunks(&job);
  tl_in_parallel = 0;
  for (int i = 0; i < offer; i++) { /* (workers offered nothing have a NULL slot) */
    worker *w = &p->workers[i];
    pf_job *expect = &job;
    if (atomic_compare_exchange_strong(&w->slot, &expect, NULL)) continue; /* never claimed */
    while (atomic_load_explicit(&w->slot, memory_order_acquire) != NULL) CJ_CPU_RELAX();
  }
  pthread_mutex_unlock(&p->job_lock);
}

bool cj_thread_start(cj_thread *t, size_t stack_bytes, void *(*fn)(void *), void *arg) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  t->started = pthread_create(&t->id, &attr, fn, arg) == 0;
  pthread_attr_destroy(&attr);
  return t->started;
}

void cj_thread_join(cj_thread *t) {
  if (t->started) pthread_join(t->id, NULL);
  t->started = false;
}
