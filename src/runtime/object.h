/* cjrt: the header every runtime object starts with: a type tag and a reference count.
 *
 * The tag lets the API layer reject a handle of the wrong kind (a device passed where a buffer
 * is expected) with an error instead of a crash. Tags are distinctive 32-bit values; a freed
 * object has its tag overwritten with CJ_TAG_DEAD so that a use after free is more often
 * diagnosed than not (this is a debugging aid, not a guarantee).
 *
 * Reference counts are atomic. An object is freed when its count drops to zero; who holds
 * references is written in each object's header.
 */
#ifndef CJ_RUNTIME_OBJECT_H
#define CJ_RUNTIME_OBJECT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum cj_tag {
  CJ_TAG_DEAD = 0x64656164u,     /* "dead" */
  CJ_TAG_CLIENT = 0x636c6e74u,   /* "clnt" */
  CJ_TAG_DEVICE = 0x64657663u,   /* "devc" */
  CJ_TAG_DEVDESC = 0x64657364u,  /* "desd" */
  CJ_TAG_MEMORY = 0x6d656d73u,   /* "mems" */
  CJ_TAG_BUFFER = 0x62756672u,   /* "bufr" */
  CJ_TAG_EVENT = 0x6576656eu,    /* "even" */
  CJ_TAG_TRANSFER = 0x7866726du, /* "xfrm" */
  CJ_TAG_STREAM = 0x7374726du,   /* "strm" */
  CJ_TAG_CONTEXT = 0x63747874u,  /* "ctxt" */
  CJ_TAG_TRACKING = 0x7472636bu, /* "trck" */
  CJ_TAG_EXECUTABLE = 0x65786563u, /* "exec" */
  CJ_TAG_LOADED = 0x6c657865u,     /* "lexe" */
  CJ_TAG_TOPOLOGY = 0x746f706fu,   /* "topo" */
  CJ_TAG_ALIAS = 0x616c6961u,      /* "alia": an alias buffer's promise */
} cj_tag;

typedef struct cj_object {
  uint32_t tag;
  atomic_int refs;
} cj_object;

static inline void cj_object_init(cj_object *o, cj_tag tag) {
  o->tag = (uint32_t)tag;
  atomic_init(&o->refs, 1);
}
static inline void cj_object_retain(cj_object *o) {
  atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
}
/* True when this release dropped the last reference (the caller then frees the object). */
static inline bool cj_object_release(cj_object *o) {
  if (atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) == 1) {
    o->tag = CJ_TAG_DEAD;
    return true;
  }
  return false;
}
static inline bool cj_object_is(const void *p, cj_tag tag) {
  return p && ((const cj_object *)p)->tag == (uint32_t)tag;
}

#endif
