/* cjrt: clients, devices and memories (see client.h). */
#include "runtime/client.h"
#include "runtime/topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/threadpool.h"
#include "runtime/event.h"

/* The client whose pool task the calling thread is running (see cj_client_enter_task). */
static _Thread_local cj_client *tl_task_client;

static const char *const kind_names[CJ_MEMORY_KIND_COUNT] = {"device", "pinned_host",
                                                             "unpinned_host"};

const char *cj_memory_kind_name(cj_memory_kind k) {
  return (unsigned)k < CJ_MEMORY_KIND_COUNT ? kind_names[k] : "unknown";
}

bool cj_client_check(const void *p) { return cj_object_is(p, CJ_TAG_CLIENT); }
bool cj_device_check(const void *p) { return cj_object_is(p, CJ_TAG_DEVICE); }
bool cj_device_desc_check(const void *p) { return cj_object_is(p, CJ_TAG_DEVDESC); }
bool cj_memory_check(const void *p) {
  return p && ((const cj_memory *)p)->hdr.tag == (uint32_t)CJ_TAG_MEMORY;
}

static void memory_free(cj_memory *m) {
  if (!m) return;
  cj_user_data *u = m->user_data;
  while (u) {
    cj_user_data *next = u->next;
    if (u->dtor) u->dtor(u->data);
    free(u);
    u = next;
  }
  pthread_mutex_destroy(&m->ud_mu);
  m->hdr.tag = CJ_TAG_DEAD;
  free(m);
}

static void client_free_now(cj_client *c) {
  /* Waits for the pool's tasks: every execution has finished (each held a reference). */
  cj_pool_destroy(c->pool);
  pthread_cond_destroy(&c->exec_cv);
  pthread_mutex_destroy(&c->exec_mu);
  for (int i = 0; i < c->mp_nprev; i++) cj_event_release(c->mp_prev[i]);
  free(c->mp_prev);
  if (c->front_free) c->front_free(c->front);
  if (c->memories)
    for (int i = 0; i < c->nmemories; i++) memory_free(c->memories[i]);
  if (c->all_devices)
    for (int i = 0; i < c->nall_devices; i++) {
      if (!c->all_devices[i]) continue;
      c->all_devices[i]->hdr.tag = CJ_TAG_DEAD;
      c->all_devices[i]->desc.hdr.tag = CJ_TAG_DEAD;
      free(c->all_devices[i]);
    }
  free(c->memories);
  free(c->devices);
  free(c->all_devices);
  cj_mp_free(c->mp);
  c->hdr.tag = CJ_TAG_DEAD;
  free(c);
}

/* Reapers: clients whose last reference went away on one of their own pool's task threads are
 * freed on a helper thread (the pool cannot join the thread that destroys it). The library's
 * destructor waits for reapers still running, so that dlclose never unmaps code they run. */
static pthread_mutex_t reaper_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reaper_cv = PTHREAD_COND_INITIALIZER;
static int reapers;

static void *reaper_main(void *arg) {
  client_free_now(arg);
  pthread_mutex_lock(&reaper_mu);
  reapers--;
  pthread_cond_broadcast(&reaper_cv);
  pthread_mutex_unlock(&reaper_mu);
  return NULL;
}

__attribute__((destructor)) static void reapers_wait(void) {
  pthread_mutex_lock(&reaper_mu);
  while (reapers > 0) pthread_cond_wait(&reaper_cv, &reaper_mu);
  pthread_mutex_unlock(&reaper_mu);
}

static void client_free(cj_client *c) {
  if (c->pool && tl_task_client == c) {
    tl_task_client = NULL; /* the rest of this task no longer belongs to a live client */
    pthread_attr_t attr;
    pthread_t t;
    bool started = false;
    if (pthread_attr_init(&attr) == 0) {
      pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      pthread_mutex_lock(&reaper_mu);
      reapers++;
      pthread_mutex_unlock(&reaper_mu);
      started = pthread_create(&t, &attr, reaper_main, c) == 0;
      pthread_attr_destroy(&attr);
      if (!started) {
        pthread_mutex_lock(&reaper_mu);
        reapers--;
        pthread_mutex_unlock(&reaper_mu);
      }
    }
    /* Without a helper thread the client (and its pool) is leaked rather than deadlocked. */
    return;
  }
  client_free_now(c);
}

