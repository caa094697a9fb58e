/* Tests for src/base/threadpool.c: parallel loops (coverage of every index exactly once, nesting,
 * concurrent callers), loops with waking off (cj_pool_set_waking: same results, no sleeping
 * worker woken, no wake-up lost for later loops), submitted tasks (all run, blocking tasks get
 * their own threads, destroy waits for them). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "../common/check.h"
#include "base/threadpool.h"

typedef struct {
  _Atomic int64_t sum;
  atomic_int calls;
  unsigned char *hit; /* per index */
  int64_t n;
  int bad;
} range_ctx;

static void range_fn(void *vctx, int64_t b, int64_t e) {
  range_ctx *c = vctx;
  if (b < 0 || e > c->n || b >= e) c->bad = 1;
  int64_t s = 0;
  for (int64_t i = b; i < e; i++) {
    s += i;
    c->hit[i]++;
  }
  atomic_fetch_add(&c->sum, s);
  atomic_fetch_add(&c->calls, 1);
}

static void check_cover(cj_threadpool *p, int64_t n, int64_t grain) {
  range_ctx c = {0};
  c.n = n;
  c.hit = calloc((size_t)(n ? n : 1), 1);
  cj_pool_parallel_for(p, n, grain, range_fn, &c);
  int64_t expect = n * (n - 1) / 2;
  CHECK_MSG(atomic_load(&c.sum) == expect, "n=%lld grain=%lld", (long long)n, (long long)grain);
  int ok = 1;
  for (int64_t i = 0; i < n; i++)
    if (c.hit[i] != 1) ok = 0;
  CHECK_MSG(ok, "each index once, n=%lld", (long long)n);
  CHECK(!c.bad);
  free(c.hit);
}

/* nested: each outer chunk runs an inner parallel loop (must run inline, no deadlock); inner_fn
 * counts the inner loop's indices */
typedef struct {
  cj_threadpool *p;
  _Atomic int64_t total;
} nest_ctx;

static void inner_fn(void *vctx, int64_t b, int64_t e) {
  nest_ctx *c = vctx;
  atomic_fetch_add(&c->total, e - b);
}
static void outer_fn(void *vctx, int64_t b, int64_t e) {
  nest_ctx *c = vctx;
  for (int64_t i = b; i < e; i++) cj_pool_parallel_for(c->p, 100, 1, inner_fn, c);
}

typedef struct {
  cj_threadpool *p;
  int reps;
  int ok;
} caller_ctx;

static void *caller_main(void *arg) {
  caller_ctx *cc = arg;
  cc->ok = 1;
  for (int r = 0; r < cc->reps; r++) {
    range_ctx c = {0};
    c.n = 5000;
    c.hit = calloc(5000, 1);
    cj_pool_parallel_for(cc->p, c.n, 16, range_fn, &c);
    if (atomic_load(&c.sum) != c.n * (c.n - 1) / 2) cc->ok = 0;
    free(c.hit);
  }
  return NULL;
}

/* tasks */
typedef struct {
  atomic_int count;
  atomic_int arrived;
  int need; /* barrier size */
  int barrier_ok;
} task_ctx;

static void count_task(void *vctx) {
  task_ctx *t = vctx;
  atomic_fetch_add(&t->count, 1);
}

static void barrier_task(void *vctx) {
  task_ctx *t = vctx;
  atomic_fetch_add(&t->arrived, 1);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    if (atomic_load(&t->arrived) >= t->need) break;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > 10) {
      t->barrier_ok = 0;
      break;
    }
    struct timespec d = {0, 100000};
    nanosleep(&d, NULL);
  }
  atomic_fetch_add(&t->count, 1);
}

/* a parallel loop inside a task (counts into a nest_ctx's total through inner_fn) */
static void pf_in_task(void *vctx) {
  nest_ctx *c = vctx;
  cj_pool_parallel_for(c->p, 100000, 64, inner_fn, c);
}

