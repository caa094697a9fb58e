/* cjrt: launches: meetings and mailboxes of the devices of one execution (see launch.h).
 *
 * One mutex and one condition variable per launch guard everything; every state change
 * broadcasts. Collectives are rare next to the work between them, and a launch has few devices,
 * so this stays simple: a meeting is a small record (published pointers per rank, join and
 * leave counts) found by a linear scan of the open ones.
 */
#include "cpu/launch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fifo.h"
#include "base/threadpool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SPIN_RELAX() _mm_pause()
#else
#define SPIN_RELAX() ((void)0)
#endif

struct cj_meet {
  cj_meet *next;
  uint64_t key, check;
  int64_t group;
  int32_t size;
  int32_t joined, gone;
  atomic_int left;      /* (read unlocked by spinners) */
  atomic_bool complete; /* (read unlocked by spinners) */
  bool dead;
  const char *what;
  int32_t *members; /* cap entries */
  void **contrib;   /* cap entries */
  bool *filled;     /* cap entries */
};

typedef struct mail {
  struct mail *next;
  int64_t channel;
  int32_t from, to;
  size_t n;
  unsigned char data[];
} mail;

struct cj_launch {
  int32_t nrep, npart, ndev;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  cj_status why; /* set once when aborted */
  atomic_bool aborted; /* (read unlocked by spinners) */
  bool spin;           /* no more devices than cores: waiters spin briefly before sleeping */
  bool *done;    /* ndev: the device's program ended */
  cj_meet *open, *open_tail, *free;
  mail *mail, *mail_tail;
};

cj_status cj_cpu_launch_new(int32_t num_replicas, int32_t num_partitions, cj_launch **out) {
  *out = NULL;
  if (num_replicas < 1 || num_partitions < 1 ||
      (int64_t)num_replicas * num_partitions > (int64_t)1 << 20)
    return cj_invalid("launch: bad device grid %d x %d", num_replicas, num_partitions);
  cj_launch *l = calloc(1, sizeof *l);
  if (!l) return cj_oom();
  l->nrep = num_replicas;
  l->npart = num_partitions;
  l->ndev = num_replicas * num_partitions;
  l->spin = l->ndev <= cj_num_cores();
  l->done = calloc((size_t)l->ndev, sizeof(bool));
  if (!l->done) {
    free(l);
    return cj_oom();
  }
  if (pthread_mutex_init(&l->mu, NULL) != 0) {
    free(l->done);
    free(l);
    return cj_oom();
  }
  if (pthread_cond_init(&l->cv, NULL) != 0) {
    pthread_mutex_destroy(&l->mu);
    free(l->done);
    free(l);
    return cj_oom();
  }
  *out = l;
  return NULL;
}

static void meet_free(cj_meet *m) {
  if (!m) return;
  free(m->members);
  free(m->contrib);
  free(m->filled);
  free(m);
}

void cj_cpu_launch_free(cj_launch *l) {
  if (!l) return;
  for (cj_meet *m = l->open; m;) {
    cj_meet *n = m->next;
    meet_free(m);
    m = n;
  }
  for (cj_meet *m = l->free; m;) {
    cj_meet *n = m->next;
    meet_free(m);
    m = n;
  }
  for (mail *x = l->mail; x;) {
    mail *n = x->next;
    free(x);
    x = n;
  }
  cj_status_free(l->why);
  pthread_cond_destroy(&l->cv);
  pthread_mutex_destroy(&l->mu);
  free(l->done);
  free(l);
}

int32_t cj_cpu_launch_replicas(const cj_launch *l) { return l ? l->nrep : 1; }
int32_t cj_cpu_launch_partitions(const cj_launch *l) { return l ? l->npart : 1; }

/* Under the lock. Consumes why. */
static void abort_locked(cj_launch *l, cj_status why) {
  if (!l->aborted) {
    l->aborted = true;
    l->why = why ? why : cj_status_make(CJ_CANCELLED, "the execution was cancelled");
  } else {
    cj_status_ignore(why); /* aborted already: the first reason stands */
  }
  pthread_cond_broadcast(&l->cv);
}

