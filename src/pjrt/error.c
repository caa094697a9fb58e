/* cjrt: PJRT_Error. Since 0.107 an error starts with a function table, so code holding only the
 * error can read and free it; ours wraps a cj_status. Errors carry no payloads. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt/internal.h"

typedef struct cjp_err {
  PJRT_Error base; /* vtable; must be first */
  cj_status st;    /* never NULL */
  char *text;      /* the message with " [at <where>]" when CJRT_ERROR_LOCATIONS asks; or NULL */
} cjp_err;

static void vt_destroy(PJRT_Error *e);
static void vt_message(const PJRT_Error *e, const char **msg, size_t *size);
static PJRT_Error_Code vt_get_code(const PJRT_Error *e);
static void vt_for_each_payload(const PJRT_Error *e, PJRT_Error_PayloadVisitor v, void *arg);

static const PJRT_Error_FunctionTable error_vtable = {
    .struct_size = PJRT_Error_FunctionTable_STRUCT_SIZE,
    .instance_size = sizeof(cjp_err),
    .extension_start = NULL,
    .destroy = vt_destroy,
    .message = vt_message,
    .get_code = vt_get_code,
    .for_each_payload = vt_for_each_payload,
};

/* Returned when not even an error can be allocated; never freed. */
static cjp_err oom_error = {{&error_vtable}, NULL, NULL};
static const char oom_message[] = "out of memory";

static bool is_ours(const PJRT_Error *e) { return e && e->vtable == &error_vtable; }

PJRT_Error *cjp_error(cj_status st) {
  if (!st) return NULL;
  cjp_err *e = malloc(sizeof *e);
  if (!e) {
    cj_status_ignore(st); /* no memory for the error: the static out-of-memory one replaces it */
    return &oom_error.base;
  }
  e->base.vtable = &error_vtable;
  e->st = st;
  e->text = NULL;
  if (cj_status_locations_wanted()) {
    /* for cjrt's developers: where the error was made, and where each cause was */
    const char *m = cj_status_message(st);
    size_t nm = strlen(m), nw = cj_status_where(st, NULL, 0);
    e->text = malloc(nm + nw + 7);
    if (e->text) {
      memcpy(e->text, m, nm);
      memcpy(e->text + nm, " [at ", 5);
      cj_status_where(st, e->text + nm + 5, nw + 1);
      memcpy(e->text + nm + 5 + nw, "]", 2);
    }
  }
  return &e->base;
}

PJRT_Error *cjp_error_in(const char *fn, cj_status st) {
  if (!st) return NULL;
  return cjp_error(cj_status_annotate(st, "%s", fn));
}

PJRT_Error *cjp_errorf_at(const char *file, int line, const char *func, cj_code code,
                          const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  cj_status st = cj_status_makev_at(file, line, func, code, fmt, ap);
  va_end(ap);
  return cjp_error(st);
}

static void vt_destroy(PJRT_Error *e) {
  if (!e || e == &oom_error.base || !is_ours(e)) return;
  cjp_err *x = (cjp_err *)e;
  cj_status_free(x->st);
  free(x->text);
  x->base.vtable = NULL;
  free(x);
}

static void vt_message(const PJRT_Error *e, const char **msg, size_t *size) {
  const char *m = "";
  if (e == &oom_error.base)
    m = oom_message;
  else if (is_ours(e))
    m = ((const cjp_err *)e)->text ? ((const cjp_err *)e)->text
                                    : cj_status_message(((const cjp_err *)e)->st);
  if (msg) *msg = m;
  if (size) *size = strlen(m);
}

static PJRT_Error_Code vt_get_code(const PJRT_Error *e) {
  if (e == &oom_error.base) return PJRT_Error_Code_RESOURCE_EXHAUSTED;
  if (!is_ours(e)) return PJRT_Error_Code_UNKNOWN;
  return (PJRT_Error_Code)cj_status_code(((const cjp_err *)e)->st);
}

static void vt_for_each_payload(const PJRT_Error *e, PJRT_Error_PayloadVisitor v, void *arg) {
  /* cjrt errors carry no payloads. */
  (void)e;
  (void)v;
  (void)arg;
}

