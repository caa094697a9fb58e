/* cjrt: buffers and storages (see buffer.h).
 *
 * Locking: each buffer has a mutex guarding its storage pointer, flags and external reference
 * count. It is never held while calling into events, the backend's copies or user callbacks:
 * code takes what it needs (a storage reference, an event reference) under the lock and works
 * after releasing it. */
#include "runtime/buffer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* Storage                                                                                     */

typedef enum storage_kind { ST_OWNED, ST_VIEW, ST_HOST_ALIAS } storage_kind;

typedef struct cj_storage {
  atomic_int refs;
  atomic_int writers; /* references held by executions producing the contents (see try_donate) */
  cj_client *client; /* retained: the backend frees owned memory */
  cj_device *device; /* charged for owned memory */
  cj_memory_kind mem_kind; /* owned memory: the kind it was allocated as */
  void *ptr;
  size_t size;
  storage_kind kind;
  bool readonly;                           /* immutable zero-copy host data */
  void (*on_delete)(void *ptr, void *arg); /* ST_VIEW */
  void *on_delete_arg;
  cj_event *done; /* ST_HOST_ALIAS: set when the host data is no longer used */
} cj_storage;

static cj_storage *storage_new(cj_client *c, cj_device *d, storage_kind kind) {
  cj_storage *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  atomic_init(&s->refs, 1);
  atomic_init(&s->writers, 0);
  s->client = c;
  cj_client_retain(c);
  s->device = d;
  s->kind = kind;
  return s;
}

/* The backend's name for a device: its index among this process's devices. */
static int32_t backend_device(const cj_device *d) { return d ? (int32_t)d->local_hardware_id : 0; }

/* Allocates `size` bytes of device memory. */
cj_status cj_storage_alloc(cj_memory *mem, size_t size, cj_storage **out) {
  *out = NULL;
  cj_client *c = mem->client;
  cj_storage *s = storage_new(c, mem->device, ST_OWNED);
  if (!s) return cj_oom();
  s->mem_kind = mem->kind;
  s->ptr = c->backend->vt->alloc(c->backend, backend_device(mem->device), mem->kind, size);
  if (!s->ptr) {
    cj_client_release(c);
    free(s);
    return cj_status_make(CJ_RESOURCE_EXHAUSTED,
                          "out of memory allocating %zu bytes on device %d", size,
                          mem->device->id);
  }
  s->size = size;
  cj_device_account(mem->device, (int64_t)size);
  *out = s;
  return NULL;
}

static void storage_retain(cj_storage *s) {
  atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

static void storage_release(cj_storage *s) {
  if (!s) return;
  if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
  switch (s->kind) {
    case ST_OWNED:
      s->client->backend->vt->free(s->client->backend, backend_device(s->device), s->mem_kind,
                                   s->ptr);
      cj_device_account(s->device, -(int64_t)s->size);
      break;
    case ST_VIEW:
      if (s->on_delete) s->on_delete(s->ptr, s->on_delete_arg);
      break;
    case ST_HOST_ALIAS:
      if (s->done) {
        cj_status st = cj_event_set(s->done, NULL);
        cj_status_ignore(st); /* the alias's event is set once, here: cannot fail */
        cj_event_release(s->done);
      }
      break;
  }
  cj_client_release(s->client);
  free(s);
}

/* Copies n bytes of src's data into dst's (device to device: the backend's peer copy when it
 * has one, else staged through host memory). */
static CJ_MUST_USE cj_status storage_copy(cj_client *c, cj_storage *dst, const cj_storage *src,
                                          size_t n) {
  if (!n) return NULL;
  const cj_backend_vtable *vt = c->backend->vt;
  int32_t dd = backend_device(dst->device), sd = backend_device(src->device);
  if (vt->copy_device_to_device) return vt->copy_device_to_device(c->backend, dd, dst->ptr, sd, src->ptr, n);
  if (cj_client_memory_is_host(c)) {
    memmove(dst->ptr, src->ptr, n);
    return NULL;
  }
  void *tmp = malloc(n);
  if (!tmp) return cj_oom();
  cj_status st = vt->copy_to_host(c->backend, sd, tmp, src->ptr, n);
  if (!st) st = vt->copy_to_device(c->backend, dd, dst->ptr, tmp, n);
  free(tmp);
  return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Shapes and strided copies                                                                   */

cj_status cj_shape_check(cj_dtype dt, const int64_t *dims, size_t rank, size_t *out_nbytes) {
  *out_nbytes = 0;
  if ((int)dt < (int)CJ_PRED || (int)dt > (int)CJ_F6E3M2FN)
    return cj_invalid("element type %d is not a valid PJRT buffer type", (int)dt);
  if (rank > CJ_MAX_RANK)
    return cj_invalid("rank %zu exceeds cjrt's limit of %d dimensions", rank, CJ_MAX_RANK);
  if (rank && !dims) return cj_invalid("dims is NULL for a rank-%zu shape", rank);
  size_t elem = (size_t)cj_dtype_bytes(dt);
  /* Compute in bytes, checking overflow at each step; the total must fit in int64. */
  unsigned __int128 total = elem;
  bool empty = false;
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] < 0) return cj_invalid("dimension %zu has negative size %lld", i, (long long)dims[i]);
    if (dims[i] == 0) empty = true;
    if (!empty) {
      total *= (unsigned __int128)dims[i];
      if (total > (unsigned __int128)INT64_MAX)
        return cj_status_make(CJ_RESOURCE_EXHAUSTED,
                              "an array of %s with these dimensions does not fit in memory",
                              cj_dtype_get(dt)->id);
    }
  }
  *out_nbytes = empty ? 0 : (size_t)total;
  return NULL;
}