void cj_cpu_launch_abort(cj_launch *l, cj_status why) {
  if (!l) {
    cj_status_ignore(why); /* no launch to abort */
    return;
  }
  pthread_mutex_lock(&l->mu);
  abort_locked(l, why);
  pthread_mutex_unlock(&l->mu);
}

static void device_name(const cj_launch *l, int32_t d, char *buf, size_t n) {
  if (l->npart == 1)
    snprintf(buf, n, "replica %d", d);
  else if (l->nrep == 1)
    snprintf(buf, n, "partition %d", d);
  else
    snprintf(buf, n, "device (replica %d, partition %d)", d / l->npart, d % l->npart);
}

/* Under the lock: a member of an incomplete meeting that never joined has ended. */
static bool stranded(cj_launch *l, const cj_meet *m, int32_t *who) {
  for (int32_t r = 0; r < m->size; r++) {
    int32_t d = m->members[r];
    if (!m->filled[r] && d >= 0 && d < l->ndev && l->done[d]) {
      *who = d;
      return true;
    }
  }
  return false;
}

static void abort_stranded(cj_launch *l, const cj_meet *m, int32_t who) {
  char dn[96];
  device_name(l, who, dn, sizeof dn);
  abort_locked(l, cj_status_make(CJ_FAILED_PRECONDITION,
                                 "%s: %s ended its program without reaching this collective, "
                                 "which %d other device%s of its group wait%s at (the devices "
                                 "run different sequences of collectives)",
                                 m->what ? m->what : "collective", dn, m->joined,
                                 m->joined == 1 ? "" : "s", m->joined == 1 ? "s" : ""));
}

void cj_cpu_launch_finished(cj_launch *l, int32_t device) {
  if (!l || device < 0 || device >= l->ndev) return;
  pthread_mutex_lock(&l->mu);
  l->done[device] = true;
  int32_t who;
  for (cj_meet *m = l->open; m && !l->aborted; m = m->next)
    if (!m->complete && !m->dead && m->joined > 0 && stranded(l, m, &who)) abort_stranded(l, m, who);
  pthread_cond_broadcast(&l->cv); /* receivers waiting for this device re-check */
  pthread_mutex_unlock(&l->mu);
}

static CJ_MUST_USE cj_status aborted_error(cj_launch *l, const char *what) {
  cj_status st = cj_status_copy(l->why);
  if (!st) return cj_oom();
  return cj_status_annotate(st, "%s: cancelled because another device failed",
                            what ? what : "collective");
}

static cj_meet *meet_get(cj_launch *l) {
  cj_meet *m = l->free;
  if (m) {
    l->free = m->next;
  } else {
    m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->members = malloc(sizeof(int32_t) * (size_t)l->ndev);
    m->contrib = malloc(sizeof(void *) * (size_t)l->ndev);
    m->filled = malloc(sizeof(bool) * (size_t)l->ndev);
    if (!m->members || !m->contrib || !m->filled) {
      meet_free(m);
      return NULL;
    }
  }
  m->next = NULL;
  m->joined = m->gone = 0;
  atomic_store(&m->left, 0);
  atomic_store(&m->complete, false);
  m->dead = false;
  return m;
}

static void meet_unlink(cj_launch *l, cj_meet *m) {
  cj_meet *prev = NULL;
  for (cj_meet *x = l->open; x; prev = x, x = x->next)
    if (x == m) {
      if (prev)
        prev->next = m->next;
      else
        l->open = m->next;
      if (l->open_tail == m) l->open_tail = prev;
      break;
    }
  m->next = l->free;
  l->free = m;
}