cj_status cj_client_create(cj_backend *backend, const cj_client_options *opts, cj_client **out) {
  *out = NULL;
  cj_client_options o = {0, 0, 1};
  if (opts) o = *opts;
  if (!backend) return cj_invalid("no backend to create a client on");
  int cores = cj_num_cores();
  if (o.device_count == 0)
    o.device_count = backend->vt->default_device_count ? backend->vt->default_device_count(backend)
                                                       : 1;
  unsigned kinds = backend->vt->memory_kinds | CJ_MEMORY_KIND_BIT(CJ_MEMORY_DEVICE);
  int per_device = 0;
  for (int k = 0; k < CJ_MEMORY_KIND_COUNT; k++) per_device += (kinds >> k) & 1;
  if (o.device_count < 1 || o.device_count > CJ_MAX_DEVICES)
    return cj_invalid("device count %d is out of range [1, %d]", o.device_count, CJ_MAX_DEVICES);
  if (o.process_count < 1) return cj_invalid("process count %d must be >= 1", o.process_count);
  if (o.process_index < 0 || o.process_index >= o.process_count)
    return cj_invalid("process index %d is out of range [0, %d)", o.process_index,
                      o.process_count);
  /* A multi-process client learns the other processes' devices first (before anything is
   * allocated: a process that never comes makes this fail after CJRT_KV_TIMEOUT_MS). */
  cj_mp *mp = NULL;
  if (o.process_count > 1) {
    const char *kind = backend->vt->device_kind ? backend->vt->device_kind : backend->vt->name;
    cj_status st = cj_mp_create(o.kv, o.process_index, o.process_count, o.device_count, kind,
                                &mp);
    if (st)
      return cj_status_annotate(st, "creating the client of process %d of %d", o.process_index,
                                o.process_count);
  }
  o.kv = NULL; /* borrowed for creation only */

  cj_client *c = calloc(1, sizeof *c);
  if (!c) {
    cj_mp_free(mp);
    return cj_oom();
  }
  if (pthread_mutex_init(&c->exec_mu, NULL) != 0) {
    cj_mp_free(mp);
    free(c);
    return cj_oom();
  }
  if (pthread_cond_init(&c->exec_cv, NULL) != 0) {
    pthread_mutex_destroy(&c->exec_mu);
    cj_mp_free(mp);
    free(c);
    return cj_oom();
  }
  cj_object_init(&c->hdr, CJ_TAG_CLIENT);
  c->backend = backend;
  c->opts = o;
  c->mp = mp;
  c->num_cores = cores;
  if (mp)
    snprintf(c->platform_version, sizeof c->platform_version,
             "cjrt 0.1.0 (%s backend, %d devices, process %d of %d)", c->backend->vt->name,
             o.device_count, o.process_index, o.process_count);
  else
    snprintf(c->platform_version, sizeof c->platform_version,
             "cjrt 0.1.0 (%s backend, %d devices)", c->backend->vt->name, o.device_count);
  c->ndevices = o.device_count;
  c->nall_devices = mp ? mp->total_devices : o.device_count;
  int first = mp ? mp->procs[o.process_index].first_id : 0;
  c->nmemories = o.device_count * per_device;
  c->devices = calloc((size_t)c->ndevices, sizeof *c->devices);
  c->all_devices = calloc((size_t)c->nall_devices, sizeof *c->all_devices);
  c->memories = calloc((size_t)c->nmemories, sizeof *c->memories);
  if (!c->devices || !c->all_devices || !c->memories) goto oom;
  for (int g = 0, proc = 0; g < c->nall_devices; g++) {
    while (mp && g >= mp->procs[proc].first_id + mp->procs[proc].ndevices) proc++;
    int hw = mp ? g - mp->procs[proc].first_id : g;
    cj_device *d = calloc(1, sizeof *d);
    if (!d) goto oom;
    c->all_devices[g] = d;
    cj_object_init(&d->hdr, CJ_TAG_DEVICE);
    cj_object_init(&d->desc.hdr, CJ_TAG_DEVDESC);
    d->desc.device = d;
    d->client = c;
    d->index = g;
    d->id = g;
    d->local_hardware_id = hw;
    d->process_index = mp ? proc : o.process_index;
    snprintf(d->to_string, sizeof d->to_string, "CjrtDevice(id=%d)", g);
    snprintf(d->debug_string, sizeof d->debug_string, "cjrt:%d (%s, process %d)", g,
             cj_client_device_kind(c), d->process_index);
    atomic_init(&d->bytes_in_use, 0);
    atomic_init(&d->peak_bytes_in_use, 0);
    atomic_init(&d->num_allocs, 0);
    atomic_init(&d->largest_alloc, 0);
    if (d->process_index != o.process_index) continue; /* another process's: no memories here */
    int i = g - first;
    c->devices[i] = d;
    for (int k = 0; k < CJ_MEMORY_KIND_COUNT; k++) {
      if (!((kinds >> k) & 1)) continue;
      cj_memory *m = calloc(1, sizeof *m);
      if (!m) goto oom;
      if (pthread_mutex_init(&m->ud_mu, NULL) != 0) {
        free(m);
        goto oom;
      }
      c->memories[i * per_device + d->nmemories] = m;
      cj_object_init(&m->hdr, CJ_TAG_MEMORY);
      m->client = c;
      m->device = d;
      m->kind = (cj_memory_kind)k;
      m->id = i * CJ_MEMORY_KIND_COUNT + k; /* as XLA's CPU client numbers them */
      snprintf(m->to_string, sizeof m->to_string, "MemorySpace(id=%d, kind=%s, device_id=%d)",
               m->id, kind_names[k], d->id);
      snprintf(m->debug_string, sizeof m->debug_string,
               "cjrt memory %d: kind %s (kind id %d) of device %d", m->id, kind_names[k], k,
               d->id);
      d->memories[d->nmemories++] = m;
    }
  }
  *out = c;
  return NULL;
oom:
  client_free_now(c);
  return cj_oom();
}