cj_status cjp_error_status(const PJRT_Error *e) {
  if (!e) return NULL;
  if (e == &oom_error.base) return cj_oom();
  if (!is_ours(e)) return cj_status_make(CJ_UNKNOWN, "an error not made by cjrt");
  return cj_status_copy(((const cjp_err *)e)->st);
}

cj_status cjp_error_take(PJRT_Error *e) {
  if (!e) return NULL;
  if (!is_ours(e)) {
    /* Someone else's error: read it through its own table, if it has one. */
    if (e->vtable && e->vtable->get_code && e->vtable->message) {
      const char *m = NULL;
      size_t n = 0;
      e->vtable->message(e, &m, &n);
      cj_code code = (cj_code)e->vtable->get_code(e);
      cj_status st = cj_status_make(code == CJ_OK ? CJ_UNKNOWN : code, "%.*s", (int)n,
                                    m ? m : "");
      if (e->vtable->destroy) e->vtable->destroy(e);
      return st;
    }
    return cj_status_make(CJ_UNKNOWN, "an error not made by cjrt");
  }
  cj_status st = cjp_error_status(e);
  vt_destroy(e);
  return st;
}

cj_status cjp_status_from_code(PJRT_Error_Code code, const char *msg, size_t size,
                               const char *what) {
  if (code == PJRT_Error_Code_OK) return NULL;
  cj_code c = ((unsigned)code <= CJ_UNAUTHENTICATED) ? (cj_code)code : CJ_UNKNOWN;
  if (!msg || !size) return cj_status_make(c, "%s (code %s)", what, cj_code_name(c));
  if (size > (size_t)1 << 30) size = (size_t)1 << 30;
  return cj_status_make(c, "%.*s", (int)size, msg);
}

PJRT_Error *cjp_callback_error(PJRT_Error_Code code, const char *message, size_t message_size) {
  cj_code c = ((unsigned)code <= CJ_UNAUTHENTICATED) ? (cj_code)code : CJ_UNKNOWN;
  /* OK is not an error; a callback asking for one still reports a failure. */
  if (c == CJ_OK) c = CJ_UNKNOWN;
  if (!message) message_size = 0;
  if (message_size > (size_t)1 << 30) message_size = (size_t)1 << 30;
  return cjp_error(cj_status_make(c, "%.*s", (int)message_size, message ? message : ""));
}

/* ---- the slots ---- */

void cjp_PJRT_Error_Destroy(PJRT_Error_Destroy_Args *args) {
  /* Returns nothing, so there is no way to report misuse: do nothing on bad arguments. */
  if (!args || args->struct_size < CJP_ARGS_SIZE(PJRT_Error_Destroy, error)) return;
  PJRT_Error *e = args->error;
  if (!e) return;
  if (is_ours(e))
    vt_destroy(e);
  else if (e->vtable && e->vtable->destroy)
    e->vtable->destroy(e);
}

void cjp_PJRT_Error_Message(PJRT_Error_Message_Args *args) {
  if (!args || args->struct_size < CJP_ARGS_SIZE(PJRT_Error_Message, message_size)) return;
  const PJRT_Error *e = args->error;
  if (e && !is_ours(e) && e->vtable && e->vtable->message) {
    e->vtable->message(e, &args->message, &args->message_size);
    return;
  }
  vt_message(e, &args->message, &args->message_size);
}

PJRT_Error *cjp_PJRT_Error_GetCode(PJRT_Error_GetCode_Args *args) {
  CJP_CHECK_ARGS(PJRT_Error_GetCode, args, code);
  CJP_REQUIRE(PJRT_Error_GetCode, args->error, "error is NULL");
  const PJRT_Error *e = args->error;
  if (!is_ours(e) && e->vtable && e->vtable->get_code)
    args->code = e->vtable->get_code(e);
  else
    args->code = vt_get_code(e);
  return NULL;
}

PJRT_Error *cjp_PJRT_Error_ForEachPayload(PJRT_Error_ForEachPayload_Args *args) {
  /* Never fails (frameworks call it on every error and recurse on failure): with bad
   * arguments it visits nothing, as it does for every cjrt error. */
  (void)args;
  return NULL;
}