void cj_dense_strides(const int64_t *dims, int rank, size_t elem, int64_t *out) {
  int64_t s = (int64_t)elem;
  for (int i = rank - 1; i >= 0; i--) {
    out[i] = s;
    s *= dims[i] > 0 ? dims[i] : 1;
  }
}

void cj_copy_strided(void *dst, const int64_t *dst_strides, const void *src,
                     const int64_t *src_strides, const int64_t *dims, int rank, size_t elem) {
  if (elem == 0) return;
  /* Collapse: drop size-1 dims, merge a dim into the next inner one when both layouts are
   * contiguous across them. Built innermost first. */
  int64_t n[CJ_MAX_RANK], ss[CJ_MAX_RANK], ds[CJ_MAX_RANK];
  int k = 0;
  for (int i = rank - 1; i >= 0; i--) {
    if (dims[i] == 0) return;
    if (dims[i] == 1) continue;
    if (k > 0 && ss[k - 1] * n[k - 1] == src_strides[i] && ds[k - 1] * n[k - 1] == dst_strides[i]) {
      n[k - 1] *= dims[i];
      continue;
    }
    n[k] = dims[i];
    ss[k] = src_strides[i];
    ds[k] = dst_strides[i];
    k++;
  }
  /* The innermost contiguous run, copied with memcpy. */
  size_t run = elem;
  int first = 0;
  if (k > 0 && ss[0] == (int64_t)elem && ds[0] == (int64_t)elem) {
    run = (size_t)n[0] * elem;
    first = 1;
  }
  int64_t idx[CJ_MAX_RANK] = {0};
  const char *s = src;
  char *d = dst;
  for (;;) {
    memcpy(d, s, run);
    int j = first;
    for (; j < k; j++) {
      s += ss[j];
      d += ds[j];
      if (++idx[j] < n[j]) break;
      s -= ss[j] * n[j];
      d -= ds[j] * n[j];
      idx[j] = 0;
    }
    if (j == k) return;
  }
}

