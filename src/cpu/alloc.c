/* cjrt: device memory of the CPU backend with a bounded cache of freed large blocks (alloc.h).
 *
 * Layout: [header, 64 bytes][data ...]; the pointer handed out is the data, 64-byte aligned.
 * Cached blocks sit on two intrusive lists threaded through their headers: the list of their
 * size class (LIFO: the most recently freed block, the likeliest to be in the CPU caches, is
 * handed out first) and one LRU list over every class (the least recently freed block is the
 * first released when the cache is over its bound or idle).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cpu/alloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MIN_SHIFT = 18, NBUCKETS = (64 - MIN_SHIFT) * 4 };
_Static_assert(((size_t)1 << MIN_SHIFT) == CJ_MEM_CACHE_MIN, "CJ_MEM_CACHE_MIN is 2^MIN_SHIFT");

#define MAGIC_LIVE 0x564c4d454d4a43ull   /* owned by a caller */
#define MAGIC_CACHED 0x43434d454d4a43ull /* in the cache */

typedef struct hdr {
  uint64_t magic;
  uint64_t size;   /* data bytes (the class size for cacheable blocks) */
  int32_t bucket;  /* size class, -1 for blocks below CJ_MEM_CACHE_MIN */
  int32_t pad;
  struct hdr *bprev, *bnext; /* class list */
  struct hdr *lprev, *lnext; /* LRU list: head = most recently freed */
  int64_t freed_ns;
} hdr;
_Static_assert(sizeof(hdr) == CJ_MEM_ALIGN, "the header keeps the data 64-byte aligned");

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool inited, closing, stop, thread_started;
  pthread_t thread;
  hdr *bucket[NBUCKETS];
  hdr *lru_head, *lru_tail;
  uint64_t cached, nblocks, limit;
  int64_t idle_ns;
  uint64_t hits, misses, released, double_frees;
} C = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The size class of a request of at least CJ_MEM_CACHE_MIN bytes: 2^k * {4,5,6,7}/4. Sets *b
 * to its index; 0 if the request is too large. */
static size_t size_class(size_t bytes, int *b) {
  int k = 63 - __builtin_clzll((unsigned long long)bytes);
  size_t step = (size_t)1 << (k - 2);
  if (bytes > SIZE_MAX - step) return 0;
  size_t cls = (bytes + step - 1) / step * step;
  k = 63 - __builtin_clzll((unsigned long long)cls);
  int j = (int)(cls >> (k - 2)) - 4;
  if (k >= 62) return 0;
  *b = (k - MIN_SHIFT) * 4 + j;
  return cls;
}

/* Under the lock: defaults, from the environment once. */
static void init_locked(void) {
  if (C.inited) return;
  C.inited = true;
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  uint64_t ram = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : (uint64_t)4 << 30;
  uint64_t lim = ram / 8;
  if (lim > ((uint64_t)512 << 20)) lim = (uint64_t)512 << 20;
  const char *env = getenv("CJRT_CPU_MEM_CACHE_MB");
  if (env && *env) {
    char *end = NULL;
    long long mb = strtoll(env, &end, 10);
    if (end && *end == 0 && mb >= 0 && mb < (1ll << 40)) lim = (uint64_t)mb << 20;
  }
  C.limit = lim;
  C.idle_ns = (int64_t)2000 * 1000000;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&C.cv, &ca);
  pthread_condattr_destroy(&ca);
}

static void unlink_locked(hdr *h) {
  if (h->bprev) h->bprev->bnext = h->bnext;
  else C.bucket[h->bucket] = h->bnext;
  if (h->bnext) h->bnext->bprev = h->bprev;
  if (h->lprev) h->lprev->lnext = h->lnext;
  else C.lru_head = h->lnext;
  if (h->lnext) h->lnext->lprev = h->lprev;
  else C.lru_tail = h->lprev;
  h->bprev = h->bnext = h->lprev = h->lnext = NULL;
  C.cached -= h->size;
  C.nblocks--;
}

/* Under the lock: takes the LRU blocks out while `more` says so, chaining them through lnext
 * into *out (to be freed after the lock is dropped). */
static void evict_locked(hdr **out, bool (*more)(const hdr *oldest, int64_t now), int64_t now) {
  while (C.lru_tail && more(C.lru_tail, now)) {
    hdr *h = C.lru_tail;
    unlink_locked(h);
    h->magic = 0;
    h->lnext = *out;
    *out = h;
    C.released++;
  }
}

static void release_list(hdr *h) {
  while (h) {
    hdr *n = h->lnext;
    free(h);
    h = n;
  }
}

static bool over_limit(const hdr *oldest, int64_t now) {
  (void)oldest;
  (void)now;
  return C.cached > C.limit;
}

static bool idle(const hdr *oldest, int64_t now) { return now - oldest->freed_ns >= C.idle_ns; }

static bool all(const hdr *oldest, int64_t now) {
  (void)oldest;
  (void)now;
  return true;
}

/* The idle trimmer: sleeps while the cache is empty, else until its oldest block has been idle
 * for idle_ns, then releases every block idle that long. */
