/* cjrt: transfer managers and copy-to-device streams (see transfer.h). Copies are synchronous:
 * the data is in device memory when a call returns, so "done" events are ready at once. */
#include "runtime/transfer.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
  cj_buffer *buffer;  /* the manager's reference */
  cj_storage *pinned; /* the memory being filled, until complete */
  bool complete;     /* ready (with data or an error) */
  bool retrieved;
} slot;

struct cj_transfer {
  cj_object hdr;
  cj_memory *memory;
  cj_client *client; /* retained */
  pthread_mutex_t mu;
  int n;
  slot *slots;
};

bool cj_transfer_check(const void *p) { return cj_object_is(p, CJ_TAG_TRANSFER); }

static void transfer_free(cj_transfer *t) {
  for (int i = 0; i < t->n; i++) {
    if (!t->slots[i].buffer) continue;
    cj_storage_writer_unref(t->slots[i].pinned);
    /* the buffer can be ready already (set by a failed piece) */
    if (!t->slots[i].complete)
      cj_status_ignore(cj_buffer_set_ready(
          t->slots[i].buffer,
          cj_status_make(CJ_CANCELLED,
                         "the transfer manager was destroyed before buffer %d was complete", i)));
    cj_buffer_release(t->slots[i].buffer);
  }
  free(t->slots);
  pthread_mutex_destroy(&t->mu);
  cj_client_release(t->client);
  t->hdr.tag = CJ_TAG_DEAD;
  free(t);
}

cj_status cj_transfer_create(cj_memory *mem, int nbuffers, const cj_shape_spec *specs,
                             cj_transfer **out) {
  *out = NULL;
  if (!cj_memory_check(mem)) return cj_invalid("the memory is not a valid cjrt memory");
  if (nbuffers < 0) return cj_invalid("buffer count %d is negative", nbuffers);
  if (nbuffers && !specs) return cj_invalid("shape specs are NULL for %d buffers", nbuffers);
  cj_transfer *t = calloc(1, sizeof *t);
  if (!t) return cj_oom();
  t->slots = calloc((size_t)(nbuffers ? nbuffers : 1), sizeof *t->slots);
  if (!t->slots || pthread_mutex_init(&t->mu, NULL) != 0) {
    free(t->slots);
    free(t);
    return cj_oom();
  }
  cj_object_init(&t->hdr, CJ_TAG_TRANSFER);
  t->memory = mem;
  t->client = mem->client;
  cj_client_retain(t->client);
  t->n = nbuffers;
  for (int i = 0; i < nbuffers; i++) {
    cj_status st = cj_buffer_create_pending(mem, specs[i].dtype, specs[i].dims, specs[i].rank,
                                            &t->slots[i].buffer);
    if (st) {
      /* Buffers made so far were never visible: fail them quietly. */
      transfer_free(t);
      return cj_status_annotate(st, "buffer %d", i);
    }
    t->slots[i].pinned = cj_buffer_pin(t->slots[i].buffer);
  }
  *out = t;
  return NULL;
}

void cj_transfer_destroy(cj_transfer *t) {
  if (t && cj_object_release(&t->hdr)) transfer_free(t);
}

int cj_transfer_count(const cj_transfer *t) { return t->n; }
cj_device *cj_transfer_device(const cj_transfer *t) { return t->memory->device; }
size_t cj_transfer_buffer_size(const cj_transfer *t, int i) {
  return cj_buffer_nbytes(t->slots[i].buffer);
}

cj_status cj_transfer_check_index(const cj_transfer *t, int i) {
  if (i < 0 || i >= t->n)
    return cj_invalid("buffer index %d is out of range [0, %d)", i, t->n);
  return NULL;
}

/* Takes buffer i for writing: a buffer reference and a pinned-storage reference (both for
 * the caller to release). With `finish`, marks it complete (the slot's writer pin ends);
 * FAILED_PRECONDITION if it already was. */