void cj_client_retain(cj_client *c) { cj_object_retain(&c->hdr); }

void cj_client_release(cj_client *c) {
  if (c && cj_object_release(&c->hdr)) client_free(c);
}

void cj_client_set_front(cj_client *c, void *front, void (*free_fn)(void *)) {
  c->front = front;
  c->front_free = free_fn;
}

cj_device *cj_client_lookup_device(cj_client *c, int id) {
  return id >= 0 && id < c->nall_devices ? c->all_devices[id] : NULL;
}

cj_device *cj_client_lookup_local_device(cj_client *c, int hw) {
  for (int i = 0; i < c->ndevices; i++)
    if (c->devices[i]->local_hardware_id == hw) return c->devices[i];
  return NULL;
}

cj_status cj_client_default_assignment(cj_client *c, int num_replicas, int num_partitions,
                                       int *out) {
  if (num_replicas < 1 || num_partitions < 1)
    return cj_invalid("num_replicas (%d) and num_partitions (%d) must be >= 1", num_replicas,
                      num_partitions);
  int64_t n = (int64_t)num_replicas * num_partitions;
  if (n > c->nall_devices)
    return cj_invalid(
        "requested device assignment of %d replicas x %d partitions needs %lld devices, but the "
        "client has only %d",
        num_replicas, num_partitions, (long long)n, c->nall_devices);
  /* Replica r, partition p runs on device r * num_partitions + p (every process's devices in
   * id order, so a multi-process assignment spans the processes). */
  for (int64_t i = 0; i < n; i++) out[i] = c->all_devices[i]->id;
  return NULL;
}

