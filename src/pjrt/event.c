/* cjrt: PJRT_Event_*. A PJRT_Event handle is a cj_event plus one reference owned by the handle. */
#include <stdlib.h>

#include "pjrt/internal.h"

CJP_DESTROY_SLOT(PJRT_Event_Destroy, event, cj_event, cj_event_check, cj_event_release)

CJP_EVENT_SLOT(PJRT_Event_IsReady, is_ready,
    args->is_ready = cj_event_is_ready(e);)

PJRT_Error *cjp_PJRT_Event_Error(PJRT_Event_Error_Args *args) {
  CJP_CHECK_ARGS(PJRT_Event_Error, args, event);
  CJP_EVENT(PJRT_Event_Error, e, args->event, "event");
  if (!cj_event_is_ready(e))
    return cjp_errorf(CJ_FAILED_PRECONDITION,
                      "PJRT_Event_Error: the event is not ready (call it after IsReady says "
                      "true, or use Await)");
  return cjp_error(cj_event_status(e));
}

PJRT_Error *cjp_PJRT_Event_Await(PJRT_Event_Await_Args *args) {
  CJP_CHECK_ARGS(PJRT_Event_Await, args, event);
  CJP_EVENT(PJRT_Event_Await, e, args->event, "event");
  return cjp_error(cj_event_wait(e));
}

typedef struct on_ready_ctx {
  PJRT_Event_OnReadyCallback callback;
  void *user_arg;
} on_ready_ctx;

/* Runs with no runtime lock held; hands the callback an error of its own. */
static void on_ready_trampoline(void *ctx, cj_status st) {
  on_ready_ctx c = *(on_ready_ctx *)ctx;
  free(ctx);
  c.callback(cjp_error(cj_status_copy(st)), c.user_arg);
}

PJRT_Error *cjp_PJRT_Event_OnReady(PJRT_Event_OnReady_Args *args) {
  CJP_CHECK_ARGS(PJRT_Event_OnReady, args, user_arg);
  CJP_EVENT(PJRT_Event_OnReady, e, args->event, "event");
  CJP_REQUIRE(PJRT_Event_OnReady, args->callback, "callback is NULL");
  on_ready_ctx *c = malloc(sizeof *c);
  if (!c) return cjp_errorf(CJ_RESOURCE_EXHAUSTED, "PJRT_Event_OnReady: out of memory");
  c->callback = args->callback;
  c->user_arg = args->user_arg;
  cj_status st = cj_event_on_ready(e, on_ready_trampoline, c);
  if (st) free(c);
  return cjp_error_in("PJRT_Event_OnReady", st);
}

PJRT_Error *cjp_PJRT_Event_Create(PJRT_Event_Create_Args *args) {
  CJP_CHECK_ARGS(PJRT_Event_Create, args, event);
  cj_event *e = cj_event_create(true);
  if (!e) return cjp_errorf(CJ_RESOURCE_EXHAUSTED, "PJRT_Event_Create: out of memory");
  args->event = (PJRT_Event *)e;
  return NULL;
}

PJRT_Error *cjp_PJRT_Event_Set(PJRT_Event_Set_Args *args) {
  CJP_CHECK_ARGS(PJRT_Event_Set, args, error_message_size);
  CJP_EVENT(PJRT_Event_Set, e, args->event, "event");
  CJP_REQUIRE(PJRT_Event_Set, cj_event_settable_by_user(e),
              "the event was not made by PJRT_Event_Create (only those can be set)");
  cj_status st = cjp_status_from_code(args->error_code, args->error_message,
                                      args->error_message_size, "the event was set to an error");
  return cjp_error_in("PJRT_Event_Set", cj_event_set(e, st));
}