/* Records which threads ran chunks: the caller's, or another (each chunk takes 1 ms). */
typedef struct {
  pthread_t caller;
  atomic_int others;
} who_ctx;

static void who_fn(void *vctx, int64_t b, int64_t e) {
  (void)b;
  (void)e;
  who_ctx *c = vctx;
  struct timespec d = {0, 1000000}; /* long enough for a woken worker to come */
  nanosleep(&d, NULL);
  if (!pthread_equal(pthread_self(), c->caller)) atomic_fetch_add(&c->others, 1);
}

/* Two chunks that wait for each other: done only if a worker takes the second (the caller is
 * held in the first), so a wake-up lost by the pool shows as ok == 0 after 10 s. */
typedef struct {
  atomic_int arrived;
  atomic_int ok;
} meet_ctx;

static void meet_fn(void *vctx, int64_t b, int64_t e) {
  (void)b;
  (void)e;
  meet_ctx *c = vctx;
  atomic_fetch_add(&c->arrived, 1);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (atomic_load(&c->arrived) < 2) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > 10) {
      atomic_store(&c->ok, 0);
      return;
    }
  }
}

static void *quiet_caller_main(void *arg) {
  caller_ctx *cc = arg;
  cc->ok = 1;
  for (int r = 0; r < cc->reps; r++) {
    bool was = cj_pool_set_waking(r % 3 != 0); /* a mix of both kinds of loop */
    if (!was) cc->ok = 0;
    range_ctx c = {0};
    c.n = 64 + r % 200;
    c.hit = calloc((size_t)c.n, 1);
    cj_pool_parallel_for(cc->p, c.n, 1, range_fn, &c);
    if (atomic_load(&c.sum) != c.n * (c.n - 1) / 2 || c.bad) cc->ok = 0;
    for (int64_t i = 0; i < c.n; i++)
      if (c.hit[i] != 1) cc->ok = 0;
    free(c.hit);
    (void)cj_pool_set_waking(true);
  }
  return NULL;
}

/* Loops with waking off: same coverage; after the workers have long been idle they run on the
 * caller alone; interleaved with ordinary loops from several threads nothing is lost, and an
 * ordinary loop afterwards still gets a worker. */