static CJ_MUST_USE cj_status claim(cj_transfer *t, int i, bool finish, cj_buffer **out, cj_storage **pinned) {
  CJ_RETURN_IF_ERROR(cj_transfer_check_index(t, i));
  pthread_mutex_lock(&t->mu);
  slot *s = &t->slots[i];
  if (s->complete) {
    pthread_mutex_unlock(&t->mu);
    return cj_status_make(CJ_FAILED_PRECONDITION, "buffer %d is already complete", i);
  }
  *out = s->buffer;
  cj_buffer_retain(*out);
  if (finish) {
    s->complete = true;
    /* the caller gets a plain reference; the slot's writer pin ends here */
    *pinned = cj_storage_ref(s->pinned);
    cj_storage_writer_unref(s->pinned);
    s->pinned = NULL;
  } else {
    *pinned = cj_storage_ref(s->pinned);
  }
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

static CJ_MUST_USE cj_status ready_event(cj_event **out_done) {
  if (!out_done) return NULL;
  *out_done = cj_event_create_ready(NULL);
  return *out_done ? NULL : cj_oom();
}

cj_status cj_transfer_data(cj_transfer *t, int i, const void *data, int64_t offset, int64_t size,
                           bool last, cj_event **out_done) {
  if (out_done) *out_done = NULL;
  CJ_RETURN_IF_ERROR(cj_transfer_check_index(t, i));
  size_t n = cj_buffer_nbytes(t->slots[i].buffer);
  if (offset < 0 || size < 0 || (uint64_t)offset > n || (uint64_t)size > n - (uint64_t)offset)
    return cj_invalid("byte range [%lld, %lld + %lld) is outside buffer %d's %zu bytes",
                      (long long)offset, (long long)offset, (long long)size, i, n);
  cj_buffer *b;
  cj_storage *pinned;
  CJ_RETURN_IF_ERROR(claim(t, i, last, &b, &pinned));
  cj_status st = cj_buffer_write(b, pinned, offset, data, size);
  /* A failed last piece: the data is lost, the buffer carries the failure. The buffer is set once,
   * by the last piece (claim() says which), so setting it cannot fail. */
  if (last) cj_status_ignore(cj_buffer_set_ready(b, st ? cj_status_copy(st) : NULL));
  cj_storage_unpin(pinned);
  cj_buffer_release(b);
  if (st) return cj_status_annotate(st, "buffer %d", i);
  return ready_event(out_done);
}

cj_status cj_transfer_literal(cj_transfer *t, int i, const void *data, cj_dtype dt,
                              const int64_t *dims, int rank, const int64_t *src_strides,
                              cj_event **out_done) {
  if (out_done) *out_done = NULL;
  CJ_RETURN_IF_ERROR(cj_transfer_check_index(t, i));
  cj_buffer *target = t->slots[i].buffer;
  bool same = cj_buffer_dtype(target) == dt && cj_buffer_rank(target) == rank &&
              (rank == 0 || (dims && memcmp(dims, cj_buffer_dims(target),
                                            sizeof(int64_t) * (size_t)rank) == 0));
  if (!same)
    return cj_invalid("the literal's shape does not match buffer %d (%s, rank %d)", i,
                      cj_dtype_get(cj_buffer_dtype(target))->id, cj_buffer_rank(target));
  cj_buffer *b;
  cj_storage *pinned;
  CJ_RETURN_IF_ERROR(claim(t, i, true, &b, &pinned));
  cj_status st = cj_buffer_write_array(b, pinned, data, src_strides);
  /* set once, here; its failure is `st`, returned below */
  cj_status_ignore(cj_buffer_set_ready(b, st ? cj_status_copy(st) : NULL));
  cj_storage_unpin(pinned);
  cj_buffer_release(b);
  if (st) return cj_status_annotate(st, "buffer %d", i);
  return ready_event(out_done);
}

cj_status cj_transfer_set_error(cj_transfer *t, int i, cj_status error) {
  cj_buffer *b;
  cj_storage *pinned;
  cj_status st = claim(t, i, true, &b, &pinned);
  if (st) {
    cj_status_ignore(error); /* the claim's failure is what the caller must see */
    return st;
  }
  cj_storage_unpin(pinned);
  if (!error) error = cj_status_make(CJ_UNKNOWN, "buffer %d was set to an error", i);
  st = cj_buffer_set_ready(b, error);
  cj_buffer_release(b);
  return st;
}

cj_status cj_transfer_retrieve(cj_transfer *t, int i, cj_buffer **out) {
  *out = NULL;
  CJ_RETURN_IF_ERROR(cj_transfer_check_index(t, i));
  pthread_mutex_lock(&t->mu);
  if (t->slots[i].retrieved) {
    pthread_mutex_unlock(&t->mu);
    return cj_status_make(CJ_FAILED_PRECONDITION, "buffer %d was already retrieved", i);
  }
  t->slots[i].retrieved = true;
  cj_buffer_retain(t->slots[i].buffer);
  *out = t->slots[i].buffer;
  pthread_mutex_unlock(&t->mu);
  return NULL;
}

/* ------------------------------------------------------------------------------------------ */

struct cj_stream {
  cj_object hdr;
  cj_buffer *dst;     /* retained */
  cj_storage *pinned; /* dst's memory, until complete */
  int64_t total, granule;
  pthread_mutex_t mu;
  int64_t current;
  bool complete;
};

bool cj_stream_check(const void *p) { return cj_object_is(p, CJ_TAG_STREAM); }

cj_status cj_stream_create(cj_buffer *dst, int64_t granule, cj_stream **out) {
  *out = NULL;
  if (!cj_buffer_check(dst)) return cj_invalid("the destination is not a valid buffer");
  if (granule < 1) return cj_invalid("granule size %lld must be >= 1", (long long)granule);
  cj_stream *s = calloc(1, sizeof *s);
  if (!s || pthread_mutex_init(&s->mu, NULL) != 0) {
    free(s);
    return cj_oom();
  }
  cj_object_init(&s->hdr, CJ_TAG_STREAM);
  s->dst = dst;
  cj_buffer_retain(dst);
  s->total = (int64_t)cj_buffer_nbytes(dst);
  s->granule = granule;
  s->pinned = cj_buffer_pin(dst);
  if (s->total == 0) {
    s->complete = true;
    cj_status_ignore(cj_buffer_set_ready(dst, NULL)); /* a new buffer: setting it cannot fail */
  }
  *out = s;
  return NULL;
}

void cj_stream_destroy(cj_stream *s) {
  if (!s) return;
  if (!cj_object_release(&s->hdr)) return;
  if (!s->complete)
    cj_status_ignore(cj_buffer_set_ready( /* the buffer can be ready already */
        s->dst, cj_status_make(CJ_CANCELLED,
                               "the stream was destroyed after %lld of %lld bytes",
                               (long long)s->current, (long long)s->total)));
  cj_storage_writer_unref(s->pinned);
  cj_buffer_release(s->dst);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

int64_t cj_stream_total_bytes(const cj_stream *s) { return s->total; }
int64_t cj_stream_granule(const cj_stream *s) { return s->granule; }
int64_t cj_stream_current_bytes(cj_stream *s) {
  pthread_mutex_lock(&s->mu);
  int64_t c = s->current;
  pthread_mutex_unlock(&s->mu);
  return c;
}

cj_status cj_stream_add_chunk(cj_stream *s, const void *data, size_t size, cj_event **out_done) {
  *out_done = NULL;
  cj_status problem = NULL;
  int64_t offset = 0;
  bool finished = false;
  pthread_mutex_lock(&s->mu);
  if (s->complete)
    problem = cj_status_make(CJ_FAILED_PRECONDITION,
                             "the stream is already complete (%lld bytes)", (long long)s->total);
  else if ((int64_t)(size % (size_t)s->granule) != 0)
    problem = cj_invalid("chunk of %zu bytes is not a multiple of the granule size %lld", size,
                         (long long)s->granule);
  else if ((uint64_t)size > (uint64_t)(s->total - s->current))
    problem = cj_invalid("chunk of %zu bytes exceeds the %lld bytes the stream still expects",
                         size, (long long)(s->total - s->current));
  else if (size && !data)
    problem = cj_invalid("the chunk's data is NULL");
  else {
    offset = s->current;
    s->current += (int64_t)size;
    finished = s->current == s->total;
    if (finished) s->complete = true;
  }
  pthread_mutex_unlock(&s->mu);
  if (!problem) {
    problem = cj_buffer_write(s->dst, s->pinned, offset, data, (int64_t)size);
    if (problem && !finished) {
      /* The buffer can never be complete now. */
      pthread_mutex_lock(&s->mu);
      finished = !s->complete;
      s->complete = true;
      pthread_mutex_unlock(&s->mu);
    }
    /* `finished` says it was not complete: setting it cannot fail */
    if (finished) cj_status_ignore(cj_buffer_set_ready(s->dst, cj_status_copy(problem)));
  }
  cj_event *e = cj_event_create_ready(problem);
  if (!e) return cj_oom();
  *out_done = e;
  return NULL;
}