static bool strides_dense(const int64_t *dims, int rank, size_t elem, const int64_t *strides) {
  if (!strides) return true;
  int64_t dense[CJ_MAX_RANK];
  cj_dense_strides(dims, rank, elem, dense);
  for (int i = 0; i < rank; i++)
    if (dims[i] > 1 && strides[i] != dense[i]) return false;
  return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Buffers                                                                                     */

struct cj_buffer {
  cj_object hdr;
  cj_client *client; /* retained */
  cj_memory *memory;
  cj_dtype dtype;
  int rank;
  int64_t *dims; /* rank entries, then rank entries of minor_to_major (one allocation) */
  int64_t *m2m;
  size_t nbytes;
  pthread_mutex_t mu;
  cj_storage *storage; /* NULL once deleted or donated, and for error buffers */
  cj_event *ready;     /* never NULL */
  bool deleted, donated;
  int64_t external_refs;
  cj_storage *ext_storage; /* the storage the external references pin */
};

bool cj_buffer_check(const void *p) { return cj_object_is(p, CJ_TAG_BUFFER); }

/* Takes ownership of `storage` and `ready` (even on failure). */
static CJ_MUST_USE cj_status buffer_new(cj_memory *mem, cj_dtype dt, const int64_t *dims, int rank,
                            size_t nbytes, cj_storage *storage, cj_event *ready, cj_buffer **out) {
  *out = NULL;
  cj_buffer *b = calloc(1, sizeof *b);
  int64_t *arr = malloc(sizeof(int64_t) * (size_t)(2 * rank + 1));
  if (!b || !arr || pthread_mutex_init(&b->mu, NULL) != 0) {
    free(b);
    free(arr);
    storage_release(storage);
    cj_event_release(ready);
    return cj_oom();
  }
  cj_object_init(&b->hdr, CJ_TAG_BUFFER);
  b->client = mem->client;
  cj_client_retain(b->client);
  b->memory = mem;
  b->dtype = dt;
  b->rank = rank;
  b->dims = arr;
  b->m2m = arr + rank;
  for (int i = 0; i < rank; i++) {
    b->dims[i] = dims[i];
    b->m2m[i] = rank - 1 - i;
  }
  b->nbytes = nbytes;
  b->storage = storage;
  b->ready = ready;
  *out = b;
  return NULL;
}

static void buffer_free(cj_buffer *b) {
  storage_release(b->storage);
  for (int64_t i = 0; i < b->external_refs; i++) storage_release(b->ext_storage);
  cj_event_release(b->ready);
  pthread_mutex_destroy(&b->mu);
  cj_client_release(b->client);
  free(b->dims);
  free(b);
}

void cj_buffer_retain(cj_buffer *b) { cj_object_retain(&b->hdr); }

void cj_buffer_release(cj_buffer *b) {
  if (b && cj_object_release(&b->hdr)) buffer_free(b);
}

void cj_buffer_destroy(cj_buffer *b) {
  if (!b) return;
  cj_buffer_delete(b);
  /* The API handle's external references end with the handle. */
  pthread_mutex_lock(&b->mu);
  cj_storage *ext = b->ext_storage;
  int64_t n = b->external_refs;
  b->ext_storage = NULL;
  b->external_refs = 0;
  pthread_mutex_unlock(&b->mu);
  for (int64_t i = 0; i < n; i++) storage_release(ext);
  cj_buffer_release(b);
}

cj_dtype cj_buffer_dtype(const cj_buffer *b) { return b->dtype; }
int cj_buffer_rank(const cj_buffer *b) { return b->rank; }
const int64_t *cj_buffer_dims(const cj_buffer *b) { return b->dims; }
const int64_t *cj_buffer_minor_to_major(const cj_buffer *b) { return b->m2m; }
size_t cj_buffer_nbytes(const cj_buffer *b) { return b->nbytes; }
cj_memory *cj_buffer_memory(const cj_buffer *b) { return b->memory; }
cj_device *cj_buffer_device(const cj_buffer *b) { return b->memory->device; }
cj_client *cj_buffer_client(const cj_buffer *b) { return b->client; }

static CJ_MUST_USE cj_status check_memory(cj_memory *mem) {
  if (!cj_memory_check(mem)) return cj_invalid("the memory is not a valid cjrt memory");
  return NULL;
}

/* A new buffer with storage of its own, ready (contents undefined) or pending (a producer sets
 * its event). */
static CJ_MUST_USE cj_status create_owned(cj_memory *mem, cj_dtype dt, const int64_t *dims,
                                          int rank, bool ready_now, cj_buffer **out) {
  *out = NULL;
  CJ_RETURN_IF_ERROR(check_memory(mem));
  size_t nbytes;
  CJ_RETURN_IF_ERROR(cj_shape_check(dt, dims, (size_t)rank, &nbytes));
  cj_storage *s;
  CJ_RETURN_IF_ERROR(cj_storage_alloc(mem, nbytes, &s));
  cj_event *ready = ready_now ? cj_event_create_ready(NULL) : cj_event_create(false);
  if (!ready) {
    storage_release(s);
    return cj_oom();
  }
  return buffer_new(mem, dt, dims, rank, nbytes, s, ready, out);
}

cj_status cj_buffer_create_uninitialized(cj_memory *mem, cj_dtype dt, const int64_t *dims,
                                         int rank, cj_buffer **out) {
  return create_owned(mem, dt, dims, rank, true, out);
}

cj_status cj_buffer_create_pending(cj_memory *mem, cj_dtype dt, const int64_t *dims, int rank,
                                   cj_buffer **out) {
  return create_owned(mem, dt, dims, rank, false, out);
}

cj_status cj_buffer_create_view(cj_memory *mem, cj_dtype dt, const int64_t *dims, int rank,
                                void *ptr, void (*on_delete)(void *ptr, void *arg), void *arg,
                                cj_buffer **out) {
  *out = NULL;
  CJ_RETURN_IF_ERROR(check_memory(mem));
  size_t nbytes;
  CJ_RETURN_IF_ERROR(cj_shape_check(dt, dims, (size_t)rank, &nbytes));
  if (!ptr && nbytes) return cj_invalid("the device pointer is NULL for a %zu-byte array", nbytes);
  cj_storage *s = storage_new(mem->client, mem->device, ST_VIEW);
  cj_event *ready = cj_event_create_ready(NULL);
  if (!s || !ready) {
    if (s) {
      cj_client_release(s->client);
      free(s);
    }
    cj_event_release(ready);
    return cj_oom();
  }
  s->ptr = ptr;
  s->size = nbytes;
  s->on_delete = on_delete;
  s->on_delete_arg = arg;
  return buffer_new(mem, dt, dims, rank, nbytes, s, ready, out);
}

cj_status cj_buffer_create_error(cj_memory *mem, cj_dtype dt, const int64_t *dims, int rank,
                                 cj_status error, cj_buffer **out) {
  *out = NULL;
  cj_status st = check_memory(mem);
  size_t nbytes = 0;
  if (!st) st = cj_shape_check(dt, dims, (size_t)rank, &nbytes);
  if (!st && !error) st = cj_invalid("an error buffer needs a non-OK error");
  if (st) {
    cj_status_ignore(error); /* consumed; the argument error is what the caller must see */
    return st;
  }
  cj_event *ready = cj_event_create_ready(error);
  if (!ready) return cj_oom();
  return buffer_new(mem, dt, dims, rank, nbytes, NULL, ready, out);
}

/* Writes host data into a storage. */
static CJ_MUST_USE cj_status write_host(cj_client *c, cj_storage *s, const void *src,
                                        const int64_t *src_strides, const int64_t *dims, int rank,
                                        size_t elem, size_t nbytes) {
  if (!nbytes) return NULL;
  void *dst = s->ptr;
  int32_t dev = backend_device(s->device);
  if (strides_dense(dims, rank, elem, src_strides))
    return c->backend->vt->copy_to_device(c->backend, dev, dst, src, nbytes);
  int64_t dense[CJ_MAX_RANK];
  cj_dense_strides(dims, rank, elem, dense);
  if (cj_client_memory_is_host(c)) {
    cj_copy_strided(dst, dense, src, src_strides, dims, rank, elem);
    return NULL;
  }
  void *tmp = malloc(nbytes);
  if (!tmp) return cj_oom();
  cj_copy_strided(tmp, dense, src, src_strides, dims, rank, elem);
  cj_status st = c->backend->vt->copy_to_device(c->backend, dev, dst, tmp, nbytes);
  free(tmp);
  return st;
}

/* An asynchronous host-to-device copy in flight (the backend's copy_to_device_async): the
 * storage stays alive until it lands, then the buffer and the caller's done event are ready. */
typedef struct h2d_copy {
  cj_storage *s;
  cj_event *ready, *done; /* done: NULL when the caller did not ask */
} h2d_copy;

static void h2d_finished(void *ctx, cj_status st) {
  h2d_copy *w = ctx;
  storage_release(w->s);
  if (w->done) {
    cj_status_ignore(cj_event_set(w->done, cj_status_copy(st))); /* set once, here */
    cj_event_release(w->done);
  }
  cj_status_ignore(cj_event_set(w->ready, st)); /* set once, here */
  cj_event_release(w->ready);
  free(w);
}

/* cj_buffer_from_host's copy into the fresh storage s (consumed) through copy_to_device_async. */
static CJ_MUST_USE cj_status from_host_async(cj_memory *mem, cj_dtype dt, const int64_t *dims,
                                             int rank, const void *data, size_t nbytes,
                                             cj_storage *s, cj_event **out_done, cj_buffer **out) {
  h2d_copy *w = calloc(1, sizeof *w);
  cj_event *ready = cj_event_create(false);
  cj_event *done = out_done ? cj_event_create(false) : NULL;
  if (!w || !ready || (out_done && !done)) {
    free(w);
    storage_release(s);
    cj_event_release(ready);
    cj_event_release(done);
    return cj_oom();
  }
  cj_event_retain(ready);
  storage_retain(s);
  cj_status st = buffer_new(mem, dt, dims, rank, nbytes, s, ready, out); /* takes s, ready */
  if (st) { /* nothing started: complete the bookkeeping with the error */
    w->s = s;
    w->ready = ready;
    w->done = NULL;
    cj_event_release(done);
    h2d_finished(w, cj_status_copy(st));
    return st;
  }
  w->s = s;
  w->ready = ready;
  if (done) {
    cj_event_retain(done);
    w->done = done;
    *out_done = done;
  }
  cj_backend *b = mem->client->backend;
  b->vt->copy_to_device_async(b, backend_device(mem->device), s->ptr, data, nbytes,
                              (cj_backend_done){h2d_finished, w});
  return NULL;
}

cj_status cj_buffer_from_host(cj_memory *mem, cj_dtype dt, const int64_t *dims, int rank,
                              const void *data, const int64_t *byte_strides,
                              cj_host_semantics sem, cj_event **out_done, cj_buffer **out) {
  *out = NULL;
  if (out_done) *out_done = NULL;
  CJ_RETURN_IF_ERROR(check_memory(mem));
  size_t nbytes;
  CJ_RETURN_IF_ERROR(cj_shape_check(dt, dims, (size_t)rank, &nbytes));
  if ((unsigned)sem > CJ_HOST_MUTABLE_ZERO_COPY)
    return cj_invalid("host buffer semantics %d is not a valid value", (int)sem);
  if (!data && nbytes) return cj_invalid("data is NULL for a %zu-byte array", nbytes);
  size_t elem = (size_t)cj_dtype_bytes(dt);
  cj_client *c = mem->client;

  bool alias = (sem == CJ_HOST_ZERO_COPY || sem == CJ_HOST_MUTABLE_ZERO_COPY) && nbytes &&
               cj_client_memory_is_host(c) && ((uintptr_t)data % 64) == 0 &&
               strides_dense(dims, rank, elem, byte_strides);
  if (alias) {
    cj_storage *s = storage_new(c, mem->device, ST_HOST_ALIAS);
    cj_event *done = cj_event_create(false);
    cj_event *ready = cj_event_create_ready(NULL);
    if (!s || !done || !ready) {
      if (s) {
        cj_client_release(s->client);
        free(s);
      }
      cj_event_release(done);
      cj_event_release(ready);
      return cj_oom();
    }
    s->ptr = (void *)data;
    s->size = nbytes;
    s->readonly = sem == CJ_HOST_ZERO_COPY;
    s->done = done;
    if (out_done) {
      cj_event_retain(done);
      *out_done = done;
    }
    cj_status st = buffer_new(mem, dt, dims, rank, nbytes, s, ready, out);
    if (st && out_done) {
      /* The storage was released, which set `done`; hand back nothing. */
      cj_event_release(*out_done);
      *out_done = NULL;
    }
    return st;
  }

  cj_storage *s;
  CJ_RETURN_IF_ERROR(cj_storage_alloc(mem, nbytes, &s));
  /* the caller keeps the data until the transfer is done: the backend may copy in the
   * background when it can */
  if (sem == CJ_HOST_COPY_UNTIL_DONE && nbytes && c->backend->vt->copy_to_device_async &&
      strides_dense(dims, rank, elem, byte_strides))
    return from_host_async(mem, dt, dims, rank, data, nbytes, s, out_done, out);
  cj_status st = write_host(c, s, data, byte_strides, dims, rank, elem, nbytes);
  if (st) {
    storage_release(s);
    return st;
  }
  cj_event *ready = cj_event_create_ready(NULL);
  cj_event *done = out_done ? cj_event_create_ready(NULL) : NULL;
  if (!ready || (out_done && !done)) {
    storage_release(s);
    cj_event_release(ready);
    cj_event_release(done);
    return cj_oom();
  }
  st = buffer_new(mem, dt, dims, rank, nbytes, s, ready, out);
  if (st) {
    cj_event_release(done);
    return st;
  }
  if (out_done) *out_done = done;
  return NULL;
}

void cj_buffer_delete(cj_buffer *b) {
  pthread_mutex_lock(&b->mu);
  cj_storage *s = b->storage;
  b->storage = NULL;
  b->deleted = true;
  pthread_mutex_unlock(&b->mu);
  storage_release(s);
}

bool cj_buffer_is_deleted(cj_buffer *b) {
  pthread_mutex_lock(&b->mu);
  bool d = b->deleted;
  pthread_mutex_unlock(&b->mu);
  return d;
}

/* The error for using a deleted buffer; call with the lock held. */
static CJ_MUST_USE cj_status deleted_error(cj_buffer *b) {
  return cj_invalid("the buffer was %s", b->donated ? "donated" : "deleted");
}

cj_status cj_buffer_ready_event(cj_buffer *b, cj_event **out) {
  *out = NULL;
  pthread_mutex_lock(&b->mu);
  if (b->deleted) {
    cj_status err = deleted_error(b);
    pthread_mutex_unlock(&b->mu);
    cj_event *e = cj_event_create_ready(err);
    if (!e) return cj_oom();
    *out = e;
    return NULL;
  }
  cj_event_retain(b->ready);
  *out = b->ready;
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

/* Takes a storage reference and a ready-event reference under the lock. For an error buffer
 * *out_storage is NULL (its ready event carries the error). */
static CJ_MUST_USE cj_status acquire(cj_buffer *b, cj_storage **out_storage, cj_event **out_ready) {
  pthread_mutex_lock(&b->mu);
  if (b->deleted) {
    cj_status err = deleted_error(b);
    pthread_mutex_unlock(&b->mu);
    return err;
  }
  if (b->storage) storage_retain(b->storage);
  cj_event_retain(b->ready);
  *out_storage = b->storage;
  *out_ready = b->ready;
  pthread_mutex_unlock(&b->mu);
  return NULL;
}

/* ---- deferred work that waits for a buffer's readiness ---- */

/* T_ALIAS: nothing to copy; the target (an alias buffer sharing the source's storage) becomes
 * ready with the source. */
typedef enum task_kind { T_TO_HOST, T_RAW, T_COPY, T_ALIAS } task_kind;

typedef struct task {
  task_kind kind;
  cj_client *client;
  cj_storage *src; /* retained; NULL for error buffers */
  cj_event *done;  /* retained; set when finished */
  /* T_TO_HOST */
  void *dst;
  int rank;
  size_t elem;
  int64_t dims[CJ_MAX_RANK];
  int64_t dst_strides[CJ_MAX_RANK];
  /* T_RAW */
  size_t offset, size;
  /* T_COPY */
  cj_buffer *target; /* retained */
  cj_storage *dst_storage; /* T_COPY: the target's storage when the copy was asked for, retained */
} task;

static void task_free(task *t) {
  storage_release(t->src);
  storage_release(t->dst_storage);
  cj_event_release(t->done);
  cj_buffer_release(t->target);
  free(t);
}

static CJ_MUST_USE cj_status task_run(task *t) {
  cj_client *c = t->client;
  if (t->kind == T_ALIAS) return NULL;
  if (!t->src) return cj_internal("the buffer has no storage");
  switch (t->kind) {
    case T_ALIAS: return NULL;
    case T_TO_HOST: {
      int64_t dense[CJ_MAX_RANK];
      cj_dense_strides(t->dims, t->rank, t->elem, dense);
      bool dense_dst = strides_dense(t->dims, t->rank, t->elem, t->dst_strides);
      size_t n = t->src->size;
      int32_t dev = backend_device(t->src->device);
      if (dense_dst) return c->backend->vt->copy_to_host(c->backend, dev, t->dst, t->src->ptr, n);
      if (cj_client_memory_is_host(c)) {
        cj_copy_strided(t->dst, t->dst_strides, t->src->ptr, dense, t->dims, t->rank, t->elem);
        return NULL;
      }
      void *tmp = malloc(n ? n : 1);
      if (!tmp) return cj_oom();
      cj_status st = c->backend->vt->copy_to_host(c->backend, dev, tmp, t->src->ptr, n);
      if (!st) cj_copy_strided(t->dst, t->dst_strides, tmp, dense, t->dims, t->rank, t->elem);
      free(tmp);
      return st;
    }
    case T_RAW:
      if (!t->size) return NULL;
      return c->backend->vt->copy_to_host(c->backend, backend_device(t->src->device), t->dst,
                                          (char *)t->src->ptr + t->offset, t->size);
    case T_COPY: {
      /* The storage the target had when the copy was asked for: the target buffer may be gone
       * (deleted, destroyed) while an execution that took it as an argument still waits to read
       * this storage. Only when no one else holds it is there nothing to fill. */
      cj_storage *ds = t->dst_storage;
      if (!ds || atomic_load_explicit(&ds->refs, memory_order_acquire) == 1) return NULL;
      return storage_copy(c, ds, t->src, t->src->size);
    }
  }
  return NULL;
}

/* Runs when the source buffer is ready (status `st` borrowed). */
static void task_on_ready(void *ctx, cj_status st) {
  task *t = ctx;
  cj_status result = st ? cj_status_copy(st) : task_run(t);
  if (t->kind == T_COPY || t->kind == T_ALIAS) {
    cj_status copy = cj_status_copy(result);
    /* the copy's target can be ready already (deleted or donated) */
    cj_status_ignore(cj_buffer_set_ready(t->target, copy));
  }
  /* the task's event is set once, here: cannot fail */
  cj_status_ignore(cj_event_set(t->done, result));
  task_free(t);
}

/* Starts `t` once the buffer is ready; on success *out_done (if asked) is a new reference to
 * t->done. Consumes `t` either way. */
static CJ_MUST_USE cj_status task_start(cj_buffer *b, task *t, cj_event **out_done) {
  cj_event *ready = NULL;
  cj_status st = acquire(b, &t->src, &ready);
  if (st) {
    task_free(t);
    return st;
  }
  t->client = b->client;
  t->done = cj_event_create(false);
  if (!t->done) {
    cj_event_release(ready);
    task_free(t);
    return cj_oom();
  }
  if (out_done) {
    cj_event_retain(t->done);
    *out_done = t->done;
  }
  st = cj_event_on_ready(ready, task_on_ready, t);
  cj_event_release(ready);
  if (st) {
    if (out_done) {
      cj_event_release(*out_done);
      *out_done = NULL;
    }
    task_free(t);
  }
  return st;
}

cj_status cj_buffer_to_host(cj_buffer *b, void *dst, const int64_t *dst_strides,
                            cj_event **out_done) {
  *out_done = NULL;
  if (!dst && b->nbytes) return cj_invalid("dst is NULL");
  task *t = calloc(1, sizeof *t);
  if (!t) return cj_oom();
  t->kind = T_TO_HOST;
  t->dst = dst;
  t->rank = b->rank;
  t->elem = (size_t)cj_dtype_bytes(b->dtype);
  memcpy(t->dims, b->dims, sizeof(int64_t) * (size_t)b->rank);
  if (dst_strides)
    memcpy(t->dst_strides, dst_strides, sizeof(int64_t) * (size_t)b->rank);
  else
    cj_dense_strides(b->dims, b->rank, t->elem, t->dst_strides);
  return task_start(b, t, out_done);
}

static CJ_MUST_USE cj_status check_range(const cj_buffer *b, int64_t offset, int64_t size) {
  if (offset < 0 || size < 0 || (uint64_t)offset > b->nbytes ||
      (uint64_t)size > b->nbytes - (uint64_t)offset)
    return cj_invalid("byte range [%lld, %lld + %lld) is outside the buffer's %zu bytes",
                      (long long)offset, (long long)offset, (long long)size, b->nbytes);
  return NULL;
}

cj_status cj_buffer_copy_raw_to_host(cj_buffer *b, void *dst, int64_t offset, int64_t size,
                                     cj_event **out_done) {
  *out_done = NULL;
  CJ_RETURN_IF_ERROR(check_range(b, offset, size));
  if (!dst && size) return cj_invalid("dst is NULL");
  task *t = calloc(1, sizeof *t);
  if (!t) return cj_oom();
  t->kind = T_RAW;
  t->dst = dst;
  t->offset = (size_t)offset;
  t->size = (size_t)size;
  return task_start(b, t, out_done);
}

/* A raw copy whose destination comes later: it waits for both the buffer and the caller. */
struct cj_raw_copy {
  task *t;
  cj_event *source_ready; /* retained */
};

cj_status cj_buffer_copy_raw_deferred(cj_buffer *b, int64_t offset, int64_t size,
                                      cj_event **out_done, cj_raw_copy **out) {
  *out_done = NULL;
  *out = NULL;
  CJ_RETURN_IF_ERROR(check_range(b, offset, size));
  cj_raw_copy *rc = calloc(1, sizeof *rc);
  task *t = calloc(1, sizeof *t);
  if (!rc || !t) {
    free(rc);
    free(t);
    return cj_oom();
  }
  t->kind = T_RAW;
  t->offset = (size_t)offset;
  t->size = (size_t)size;
  cj_status st = acquire(b, &t->src, &rc->source_ready);
  if (!st) {
    t->client = b->client;
    t->done = cj_event_create(false);
    if (!t->done) st = cj_oom();
  }
  if (st) {
    if (rc->source_ready) cj_event_release(rc->source_ready);
    task_free(t);
    free(rc);
    return st;
  }
  rc->t = t;
  cj_event_retain(t->done);
  *out_done = t->done;
  *out = rc;
  return NULL;
}

void cj_raw_copy_complete(cj_raw_copy *rc, void *dst, cj_status err) {
  if (!rc) {
    cj_status_ignore(err); /* no copy to report to */
    return;
  }
  task *t = rc->t;
  cj_event *ready = rc->source_ready;
  free(rc);
  if (!err && !dst && t->size) err = cj_invalid("the destination is NULL");
  if (err) {
    /* the task's event is set once, here: cannot fail */
    cj_status_ignore(cj_event_set(t->done, err));
    task_free(t);
    cj_event_release(ready);
    return;
  }
  t->dst = dst;
  cj_status st = cj_event_on_ready(ready, task_on_ready, t);
  if (st) {
    /* the task's event is set once, here: cannot fail */
    cj_status_ignore(cj_event_set(t->done, st));
    task_free(t);
  }
  cj_event_release(ready);
}

cj_status cj_buffer_copy_to_memory(cj_buffer *b, cj_memory *dst, cj_buffer **out) {
  *out = NULL;
  CJ_RETURN_IF_ERROR(check_memory(dst));
  if (dst->client != b->client)
    return cj_invalid("the destination memory belongs to another client");
  /* the same memory is allowed: a copy is a copy (jax.device_put(x, may_alias=False)) */
  cj_buffer *target;
  CJ_RETURN_IF_ERROR(cj_buffer_create_pending(dst, b->dtype, b->dims, b->rank, &target));
  task *t = calloc(1, sizeof *t);
  if (!t) {
    cj_buffer_release(target);
    return cj_oom();
  }
  t->kind = T_COPY;
  t->target = target;
  cj_buffer_retain(target);
  t->dst_storage = target->storage; /* a new buffer: nobody else can change it yet */
  if (t->dst_storage) storage_retain(t->dst_storage);
  cj_status st = task_start(b, t, NULL);
  if (st) {
    cj_buffer_release(target);
    return st;
  }
  *out = target;
  return NULL;
}

cj_status cj_buffer_fulfill_alias(cj_buffer *alias, cj_buffer *src) {
  if (alias == src) return cj_invalid("an alias buffer cannot be fulfilled with itself");
  if (src->client != alias->client) return cj_invalid("the buffer belongs to another client");
  if (src->dtype != alias->dtype || src->rank != alias->rank ||
      memcmp(src->dims, alias->dims, sizeof(int64_t) * (size_t)src->rank) != 0)
    return cj_invalid("the buffer's shape (%s, rank %d, %zu bytes) differs from the alias "
                      "buffer's (%s, rank %d, %zu bytes)",
                      cj_dtype_get(src->dtype)->id, src->rank, src->nbytes,
                      cj_dtype_get(alias->dtype)->id, alias->rank, alias->nbytes);
  task *t = calloc(1, sizeof *t);
  if (!t) return cj_oom();
  cj_event *ready = NULL;
  cj_status st = acquire(src, &t->src, &ready);
  if (st) {
    task_free(t);
    return st;
  }
  /* Share the source's storage when nobody holds the alias's own yet (nothing has read it or
   * queued a read); otherwise copy into it when the source is ready, so that reads already
   * queued see the data too. */
  cj_storage *old = NULL;
  pthread_mutex_lock(&alias->mu);
  bool share = t->src && !alias->deleted && alias->storage && alias->external_refs == 0 &&
               atomic_load_explicit(&alias->storage->refs, memory_order_acquire) == 1;
  if (share) {
    old = alias->storage;
    alias->storage = t->src; /* the acquired reference moves to the alias */
    t->src = NULL;
  } else if (alias->storage) { /* the storage the queued reads hold: filled even if the alias goes */
    t->dst_storage = alias->storage;
    storage_retain(t->dst_storage);
  }
  pthread_mutex_unlock(&alias->mu);
  storage_release(old);
  t->kind = share || !t->src ? T_ALIAS : T_COPY;
  t->target = alias;
  cj_buffer_retain(alias);
  t->client = src->client;
  t->done = cj_event_create(false);
  if (!t->done) st = cj_oom();
  if (!st) st = cj_event_on_ready(ready, task_on_ready, t);
  cj_event_release(ready);
  if (st) task_free(t); /* out of memory: the alias stays pending (a shared storage stays) */
  return st;
}

cj_status cj_buffer_data_pointer(cj_buffer *b, void **out) {
  *out = NULL;
  pthread_mutex_lock(&b->mu);
  cj_status st = NULL;
  if (b->deleted)
    st = deleted_error(b);
  else if (!b->storage)
    st = cj_status_make(CJ_FAILED_PRECONDITION, "an error buffer has no device memory");
  else
    *out = b->storage->ptr;
  pthread_mutex_unlock(&b->mu);
  return st;
}

cj_status cj_buffer_external_ref(cj_buffer *b, int delta) {
  cj_storage *drop = NULL;
  cj_status st = NULL;
  pthread_mutex_lock(&b->mu);
  if (delta > 0) {
    if (b->deleted)
      st = deleted_error(b);
    else if (!b->storage)
      st = cj_status_make(CJ_FAILED_PRECONDITION, "an error buffer has no device memory");
    else {
      storage_retain(b->storage);
      b->ext_storage = b->storage;
      b->external_refs++;
    }
  } else {
    if (b->external_refs == 0)
      st = cj_invalid(
          "Attempting to decrease reference on a buffer with zero reference count.");
    else {
      drop = b->ext_storage;
      if (--b->external_refs == 0) b->ext_storage = NULL;
    }
  }
  pthread_mutex_unlock(&b->mu);
  storage_release(drop);
  return st;
}

/* Sets `joined` when both `a` and `b` are ready; the first error wins. */
typedef struct join {
  atomic_int pending;
  pthread_mutex_t mu;
  cj_status first_error;
  cj_event *joined;
} join;

static void join_arrive(void *ctx, cj_status st) {
  join *j = ctx;
  pthread_mutex_lock(&j->mu);
  if (st && !j->first_error) j->first_error = cj_status_copy(st);
  pthread_mutex_unlock(&j->mu);
  if (atomic_fetch_sub(&j->pending, 1) == 1) {
    /* the join's event is set once, by the last arrival */
    cj_status_ignore(cj_event_set(j->joined, j->first_error));
    cj_event_release(j->joined);
    pthread_mutex_destroy(&j->mu);
    free(j);
  }
}

static CJ_MUST_USE cj_status event_join(cj_event *a, cj_event *b, cj_event **out) {
  *out = NULL;
  join *j = calloc(1, sizeof *j);
  cj_event *joined = cj_event_create(false);
  if (!j || !joined || pthread_mutex_init(&j->mu, NULL) != 0) {
    free(j);
    cj_event_release(joined);
    return cj_oom();
  }
  atomic_init(&j->pending, 2);
  j->joined = joined;
  cj_event_retain(joined); /* the join's own reference, dropped when it fires */
  *out = joined;
  cj_status st = cj_event_on_ready(a, join_arrive, j);
  if (st) {
    join_arrive(j, st); /* counts as an arrival carrying the error */
    cj_status_free(st);
  }
  st = cj_event_on_ready(b, join_arrive, j);
  if (st) {
    join_arrive(j, st);
    cj_status_free(st);
  }
  return NULL;
}

/* Moves b's storage into a new buffer; `ready` (consumed) is the new buffer's ready event. */
static CJ_MUST_USE cj_status move_storage(cj_buffer *b, cj_dtype dt, const int64_t *dims, int rank,
                              size_t nbytes, cj_event *dependency, bool refuse_external,
                              cj_buffer **out) {
  *out = NULL;
  pthread_mutex_lock(&b->mu);
  if (b->deleted) {
    cj_status err = deleted_error(b);
    pthread_mutex_unlock(&b->mu);
    return err;
  }
  if (refuse_external && b->external_refs > 0) {
    int64_t n = b->external_refs;
    pthread_mutex_unlock(&b->mu);
    return cj_status_make(CJ_FAILED_PRECONDITION,
                          "donation requested for a buffer with %lld external references",
                          (long long)n);
  }
  cj_storage *s = b->storage;
  cj_event *src_ready = b->ready;
  cj_event_retain(src_ready);
  b->storage = NULL;
  b->deleted = true;
  b->donated = true;
  pthread_mutex_unlock(&b->mu);

  cj_event *ready = src_ready;
  if (dependency) {
    cj_status st = event_join(src_ready, dependency, &ready);
    cj_event_release(src_ready);
    if (st) {
      storage_release(s);
      return st;
    }
  }
  return buffer_new(b->memory, dt, dims, rank, nbytes, s, ready, out);
}

cj_status cj_buffer_donate(cj_buffer *b, cj_event *dependency, cj_buffer **out) {
  return move_storage(b, b->dtype, b->dims, b->rank, b->nbytes, dependency, true, out);
}

cj_status cj_buffer_bitcast(cj_buffer *b, cj_dtype dt, const int64_t *dims, int rank,
                            cj_buffer **out) {
  *out = NULL;
  size_t nbytes;
  CJ_RETURN_IF_ERROR(cj_shape_check(dt, dims, (size_t)rank, &nbytes));
  if (nbytes != b->nbytes)
    return cj_invalid("cannot bitcast a %zu-byte buffer to a shape of %zu bytes", b->nbytes,
                      nbytes);
  return move_storage(b, dt, dims, rank, nbytes, NULL, false, out);
}

cj_storage *cj_buffer_pin(cj_buffer *b) {
  pthread_mutex_lock(&b->mu);
  cj_storage *s = b->deleted ? NULL : b->storage;
  if (s) cj_storage_writer_ref(s);
  pthread_mutex_unlock(&b->mu);
  return s;
}

cj_storage *cj_storage_ref(cj_storage *s) {
  if (s) storage_retain(s);
  return s;
}

void cj_storage_unpin(cj_storage *s) { storage_release(s); }

cj_status cj_buffer_write(cj_buffer *b, cj_storage *pinned, int64_t offset, const void *data,
                          int64_t size) {
  CJ_RETURN_IF_ERROR(check_range(b, offset, size));
  if (!data && size) return cj_invalid("data is NULL");
  if (!pinned) return cj_status_make(CJ_FAILED_PRECONDITION, "the buffer has no device memory");
  if (!size) return NULL;
  return b->client->backend->vt->copy_to_device(b->client->backend, backend_device(pinned->device),
                                                (char *)pinned->ptr + offset, data, (size_t)size);
}

cj_status cj_buffer_write_array(cj_buffer *b, cj_storage *pinned, const void *src,
                                const int64_t *src_strides) {
  if (!src && b->nbytes) return cj_invalid("data is NULL");
  if (!pinned) return cj_status_make(CJ_FAILED_PRECONDITION, "the buffer has no device memory");
  return write_host(b->client, pinned, src, src_strides, b->dims, b->rank,
                    (size_t)cj_dtype_bytes(b->dtype), b->nbytes);
}

cj_status cj_buffer_set_ready(cj_buffer *b, cj_status st) {
  pthread_mutex_lock(&b->mu);
  cj_event *e = b->ready;
  cj_event_retain(e);
  pthread_mutex_unlock(&b->mu);
  cj_status r = cj_event_set(e, st);
  cj_event_release(e);
  return r;
}

/* ------------------------------------------------------------------------------------------ */
/* Executions                                                                                  */

void *cj_storage_data(const cj_storage *s) { return s->ptr; }

void cj_storage_writer_ref(cj_storage *s) {
  atomic_fetch_add_explicit(&s->writers, 1, memory_order_acq_rel);
  storage_retain(s);
}

void cj_storage_writer_unref(cj_storage *s) {
  if (!s) return;
  atomic_fetch_sub_explicit(&s->writers, 1, memory_order_acq_rel);
  storage_release(s);
}
size_t cj_storage_size(const cj_storage *s) { return s->size; }

cj_status cj_buffer_acquire(cj_buffer *b, cj_storage **out_storage, cj_event **out_ready) {
  *out_storage = NULL;
  *out_ready = NULL;
  return acquire(b, out_storage, out_ready);
}

int cj_buffer_try_donate(cj_buffer *b, cj_storage **out_storage, cj_event **out_ready) {
  *out_storage = NULL;
  *out_ready = NULL;
  pthread_mutex_lock(&b->mu);
  cj_storage *s = b->storage;
  /* Besides the buffer's own reference, only executions still producing the contents may hold
   * one (they finish writing before the ready event fires, and the new execution waits for it).
   * Readers (pending copies, other executions, external references) forbid donation. References
   * are only added under this lock or by the producer that made the storage, so the answer
   * cannot become wrong meanwhile; a producer letting go in between makes it conservative. */
  int refs = s ? atomic_load_explicit(&s->refs, memory_order_acquire) : 0;
  int writers = s ? atomic_load_explicit(&s->writers, memory_order_acquire) : 0;
  bool ok = !b->deleted && s && b->external_refs == 0 && refs - writers == 1;
  int how = !ok ? CJ_NOT_DONATED : s->kind == ST_OWNED && !s->readonly ? CJ_DONATED : CJ_CONSUMED;
  if (ok) {
    b->storage = NULL;
    b->deleted = true;
    b->donated = true;
    cj_event_retain(b->ready);
    *out_ready = b->ready;
    *out_storage = s;
  }
  pthread_mutex_unlock(&b->mu);
  return how;
}

void cj_buffer_undo_donate(cj_buffer *b, cj_storage *s) {
  pthread_mutex_lock(&b->mu);
  cj_storage *old = b->storage;
  b->storage = s;
  b->deleted = false;
  b->donated = false;
  pthread_mutex_unlock(&b->mu);
  storage_release(old); /* NULL: nothing could have been attached meanwhile */
}

cj_status cj_buffer_create_with_storage(cj_memory *mem, cj_dtype dt, const int64_t *dims,
                                        int rank, cj_storage *storage, cj_event *ready,
                                        cj_buffer **out) {
  *out = NULL;
  size_t nbytes = 0;
  cj_status st = check_memory(mem);
  if (!st) st = cj_shape_check(dt, dims, (size_t)rank, &nbytes);
  if (!st && storage && storage->size < nbytes)
    st = cj_internal("a %zu-byte storage cannot hold a %zu-byte array", storage->size, nbytes);
  if (st) {
    storage_release(storage);
    cj_event_release(ready);
    return st;
  }
  return buffer_new(mem, dt, dims, rank, nbytes, storage, ready, out);
}

void cj_buffer_attach_storage(cj_buffer *b, cj_storage *s) {
  pthread_mutex_lock(&b->mu);
  cj_storage *old = b->storage;
  b->storage = s;
  pthread_mutex_unlock(&b->mu);
  storage_release(old); /* NULL for buffers made without storage */
}

void cj_buffer_drop_storage(cj_buffer *b) {
  pthread_mutex_lock(&b->mu);
  cj_storage *s = b->storage;
  b->storage = NULL;
  pthread_mutex_unlock(&b->mu);
  storage_release(s);
}