static void test_no_waking(cj_threadpool *p) {
  CHECK(cj_pool_set_waking(false)); /* the default is on */
  CHECK(!cj_pool_set_waking(false));
  int64_t sizes[] = {1, 2, 7, 1000, 100000};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) check_cover(p, sizes[i], 1);
  for (int r = 0; r < 2000; r++) check_cover(p, 64, 1);
  /* right after an ordinary loop (workers awake, spinning): still right */
  CHECK(!cj_pool_set_waking(true));
  for (int r = 0; r < 200; r++) {
    check_cover(p, 4096, 8);
    (void)cj_pool_set_waking(r % 2 == 0);
    check_cover(p, 4096, 8);
    (void)cj_pool_set_waking(true);
  }
  if (cj_pool_size(p) > 1) {
    /* workers asleep (they spin ~100 us): a loop with waking off has no helper. A worker that
     * was descheduled before it could fall asleep may still help, so a few tries. */
    int alone = 0;
    for (int t = 0; t < 20 && !alone; t++) {
      struct timespec d = {0, 20000000};
      nanosleep(&d, NULL);
      who_ctx w = {pthread_self(), 0};
      (void)cj_pool_set_waking(false);
      cj_pool_parallel_for(p, 8, 1, who_fn, &w);
      (void)cj_pool_set_waking(true);
      alone = atomic_load(&w.others) == 0;
    }
    CHECK_MSG(alone, "a loop with waking off woke a sleeping worker");
  }
  /* concurrent callers mixing both kinds of loop */
  pthread_t th[4];
  caller_ctx cc[4];
  for (int i = 0; i < 4; i++) {
    cc[i].p = p;
    cc[i].reps = 1000;
    pthread_create(&th[i], NULL, quiet_caller_main, &cc[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK(cc[i].ok);
  }
  if (cj_pool_size(p) > 1) {
    /* no wake-up lost: after loops with waking off and time to fall asleep, an ordinary loop
     * that needs a second thread gets one, many times over */
    for (int r = 0; r < 50; r++) {
      (void)cj_pool_set_waking(false);
      check_cover(p, 256, 1);
      (void)cj_pool_set_waking(true);
      if (r % 10 == 0) {
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
      }
      meet_ctx m = {0, 1};
      cj_pool_parallel_for(p, 2, 1, meet_fn, &m);
      CHECK_MSG(atomic_load(&m.ok) && atomic_load(&m.arrived) == 2, "round %d: no worker came", r);
    }
  }
}

int main(void) {
  CHECK(cj_num_cores() >= 1);
  /* NULL pool runs inline */
  check_cover(NULL, 1000, 1);
  check_cover(NULL, 0, 1);

  cj_status st = NULL;
  cj_threadpool *p = cj_pool_create(0, &st);
  CHECK(p != NULL && st == NULL);
  CHECK_EQ_INT(cj_pool_size(p), cj_num_cores());
  /* never more threads than cores */
  cj_threadpool *big = cj_pool_create(cj_num_cores() + 7, &st);
  CHECK(big && cj_pool_size(big) == cj_num_cores());
  cj_pool_destroy(big);
  cj_pool_destroy(NULL);

  int64_t sizes[] = {1, 2, 3, 7, 64, 1000, 4097, 100000, 1000003};
  int64_t grains[] = {1, 3, 64, 1 << 20};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
    for (size_t g = 0; g < sizeof grains / sizeof *grains; g++) check_cover(p, sizes[i], grains[g]);
  /* many small loops in a row (hand-off path, sleeping workers) */
  for (int r = 0; r < 2000; r++) check_cover(p, 64, 1);
  struct timespec d = {0, 2000000}; /* let workers fall asleep, then loop again */
  nanosleep(&d, NULL);
  check_cover(p, 100000, 100);

  test_no_waking(p);

  nest_ctx nc = {p, 0};
  cj_pool_parallel_for(p, 50, 1, outer_fn, &nc);
  CHECK_EQ_INT(atomic_load(&nc.total), 50 * 100);

  /* concurrent callers on one pool */
  pthread_t th[4];
  caller_ctx cc[4];
  for (int i = 0; i < 4; i++) {
    cc[i].p = p;
    cc[i].reps = 300;
    pthread_create(&th[i], NULL, caller_main, &cc[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CHECK(cc[i].ok);
  }

  /* tasks: all run */
  task_ctx tc = {0};
  tc.barrier_ok = 1;
  for (int i = 0; i < 200; i++) CHECK(cj_pool_submit(p, count_task, &tc) == NULL);
  /* blocking tasks that wait for each other need their own threads */
  tc.need = 8;
  for (int i = 0; i < 8; i++) CHECK(cj_pool_submit(p, barrier_task, &tc) == NULL);
  /* a task may run parallel loops */
  nest_ctx pt = {p, 0};
  CHECK(cj_pool_submit(p, pf_in_task, &pt) == NULL);
  cj_status bad = cj_pool_submit(NULL, count_task, &tc);
  CHECK(cj_status_code(bad) == CJ_INVALID_ARGUMENT);
  cj_status_free(bad);
  cj_pool_destroy(p); /* waits for every task */
  CHECK_EQ_INT(atomic_load(&tc.count), 208);
  CHECK(tc.barrier_ok);
  CHECK_EQ_INT(atomic_load(&pt.total), 100000);

  /* a one-thread pool */
  cj_threadpool *one = cj_pool_create(1, &st);
  CHECK(one && cj_pool_size(one) == 1);
  check_cover(one, 10000, 10);
  cj_pool_destroy(one);
  return check_report("threadpool");
}
