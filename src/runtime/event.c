/* cjrt: events (see event.h). A mutex and a condition variable guard the state; callbacks are
 * collected under the lock and run after it is released. */
#include "runtime/event.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct cj_event_cb {
  cj_event_fn fn;
  void *ctx;
  struct cj_event_cb *next;
} cj_event_cb;

struct cj_event {
  cj_object hdr;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool ready;
  bool settable_by_user;
  cj_status status; /* owned; meaningful once ready */
  cj_event_cb *cbs; /* pending callbacks, most recent first */
};

cj_event *cj_event_create(bool settable_by_user) {
  cj_event *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  cj_object_init(&e->hdr, CJ_TAG_EVENT);
  if (pthread_mutex_init(&e->mu, NULL) != 0) {
    free(e);
    return NULL;
  }
  if (pthread_cond_init(&e->cv, NULL) != 0) {
    pthread_mutex_destroy(&e->mu);
    free(e);
    return NULL;
  }
  e->settable_by_user = settable_by_user;
  return e;
}

cj_event *cj_event_create_ready(cj_status st) {
  cj_event *e = cj_event_create(false);
  if (!e) {
    cj_status_ignore(st); /* no event to carry it: the caller learns of the failure from NULL */
    return NULL;
  }
  e->ready = true;
  e->status = st;
  return e;
}

void cj_event_retain(cj_event *e) { cj_object_retain(&e->hdr); }

bool cj_event_check(const void *p) { return cj_object_is(p, CJ_TAG_EVENT); }

bool cj_event_settable_by_user(const cj_event *e) { return e->settable_by_user; }

/* Runs a detached callback list in registration order (the list is most recent first). */
static void run_callbacks(cj_event_cb *list, cj_status st) {
  cj_event_cb *rev = NULL;
  while (list) {
    cj_event_cb *next = list->next;
    list->next = rev;
    rev = list;
    list = next;
  }
  while (rev) {
    cj_event_cb *next = rev->next;
    rev->fn(rev->ctx, st);
    free(rev);
    rev = next;
  }
}

void cj_event_release(cj_event *e) {
  if (!e) return;
  if (!cj_object_release(&e->hdr)) return;
  /* Last reference: nobody can set it any more. Pending callbacks still run exactly once. */
  if (!e->ready && e->cbs) {
    cj_status st = cj_status_make(CJ_CANCELLED, "the event was destroyed before it was set");
    run_callbacks(e->cbs, st);
    cj_status_free(st);
    e->cbs = NULL;
  }
  cj_status_free(e->status);
  pthread_cond_destroy(&e->cv);
  pthread_mutex_destroy(&e->mu);
  free(e);
}

cj_status cj_event_set(cj_event *e, cj_status st) {
  pthread_mutex_lock(&e->mu);
  if (e->ready) {
    pthread_mutex_unlock(&e->mu);
    cj_status_ignore(st); /* the event keeps its first status; this late one has no reader */
    return cj_status_make(CJ_FAILED_PRECONDITION, "the event is already set");
  }
  e->ready = true;
  e->status = st;
  cj_event_cb *cbs = e->cbs;
  e->cbs = NULL;
  pthread_cond_broadcast(&e->cv);
  /* Keep the event (and so its status) alive while the callbacks run: one of them may drop the
   * last outside reference. */
  cj_object_retain(&e->hdr);
  pthread_mutex_unlock(&e->mu);
  run_callbacks(cbs, e->status);
  cj_event_release(e);
  return NULL;
}

bool cj_event_is_ready(cj_event *e) {
  pthread_mutex_lock(&e->mu);
  bool r = e->ready;
  pthread_mutex_unlock(&e->mu);
  return r;
}

cj_status cj_event_status(cj_event *e) {
  pthread_mutex_lock(&e->mu);
  cj_status r;
  if (!e->ready)
    r = cj_status_make(CJ_FAILED_PRECONDITION, "the event is not ready yet");
  else
    r = cj_status_copy(e->status);
  pthread_mutex_unlock(&e->mu);
  return r;
}

cj_status cj_event_wait(cj_event *e) {
  pthread_mutex_lock(&e->mu);
  while (!e->ready) pthread_cond_wait(&e->cv, &e->mu);
  cj_status r = cj_status_copy(e->status);
  pthread_mutex_unlock(&e->mu);
  return r;
}

cj_status cj_event_on_ready(cj_event *e, cj_event_fn fn, void *ctx) {
  cj_event_cb *cb = malloc(sizeof *cb);
  if (!cb) return cj_oom();
  cb->fn = fn;
  cb->ctx = ctx;
  pthread_mutex_lock(&e->mu);
  if (!e->ready) {
    cb->next = e->cbs;
    e->cbs = cb;
    pthread_mutex_unlock(&e->mu);
    return NULL;
  }
  pthread_mutex_unlock(&e->mu);
  free(cb);
  /* Ready: its status never changes again, and the caller holds a reference. */
  fn(ctx, e->status);
  return NULL;
}