/* Called with the lock held, which it drops while it spins: waits up to SPIN_NS for the meeting to
 * be complete (or, `leaving`, for every member to have left) or the launch to abort. With no more
 * devices than cores the peers are running and arrive within microseconds, while sleeping on the
 * condition variable costs a futex wake (~70 us on these VMs) at every collective. The caller
 * re-checks under the lock and sleeps if this timed out. */
enum { SPIN_NS = 50000 };
static void spin_briefly(cj_launch *l, cj_meet *m, bool leaving) {
  if (!l->spin) return;
  pthread_mutex_unlock(&l->mu);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (uint32_t i = 1; !atomic_load(&l->aborted); i++) {
    if (leaving ? atomic_load(&m->left) >= m->size : atomic_load(&m->complete)) break;
    SPIN_RELAX();
    if (i % 64 == 0) {
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) > SPIN_NS) break;
    }
  }
  pthread_mutex_lock(&l->mu);
}

cj_status cj_meet_join(cj_launch *l, const cj_meet_req *r, cj_meet **out, void *const **peers) {
  *out = NULL;
  *peers = NULL;
  if (!l) return cj_internal("%s: a collective of %d devices without a launch", r->what, r->size);
  if (r->size < 1 || r->size > l->ndev || r->rank < 0 || r->rank >= r->size)
    return cj_internal("%s: bad group (size %d, rank %d, %d devices)", r->what, r->size, r->rank,
                       l->ndev);
  pthread_mutex_lock(&l->mu);
  if (l->aborted) {
    cj_status st = aborted_error(l, r->what);
    pthread_mutex_unlock(&l->mu);
    return st;
  }
  cj_meet *m = NULL;
  for (cj_meet *x = l->open; x; x = x->next)
    if (x->key == r->key && x->group == r->group && !x->dead && !x->complete &&
        !x->filled[r->rank]) {
      m = x;
      break;
    }
  if (m && (m->size != r->size || m->check != r->check)) {
    cj_status st = cj_status_make(
        CJ_INVALID_ARGUMENT,
        "%s: the devices of one group disagree at this collective (group size %d vs %d, or "
        "different operand types or shapes%s%s)",
        r->what, m->size, r->size, m->what && m->what != r->what ? "; the other device is at " : "",
        m->what && m->what != r->what ? m->what : "");
    abort_locked(l, cj_status_copy(st));
    pthread_mutex_unlock(&l->mu);
    return st;
  }
  if (!m) {
    m = meet_get(l);
    if (!m) {
      pthread_mutex_unlock(&l->mu);
      return cj_oom();
    }
    m->key = r->key;
    m->group = r->group;
    m->size = r->size;
    m->check = r->check;
    m->what = r->what;
    memcpy(m->members, r->members, sizeof(int32_t) * (size_t)r->size);
    memset(m->filled, 0, sizeof(bool) * (size_t)r->size);
    CJ_FIFO_APPEND(l->open, l->open_tail, m, next);
  }
  m->contrib[r->rank] = r->mine;
  m->filled[r->rank] = true;
  m->joined++;
  if (m->joined == m->size) {
    m->complete = true;
    pthread_cond_broadcast(&l->cv);
  } else {
    int32_t who;
    if (stranded(l, m, &who)) abort_stranded(l, m, who);
    if (!l->aborted) spin_briefly(l, m, false);
  }
  while (!m->complete && !l->aborted) pthread_cond_wait(&l->cv, &l->mu);
  if (!m->complete) {
    /* withdrawn: nobody will ever read what this device published */
    m->dead = true;
    m->filled[r->rank] = false;
    m->joined--;
    if (m->joined == 0) meet_unlink(l, m);
    cj_status st = aborted_error(l, r->what);
    pthread_mutex_unlock(&l->mu);
    return st;
  }
  pthread_mutex_unlock(&l->mu);
  *out = m;
  *peers = m->contrib;
  return NULL;
}

