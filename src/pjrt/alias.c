/* cjrt: PJRT_Client_CreateAliasBuffer / PJRT_Client_FulfillAliasBuffer (a buffer whose contents
 * are bound later) and PJRT_Client_DmaMap / PJRT_Client_DmaUnmap (host memory registration).
 *
 * An alias buffer is pending until it is fulfilled: reads and executions that use it are queued
 * and wait. The PJRT_FulfillAliasBufferCallback handed out with it is a promise object holding a
 * reference to the alias; FulfillAliasBuffer consumes (frees) it on success, after which it is a
 * dead handle like any destroyed one, and leaves it untouched when it refuses the arguments, so
 * the caller may fulfill it again (e.g. with an error). A promise never fulfilled keeps its
 * alias (and client) alive.
 *
 * DmaMap/DmaUnmap: the CPU backend's device memory is host memory, so there is nothing to
 * register; the calls check their arguments and succeed. */
#include <stdlib.h>

#include "pjrt/internal.h"

typedef struct alias_promise {
  cj_object hdr; /* CJ_TAG_ALIAS */
  cj_buffer *alias; /* retained */
} alias_promise;

static bool promise_check(const void *p) { return cj_object_is(p, CJ_TAG_ALIAS); }

PJRT_Error *cjp_PJRT_Client_CreateAliasBuffer(PJRT_Client_CreateAliasBuffer_Args *args) {
  CJP_ENTER(PJRT_Client_CreateAliasBuffer, fulfill_alias_buffer_cb);
  CJP_CLIENT_MEMORY(PJRT_Client_CreateAliasBuffer, c, mem);
  cj_dtype dt;
  cj_status st = cjp_device_array(args->shape_element_type, args->shape_dims, args->shape_num_dims,
                                  args->shape_layout, &dt);
  if (st) return cjp_error_in(fn, st);
  alias_promise *p = calloc(1, sizeof *p);
  if (!p) return cjp_error_in(fn, cj_oom());
  cj_buffer *b;
  st = cj_buffer_create_pending(mem, dt, args->shape_dims, (int)args->shape_num_dims, &b);
  if (st) {
    free(p);
    return cjp_error_in(fn, st);
  }
  cj_object_init(&p->hdr, CJ_TAG_ALIAS);
  cj_buffer_retain(b);
  p->alias = b;
  args->alias_buffer = (PJRT_Buffer *)b;
  args->fulfill_alias_buffer_cb = (PJRT_FulfillAliasBufferCallback *)p;
  return NULL;
}

PJRT_Error *cjp_PJRT_Client_FulfillAliasBuffer(PJRT_Client_FulfillAliasBuffer_Args *args) {
  CJP_ENTER(PJRT_Client_FulfillAliasBuffer, fulfill_alias_buffer_cb);
  CJP_CLIENT(PJRT_Client_FulfillAliasBuffer, c, args->client, "client");
  CJP_HANDLE(PJRT_Client_FulfillAliasBuffer, alias_promise, promise_check, p,
             args->fulfill_alias_buffer_cb, "fulfill_alias_buffer_cb");
  if (cj_buffer_client(p->alias) != c)
    return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: the alias buffer belongs to another client", fn);
  cj_status st;
  if (args->status_code != PJRT_Error_Code_OK) {
    if (!args->error_message && args->error_message_size)
      return cjp_errorf(CJ_INVALID_ARGUMENT, "%s: error_message is NULL but its size is %zu", fn,
                        args->error_message_size);
    cj_status err = cjp_status_from_code(args->status_code, args->error_message,
                                         args->error_message_size, "alias buffer");
    st = cj_buffer_set_ready(p->alias, err);
  } else {
    CJP_BUFFER(PJRT_Client_FulfillAliasBuffer, src, args->buffer, "buffer");
    st = cj_buffer_fulfill_alias(p->alias, src);
  }
  if (st) return cjp_error_in(fn, st);
  p->hdr.tag = CJ_TAG_DEAD;
  cj_buffer_release(p->alias);
  free(p);
  return NULL;
}

PJRT_Error *cjp_PJRT_Client_DmaMap(PJRT_Client_DmaMap_Args *args) {
  CJP_CHECK_ARGS(PJRT_Client_DmaMap, args, size);
  CJP_CLIENT(PJRT_Client_DmaMap, c, args->client, "client");
  (void)c;
  CJP_REQUIRE(PJRT_Client_DmaMap, args->data, "data is NULL");
  CJP_REQUIRE(PJRT_Client_DmaMap, args->size > 0, "size is 0");
  CJP_REQUIRE(PJRT_Client_DmaMap, (uintptr_t)args->data + args->size >= (uintptr_t)args->data,
              "data + size (%zu bytes) wraps around the address space", args->size);
  return NULL; /* host memory needs no registration on the CPU */
}

CJP_CLIENT_SLOT(PJRT_Client_DmaUnmap, data,
    (void)c;
    CJP_REQUIRE(PJRT_Client_DmaUnmap, args->data, "data is NULL");)