void cj_device_memory_stats(cj_device *d, cj_memory_stats *out) {
  out->bytes_in_use = atomic_load(&d->bytes_in_use);
  out->peak_bytes_in_use = atomic_load(&d->peak_bytes_in_use);
  out->num_allocs = atomic_load(&d->num_allocs);
  out->largest_alloc = atomic_load(&d->largest_alloc);
}

void cj_device_clear_memory_stats(cj_device *d) {
  atomic_store(&d->peak_bytes_in_use, atomic_load(&d->bytes_in_use));
  atomic_store(&d->largest_alloc, 0);
}

static void atomic_max(atomic_llong *a, long long v) {
  long long cur = atomic_load(a);
  while (v > cur && !atomic_compare_exchange_weak(a, &cur, v)) {
  }
}

void cj_device_account(cj_device *d, int64_t bytes) {
  long long now = atomic_fetch_add(&d->bytes_in_use, bytes) + bytes;
  if (bytes > 0) {
    atomic_fetch_add(&d->num_allocs, 1);
    atomic_max(&d->largest_alloc, bytes);
    atomic_max(&d->peak_bytes_in_use, now);
  }
}

void *cj_memory_get_user_data(cj_memory *m, const void *key) {
  void *r = NULL;
  pthread_mutex_lock(&m->ud_mu);
  for (cj_user_data *u = m->user_data; u; u = u->next)
    if (u->key == key) {
      r = u->data;
      break;
    }
  pthread_mutex_unlock(&m->ud_mu);
  return r;
}

void cj_memory_set_user_data(cj_memory *m, const void *key, void *data, void (*dtor)(void *)) {
  cj_user_data *fresh = NULL;
  if (data) {
    fresh = malloc(sizeof *fresh);
    if (!fresh) {
      /* Cannot store it: the value is dropped as if replaced at once. */
      if (dtor) dtor(data);
      return;
    }
    fresh->key = key;
    fresh->data = data;
    fresh->dtor = dtor;
  }
  cj_user_data *old = NULL;
  pthread_mutex_lock(&m->ud_mu);
  cj_user_data **pp = &m->user_data;
  while (*pp && (*pp)->key != key) pp = &(*pp)->next;
  if (*pp) {
    old = *pp;
    *pp = old->next;
  }
  if (fresh) {
    fresh->next = m->user_data;
    m->user_data = fresh;
  }
  pthread_mutex_unlock(&m->ud_mu);
  if (old) {
    if (old->dtor && old->data != data) old->dtor(old->data);
    free(old);
  }
}

const char *cj_client_device_kind(const cj_client *c) {
  if (!c) return CJ_TOPOLOGY_DEVICE_KIND; /* a described topology's device (runtime/topology.h) */
  const char *k = c->backend->vt->device_kind;
  return k ? k : c->backend->vt->name;
}

bool cj_client_memory_is_host(const cj_client *c) { return c->backend->vt->memory_is_host; }

cj_status cj_client_pool(cj_client *c, cj_threadpool **out) {
  *out = NULL;
  cj_status st = NULL;
  pthread_mutex_lock(&c->exec_mu);
  if (!c->pool) c->pool = cj_pool_create(0, &st);
  *out = c->pool;
  pthread_mutex_unlock(&c->exec_mu);
  if (!*out && !st) st = cj_status_make(CJ_RESOURCE_EXHAUSTED, "cannot create the thread pool");
  return st;
}

void cj_client_inflight_acquire(cj_client *c) {
  bool own_task = tl_task_client == c;
  pthread_mutex_lock(&c->exec_mu);
  while (!own_task && c->inflight >= CJ_MAX_INFLIGHT) pthread_cond_wait(&c->exec_cv, &c->exec_mu);
  c->inflight++;
  pthread_mutex_unlock(&c->exec_mu);
}

void cj_client_inflight_release(cj_client *c) {
  pthread_mutex_lock(&c->exec_mu);
  c->inflight--;
  pthread_cond_signal(&c->exec_cv);
  pthread_mutex_unlock(&c->exec_mu);
}

void cj_client_enter_task(cj_client *c) { tl_task_client = c; }
cj_client *cj_client_current_task(void) { return tl_task_client; }