void cj_meet_leave(cj_launch *l, cj_meet *m) {
  if (!l || !m) return;
  pthread_mutex_lock(&l->mu);
  if (atomic_fetch_add(&m->left, 1) + 1 == m->size)
    pthread_cond_broadcast(&l->cv);
  else
    spin_briefly(l, m, true);
  /* every member of a complete meeting leaves (the work between join and leave never waits) */
  while (m->left < m->size) pthread_cond_wait(&l->cv, &l->mu);
  if (++m->gone == m->size) meet_unlink(l, m);
  pthread_mutex_unlock(&l->mu);
}

/* ---- mailboxes ---- */

cj_status cj_mail_send(cj_launch *l, int64_t channel, int32_t from, int32_t to,
                       const void *const *parts, const size_t *sizes, int32_t nparts,
                       const char *what) {
  if (!l) return cj_internal("%s: send without a launch", what);
  size_t n = 0;
  for (int32_t i = 0; i < nparts; i++) n += sizes[i];
  mail *x = malloc(sizeof *x + (n ? n : 1));
  if (!x) return cj_oom();
  x->next = NULL;
  x->channel = channel;
  x->from = from;
  x->to = to;
  x->n = n;
  size_t k = 0;
  for (int32_t i = 0; i < nparts; i++) {
    if (sizes[i]) memcpy(x->data + k, parts[i], sizes[i]);
    k += sizes[i];
  }
  pthread_mutex_lock(&l->mu);
  if (l->aborted) {
    cj_status st = aborted_error(l, what);
    pthread_mutex_unlock(&l->mu);
    free(x);
    return st;
  }
  CJ_FIFO_APPEND(l->mail, l->mail_tail, x, next);
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
  return NULL;
}

/* Under the lock: no message can come any more. */
static bool no_sender_left(const cj_launch *l, int32_t from, int32_t to) {
  if (from >= 0) return from < l->ndev && l->done[from];
  for (int32_t d = 0; d < l->ndev; d++)
    if (d != to && !l->done[d]) return false;
  return true;
}

cj_status cj_mail_recv(cj_launch *l, int64_t channel, int32_t from, int32_t to,
                       void *const *parts, const size_t *sizes, int32_t nparts,
                       const char *what) {
  if (!l) return cj_internal("%s: recv without a launch", what);
  size_t n = 0;
  for (int32_t i = 0; i < nparts; i++) n += sizes[i];
  pthread_mutex_lock(&l->mu);
  for (;;) {
    mail *prev = NULL, *x = l->mail;
    for (; x; prev = x, x = x->next)
      if (x->channel == channel && x->from == from && x->to == to) break;
    if (x) {
      if (prev)
        prev->next = x->next;
      else
        l->mail = x->next;
      if (l->mail_tail == x) l->mail_tail = prev;
      pthread_mutex_unlock(&l->mu);
      cj_status st = NULL;
      if (x->n != n) {
        st = cj_invalid("%s: received %zu bytes on channel %lld but expects %zu", what, x->n,
                        (long long)channel, n);
      } else {
        size_t k = 0;
        for (int32_t i = 0; i < nparts; i++) {
          if (sizes[i]) memcpy(parts[i], x->data + k, sizes[i]);
          k += sizes[i];
        }
      }
      free(x);
      return st;
    }
    if (l->aborted) {
      cj_status st = aborted_error(l, what);
      pthread_mutex_unlock(&l->mu);
      return st;
    }
    if (no_sender_left(l, from, to)) {
      char dn[96];
      if (from >= 0)
        device_name(l, from, dn, sizeof dn);
      else
        snprintf(dn, sizeof dn, "every other device");
      cj_status st = cj_status_make(CJ_FAILED_PRECONDITION,
                                    "%s: waits for a message on channel %lld but %s ended its "
                                    "program without sending it",
                                    what, (long long)channel, dn);
      abort_locked(l, cj_status_copy(st));
      pthread_mutex_unlock(&l->mu);
      return st;
    }
    pthread_cond_wait(&l->cv, &l->mu);
  }
}
