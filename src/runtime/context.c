/* cjrt: execute contexts and tracking events (see context.h). */
#include "runtime/context.h"

#include <stdlib.h>
#include <string.h>

struct cj_exec_context {
  cj_object hdr;
  cj_ffi_user_data *items;
  void (**deleters)(void *);
  int32_t n, cap;
  cj_ffi_user_data_list list;
};

cj_status cj_exec_context_create(cj_exec_context **out) {
  *out = NULL;
  cj_exec_context *c = calloc(1, sizeof *c);
  if (!c) return cj_oom();
  cj_object_init(&c->hdr, CJ_TAG_CONTEXT);
  *out = c;
  return NULL;
}

void cj_exec_context_destroy(cj_exec_context *c) {
  if (!c) return;
  for (int32_t i = 0; i < c->n; i++)
    if (c->deleters[i]) c->deleters[i](c->items[i].data);
  free(c->items);
  free(c->deleters);
  c->hdr.tag = CJ_TAG_DEAD;
  free(c);
}

cj_status cj_exec_context_add_user_data(cj_exec_context *c, int64_t type_id, void *data,
                                        void (*deleter)(void *)) {
  for (int32_t i = 0; i < c->n; i++)
    if (c->items[i].type_id == type_id) {
      if (c->deleters[i] && c->items[i].data != data) c->deleters[i](c->items[i].data);
      c->items[i].data = data;
      c->deleters[i] = deleter;
      return NULL;
    }
  if (c->n == c->cap) {
    int32_t cap = c->cap ? 2 * c->cap : 4;
    cj_ffi_user_data *items = realloc(c->items, (size_t)cap * sizeof *items);
    if (!items) return cj_oom();
    c->items = items;
    void (**dels)(void *) = realloc(c->deleters, (size_t)cap * sizeof *dels);
    if (!dels) return cj_oom();
    c->deleters = dels;
    c->cap = cap;
  }
  c->items[c->n] = (cj_ffi_user_data){type_id, data};
  c->deleters[c->n] = deleter;
  c->n++;
  c->list.n = c->n;
  c->list.items = c->items;
  return NULL;
}

const cj_ffi_user_data_list *cj_exec_context_user_data(const cj_exec_context *c) {
  return &c->list;
}

bool cj_exec_context_check(const void *p) { return cj_object_is(p, CJ_TAG_CONTEXT); }

struct cj_tracking_event {
  cj_object hdr;
  cj_device *device;
  char *description;
};

cj_status cj_tracking_event_create(cj_device *d, const char *description, size_t size,
                                   cj_tracking_event **out) {
  *out = NULL;
  if (!description && size) return cj_invalid("description is NULL but its size is %zu", size);
  cj_tracking_event *e = calloc(1, sizeof *e);
  char *copy = malloc(size + 1);
  if (!e || !copy) {
    free(e);
    free(copy);
    return cj_oom();
  }
  if (size) memcpy(copy, description, size);
  copy[size] = 0;
  cj_object_init(&e->hdr, CJ_TAG_TRACKING);
  e->device = d;
  e->description = copy;
  *out = e;
  return NULL;
}

void cj_tracking_event_destroy(cj_tracking_event *e) {
  if (!e) return;
  e->hdr.tag = CJ_TAG_DEAD;
  free(e->description);
  free(e);
}

bool cj_tracking_event_check(const void *p) { return cj_object_is(p, CJ_TAG_TRACKING); }

const char *cj_tracking_event_description(const cj_tracking_event *e) { return e->description; }
