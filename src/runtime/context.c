/* cjrt: execute contexts and tracking events (see context.h). */
#include "runtime/context.h"

#include <stdlib.h>
#include <string.h>

struct cj_exec_context {
  cj_object hdr;
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
  c->hdr.tag = CJ_TAG_DEAD;
  free(c);
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