static void *trimmer(void *arg) {
  (void)arg;
  pthread_mutex_lock(&C.mu);
  while (!C.stop) {
    if (!C.lru_tail) {
      pthread_cond_wait(&C.cv, &C.mu);
      continue;
    }
    int64_t due = C.lru_tail->freed_ns + C.idle_ns, t = now_ns();
    if (t < due) {
      struct timespec ts = {(time_t)(due / 1000000000), (long)(due % 1000000000)};
      pthread_cond_timedwait(&C.cv, &C.mu, &ts);
      continue;
    }
    hdr *out = NULL;
    evict_locked(&out, idle, t);
    pthread_mutex_unlock(&C.mu);
    release_list(out);
    pthread_mutex_lock(&C.mu);
  }
  pthread_mutex_unlock(&C.mu);
  return NULL;
}

void *cj_mem_alloc(size_t bytes) {
  if (bytes < CJ_MEM_CACHE_MIN) {
    size_t n = (bytes + CJ_MEM_ALIGN - 1) & ~(size_t)(CJ_MEM_ALIGN - 1);
    hdr *h = aligned_alloc(CJ_MEM_ALIGN, sizeof(hdr) + n);
    if (!h) return NULL;
    memset(h, 0, sizeof *h);
    h->magic = MAGIC_LIVE;
    h->size = n;
    h->bucket = -1;
    return h + 1;
  }
  int b = 0;
  size_t cls = size_class(bytes, &b);
  if (!cls || cls > SIZE_MAX - sizeof(hdr)) return NULL;
  pthread_mutex_lock(&C.mu);
  init_locked();
  hdr *h = C.bucket[b];
  if (h) {
    unlink_locked(h);
    h->magic = MAGIC_LIVE;
    C.hits++;
  } else {
    C.misses++;
  }
  pthread_mutex_unlock(&C.mu);
  if (h) return h + 1;
  h = aligned_alloc(CJ_MEM_ALIGN, sizeof(hdr) + cls);
  if (!h) {
    /* give the cache back to the system and try once more */
    cj_mem_trim();
    h = aligned_alloc(CJ_MEM_ALIGN, sizeof(hdr) + cls);
    if (!h) return NULL;
  }
  memset(h, 0, sizeof *h);
  h->magic = MAGIC_LIVE;
  h->size = cls;
  h->bucket = b;
  return h + 1;
}

void cj_mem_free(void *p) {
  if (!p) return;
  hdr *h = (hdr *)p - 1;
  if (h->magic != MAGIC_LIVE) {
    pthread_mutex_lock(&C.mu);
    C.double_frees++;
    pthread_mutex_unlock(&C.mu);
    return;
  }
  if (h->bucket < 0) {
    h->magic = 0;
    free(h);
    return;
  }
  pthread_mutex_lock(&C.mu);
  init_locked();
  if (C.closing || h->size > C.limit) {
    pthread_mutex_unlock(&C.mu);
    h->magic = 0;
    free(h);
    return;
  }
  h->magic = MAGIC_CACHED;
  h->freed_ns = now_ns();
  h->bprev = NULL;
  h->bnext = C.bucket[h->bucket];
  if (h->bnext) h->bnext->bprev = h;
  C.bucket[h->bucket] = h;
  h->lprev = NULL;
  h->lnext = C.lru_head;
  if (h->lnext) h->lnext->lprev = h;
  else C.lru_tail = h;
  C.lru_head = h;
  C.cached += h->size;
  C.nblocks++;
  hdr *out = NULL;
  evict_locked(&out, over_limit, 0);
  if (!C.thread_started) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 << 10);
    C.thread_started = pthread_create(&C.thread, &attr, trimmer, NULL) == 0;
    pthread_attr_destroy(&attr);
  }
  if (C.nblocks == 1) pthread_cond_signal(&C.cv); /* the trimmer may be waiting for a block */
  pthread_mutex_unlock(&C.mu);
  release_list(out);
}

void cj_mem_get_stats(cj_mem_stats *out) {
  pthread_mutex_lock(&C.mu);
  init_locked();
  out->hits = C.hits;
  out->misses = C.misses;
  out->released = C.released;
  out->double_frees = C.double_frees;
  out->cached_bytes = C.cached;
  out->cached_blocks = C.nblocks;
  out->limit = C.limit;
  out->idle_ms = C.idle_ns / 1000000;
  pthread_mutex_unlock(&C.mu);
}

void cj_mem_trim(void) {
  pthread_mutex_lock(&C.mu);
  hdr *out = NULL;
  evict_locked(&out, all, 0);
  pthread_mutex_unlock(&C.mu);
  release_list(out);
}

void cj_mem_configure(uint64_t limit, int64_t idle_ms) {
  pthread_mutex_lock(&C.mu);
  init_locked();
  C.limit = limit;
  if (idle_ms > 0) C.idle_ns = idle_ms * 1000000;
  hdr *out = NULL;
  evict_locked(&out, over_limit, 0);
  pthread_cond_signal(&C.cv); /* the trimmer re-reads the idle time */
  pthread_mutex_unlock(&C.mu);
  release_list(out);
}

/* At exit or when the plugin is unloaded: stop the trimmer (its code is about to go away) and
 * give every cached block back; later frees go straight to free(). */
__attribute__((destructor)) static void mem_shutdown(void) {
  pthread_mutex_lock(&C.mu);
  C.closing = true;
  C.stop = true;
  bool started = C.thread_started;
  if (C.inited) pthread_cond_broadcast(&C.cv);
  pthread_mutex_unlock(&C.mu);
  if (started) pthread_join(C.thread, NULL);
  cj_mem_trim();
}
