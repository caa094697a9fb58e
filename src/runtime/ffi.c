/* cjrt: XLA FFI registries, the XLA_FFI_Api table and call-frame pieces (see ffi.h). */
#include "runtime/ffi.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/dtype.h"

/* ------------------------------------------------------------------------- registries */

typedef struct handler_entry {
  struct handler_entry *next;
  char *target, *platform;
  size_t target_len, platform_len;
  XLA_FFI_Handler_Bundle bundle;
  uint32_t traits;
} handler_entry;

typedef struct type_entry {
  struct type_entry *next;
  char *name;
  size_t len;
  int64_t id;
  void (*deleter)(void *);
} type_entry;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static handler_entry *handlers; /* process lifetime, never freed (as XLA's static registry) */
static type_entry *types;

static char *dup_span(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (!p) return NULL;
  if (n) memcpy(p, s, n);
  p[n] = 0;
  return p;
}

static bool span_eq(const char *a, size_t an, const char *b, size_t bn) {
  return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static bool span_ieq(const char *a, size_t an, const char *b) {
  size_t bn = strlen(b);
  return an == bn && strncasecmp(a, b, an) == 0;
}

bool cj_ffi_platform_is_ours(const char *platform, size_t len) {
  return span_ieq(platform, len, "cjrt") || span_ieq(platform, len, "host") ||
         span_ieq(platform, len, "cpu");
}

cj_status cj_ffi_register_handler(const char *target, size_t target_len, const char *platform,
                                  size_t platform_len, const XLA_FFI_Handler_Bundle *bundle,
                                  uint32_t traits) {
  if (!target || target_len == 0) return cj_status_make(CJ_INVALID_ARGUMENT, "FFI handler registration without a target name");
  if (!platform && platform_len) return cj_status_make(CJ_INVALID_ARGUMENT, "FFI handler registration: platform name is NULL");
  if (!bundle || !bundle->execute)
    return cj_status_make(CJ_INVALID_ARGUMENT, "FFI handler for %.*s: no execute handler",
                          (int)target_len, target);
  cj_status st = NULL;
  pthread_mutex_lock(&reg_mu);
  for (handler_entry *e = handlers; e; e = e->next) {
    if (!span_eq(e->target, e->target_len, target, target_len) ||
        !span_ieq(platform, platform_len, e->platform))
      continue;
    if (memcmp(&e->bundle, bundle, sizeof *bundle) != 0)
      st = cj_status_make(CJ_ALREADY_EXISTS,
                          "FFI handler for custom call target %.*s on platform %.*s is already "
                          "registered (with another handler)",
                          (int)target_len, target, (int)platform_len, platform);
    pthread_mutex_unlock(&reg_mu);
    return st;
  }
  handler_entry *e = calloc(1, sizeof *e);
  if (e) {
    e->target = dup_span(target, target_len);
    e->platform = dup_span(platform, platform_len);
  }
  if (!e || !e->target || !e->platform) {
    if (e) {
      free(e->target);
      free(e->platform);
    }
    free(e);
    pthread_mutex_unlock(&reg_mu);
    return cj_oom();
  }
  e->target_len = target_len;
  e->platform_len = platform_len;
  e->bundle = *bundle;
  e->traits = traits;
  e->next = handlers;
  handlers = e;
  pthread_mutex_unlock(&reg_mu);
  return NULL;
}

bool cj_ffi_find_handler(const char *target, size_t len, XLA_FFI_Handler_Bundle *out) {
  static const char *const order[] = {"cjrt", "host", "cpu"};
  bool found = false;
  pthread_mutex_lock(&reg_mu);
  for (int k = 0; k < 3 && !found; k++)
    for (handler_entry *e = handlers; e && !found; e = e->next)
      if (span_eq(e->target, e->target_len, target, len) &&
          span_ieq(e->platform, e->platform_len, order[k])) {
        *out = e->bundle;
        found = true;
      }
  pthread_mutex_unlock(&reg_mu);
  return found;
}

cj_status cj_ffi_register_type(const char *name, size_t len, int64_t *inout_id,
                               void (*deleter)(void *)) {
  if (!name || len == 0) return cj_status_make(CJ_INVALID_ARGUMENT, "FFI type registration without a name");
  cj_status st = NULL;
  int64_t want = *inout_id, max_id = 0;
  pthread_mutex_lock(&reg_mu);
  for (type_entry *t = types; t; t = t->next) {
    if (t->id > max_id) max_id = t->id;
    if (span_eq(t->name, t->len, name, len)) {
      if (want != 0 && want != t->id)
        st = cj_status_make(CJ_INVALID_ARGUMENT,
                            "FFI type %.*s has type id %lld, not %lld", (int)len, name,
                            (long long)t->id, (long long)want);
      else
        *inout_id = t->id;
      pthread_mutex_unlock(&reg_mu);
      return st;
    }
    if (want != 0 && t->id == want) {
      pthread_mutex_unlock(&reg_mu);
      return cj_status_make(CJ_ALREADY_EXISTS, "FFI type id %lld is taken by type %s",
                            (long long)want, t->name);
    }
  }
  type_entry *t = calloc(1, sizeof *t);
  if (t) t->name = dup_span(name, len);
  if (!t || !t->name) {
    free(t);
    pthread_mutex_unlock(&reg_mu);
    return cj_oom();
  }
  t->len = len;
  t->id = want != 0 ? want : max_id + 1;
  t->deleter = deleter;
  t->next = types;
  types = t;
  *inout_id = t->id;
  pthread_mutex_unlock(&reg_mu);
  return NULL;
}

void (*cj_ffi_type_deleter(int64_t type_id))(void *) {
  void (*d)(void *) = NULL;
  pthread_mutex_lock(&reg_mu);
  for (type_entry *t = types; t; t = t->next)
    if (t->id == type_id) d = t->deleter;
  pthread_mutex_unlock(&reg_mu);
  return d;
}

void cj_ffi_state_free(cj_ffi_state *s) {
  if (!s) return;
  void *p = atomic_exchange(&s->ptr, NULL);
  if (!p) return;
  void (*d)(void *) = cj_ffi_type_deleter(s->type_id);
  if (d) d(p);
}

/* ------------------------------------------------------------------------- errors */

struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  char *message;
};

static XLA_FFI_Error *err_make(XLA_FFI_Error_Code code, const char *fmt, ...) CJ_PRINTF(2, 3);
/* An error that cannot be allocated is this static one (never freed). */
static char oom_message[] = "out of memory";
static XLA_FFI_Error oom = {XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, oom_message};

static XLA_FFI_Error *err_make(XLA_FFI_Error_Code code, const char *fmt, ...) {
  XLA_FFI_Error *e = malloc(sizeof *e);
  if (!e) return &oom;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  e->message = malloc(n > 0 ? (size_t)n + 1 : 1);
  if (!e->message) {
    free(e);
    return &oom;
  }
  va_start(ap, fmt);
  vsnprintf(e->message, (size_t)n + 1, fmt, ap);
  va_end(ap);
  e->code = code;
  return e;
}

static void err_free(XLA_FFI_Error *e) {
  if (!e || e == &oom) return;
  free(e->message);
  free(e);
}

static XLA_FFI_Error *err_from(cj_status st) {
  if (!st) return NULL;
  XLA_FFI_Error *e = err_make((XLA_FFI_Error_Code)cj_status_code(st), "%s", cj_status_message(st));
  cj_status_free(st);
  return e;
}

#define ARGS_OK(name, a, last)                                                                \
  do {                                                                                        \
    if (!(a)) return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT, #name ": args is NULL");   \
    if ((a)->struct_size < offsetof(name##_Args, last) + sizeof((a)->last))                   \
      return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT,                                    \
                      #name ": struct_size %zu is too small (at least %zu)", (a)->struct_size, \
                      offsetof(name##_Args, last) + sizeof((a)->last));                       \
  } while (0)

static XLA_FFI_Error *api_error_create(XLA_FFI_Error_Create_Args *a) {
  ARGS_OK(XLA_FFI_Error_Create, a, errc);
  return err_make(a->errc == XLA_FFI_Error_Code_OK ? XLA_FFI_Error_Code_UNKNOWN : a->errc, "%s",
                  a->message ? a->message : "(no message)");
}

static void api_error_details(XLA_FFI_Error_GetDetails_Args *a) {
  if (!a || !a->error || a->struct_size < offsetof(XLA_FFI_Error_GetDetails_Args, errc)) return;
  a->message = a->error->message;
  if (a->struct_size >= XLA_FFI_Error_GetDetails_Args_STRUCT_SIZE) a->errc = a->error->code;
}

static void api_error_destroy(XLA_FFI_Error_Destroy_Args *a) {
  if (a && a->struct_size >= XLA_FFI_Error_Destroy_Args_STRUCT_SIZE) err_free(a->error);
}

/* ------------------------------------------------------------------------- registration */

static XLA_FFI_Error *api_handler_register(XLA_FFI_Handler_Register_Args *a) {
  /* bundle.record (API 0.4) and traits come after the older bundle's end */
  size_t old_end = offsetof(XLA_FFI_Handler_Register_Args, bundle) +
                   offsetof(XLA_FFI_Handler_Bundle, record);
  if (!a) return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_Handler_Register: args is NULL");
  if (a->struct_size < old_end)
    return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    "XLA_FFI_Handler_Register: struct_size %zu is too small", a->struct_size);
  XLA_FFI_Handler_Bundle b = {0};
  memcpy(&b, &a->bundle, offsetof(XLA_FFI_Handler_Bundle, record));
  uint32_t traits = 0;
  if (a->struct_size >= XLA_FFI_Handler_Register_Args_STRUCT_SIZE) {
    b.record = a->bundle.record;
    traits = a->traits;
  }
  return err_from(cj_ffi_register_handler(a->name.ptr, a->name.len, a->platform.ptr,
                                          a->platform.len, &b, traits));
}

static XLA_FFI_Error *api_type_register(XLA_FFI_Type_Register_Args *a) {
  ARGS_OK(XLA_FFI_Type_Register, a, type_id);
  if (!a->type_id) return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_Type_Register: type_id is NULL");
  void (*deleter)(void *) = NULL;
  if (a->struct_size >= offsetof(XLA_FFI_Type_Register_Args, type_info) + sizeof(void *) &&
      a->type_info && a->type_info->struct_size >= XLA_FFI_TypeInfo_STRUCT_SIZE)
    deleter = a->type_info->deleter;
  return err_from(cj_ffi_register_type(a->name.ptr, a->name.len, &a->type_id->type_id, deleter));
}

/* ------------------------------------------------------------------------- invocation */

#define CTX(a) ((cj_ffi_invoke_ctx *)(a)->ctx)

static XLA_FFI_Error *api_stream_get(XLA_FFI_Stream_Get_Args *a) {
  ARGS_OK(XLA_FFI_Stream_Get, a, stream);
  return err_make(XLA_FFI_Error_Code_UNIMPLEMENTED,
                  "XLA_FFI_Stream_Get: cjrt's CPU devices have no stream");
}

static XLA_FFI_Error *api_context_get(XLA_FFI_InvokeContext_Get_Args *a) {
  ARGS_OK(XLA_FFI_InvokeContext_Get, a, data);
  if (!a->ctx || !a->type_id)
    return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_InvokeContext_Get: no context or type id");
  const cj_ffi_user_data_list *l = CTX(a)->user_data;
  for (int32_t i = 0; l && i < l->n; i++)
    if (l->items[i].type_id == a->type_id->type_id) {
      a->data = l->items[i].data;
      return NULL;
    }
  return err_make(XLA_FFI_Error_Code_NOT_FOUND,
                  "this execution carries no user data of type id %lld (PJRT_FFI_UserData_Add)",
                  (long long)a->type_id->type_id);
}

static XLA_FFI_Error *api_state_set(XLA_FFI_State_Set_Args *a) {
  ARGS_OK(XLA_FFI_State_Set, a, state);
  cj_ffi_state *s = a->ctx ? CTX(a)->state : NULL;
  if (!s || !a->type_id)
    return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_State_Set: no state slot here");
  void *expected = NULL;
  s->type_id = a->type_id->type_id;
  if (!atomic_compare_exchange_strong(&s->ptr, &expected, a->state))
    return err_make(XLA_FFI_Error_Code_ALREADY_EXISTS, "XLA_FFI_State_Set: state is already set");
  return NULL;
}

static XLA_FFI_Error *api_state_get(XLA_FFI_State_Get_Args *a) {
  ARGS_OK(XLA_FFI_State_Get, a, state);
  cj_ffi_state *s = a->ctx ? CTX(a)->state : NULL;
  void *p = s ? atomic_load(&s->ptr) : NULL;
  if (!p) return err_make(XLA_FFI_Error_Code_NOT_FOUND, "XLA_FFI_State_Get: state is not set");
  if (!a->type_id || a->type_id->type_id != s->type_id)
    return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    "XLA_FFI_State_Get: state has type id %lld, not the one asked for",
                    (long long)s->type_id);
  a->state = p;
  return NULL;
}

static XLA_FFI_Error *api_mem_alloc(XLA_FFI_DeviceMemory_Allocate_Args *a) {
  ARGS_OK(XLA_FFI_DeviceMemory_Allocate, a, data);
  size_t al = a->alignment < 64 ? 64 : a->alignment;
  if (al & (al - 1))
    return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                    "XLA_FFI_DeviceMemory_Allocate: alignment %zu is not a power of two", al);
  size_t n = (a->size + al - 1) / al * al;
  a->data = aligned_alloc(al, n ? n : al);
  if (!a->data)
    return err_make(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED,
                    "XLA_FFI_DeviceMemory_Allocate: out of memory (%zu bytes)", a->size);
  return NULL;
}

static XLA_FFI_Error *api_mem_free(XLA_FFI_DeviceMemory_Free_Args *a) {
  ARGS_OK(XLA_FFI_DeviceMemory_Free, a, data);
  free(a->data);
  return NULL;
}

static XLA_FFI_Error *api_pool_schedule(XLA_FFI_ThreadPool_Schedule_Args *a) {
  ARGS_OK(XLA_FFI_ThreadPool_Schedule, a, data);
  if (!a->task) return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_ThreadPool_Schedule: task is NULL");
  cj_threadpool *p = a->ctx ? CTX(a)->pool : NULL;
  if (p && cj_pool_size(p) > 1) return err_from(cj_pool_submit(p, a->task, a->data));
  a->task(a->data);
  return NULL;
}

static XLA_FFI_Error *api_pool_threads(XLA_FFI_ThreadPool_NumThreads_Args *a) {
  ARGS_OK(XLA_FFI_ThreadPool_NumThreads, a, num_threads);
  if (!a->num_threads) return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_ThreadPool_NumThreads: num_threads is NULL");
  cj_threadpool *p = a->ctx ? CTX(a)->pool : NULL;
  *a->num_threads = p ? cj_pool_size(p) : 1;
  return NULL;
}

struct XLA_FFI_Future {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
  XLA_FFI_Error *error;
};

static XLA_FFI_Error *api_future_create(XLA_FFI_Future_Create_Args *a) {
  ARGS_OK(XLA_FFI_Future_Create, a, extension_start);
  XLA_FFI_Future *f = calloc(1, sizeof *f);
  if (!f) return err_make(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "XLA_FFI_Future_Create: out of memory");
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->cv, NULL);
  a->future = f;
  return NULL;
}

static XLA_FFI_Error *future_finish(XLA_FFI_Future *f, XLA_FFI_Error *e) {
  if (!f) {
    err_free(e);
    return err_make(XLA_FFI_Error_Code_INVALID_ARGUMENT, "XLA_FFI_Future: future is NULL");
  }
  pthread_mutex_lock(&f->mu);
  bool again = f->done;
  if (!again) {
    f->done = true;
    f->error = e;
    pthread_cond_broadcast(&f->cv);
  }
  pthread_mutex_unlock(&f->mu);
  if (again) {
    err_free(e);
    return err_make(XLA_FFI_Error_Code_FAILED_PRECONDITION, "XLA_FFI_Future: already completed");
  }
  return NULL;
}

static XLA_FFI_Error *api_future_available(XLA_FFI_Future_SetAvailable_Args *a) {
  ARGS_OK(XLA_FFI_Future_SetAvailable, a, future);
  return future_finish(a->future, NULL);
}

static XLA_FFI_Error *api_future_error(XLA_FFI_Future_SetError_Args *a) {
  ARGS_OK(XLA_FFI_Future_SetError, a, error);
  return future_finish(a->future, a->error ? a->error
                                           : err_make(XLA_FFI_Error_Code_UNKNOWN, "(no error)"));
}

static XLA_FFI_Error *api_run_id(XLA_FFI_RunId_Get_Args *a) {
  ARGS_OK(XLA_FFI_RunId_Get, a, run_id);
  a->run_id = a->ctx ? CTX(a)->run_id : 0;
  return NULL;
}

static XLA_FFI_Error *api_device_ordinal(XLA_FFI_DeviceOrdinal_Get_Args *a) {
  ARGS_OK(XLA_FFI_DeviceOrdinal_Get, a, device_ordinal);
  a->device_ordinal = a->ctx ? CTX(a)->device_ordinal : 0;
  return NULL;
}

static XLA_FFI_Error *api_find_extension(XLA_FFI_InvokeContext_FindExtension_Args *a) {
  ARGS_OK(XLA_FFI_InvokeContext_FindExtension, a, extension);
  a->extension = NULL;
  return err_make(XLA_FFI_Error_Code_NOT_FOUND,
                  "XLA_FFI_InvokeContext_FindExtension: cjrt attaches no extension %lld",
                  (long long)a->extension_type);
}

static XLA_FFI_Error *api_custom_options(XLA_FFI_CustomOptions_Get_Args *a) {
  static const XLA_FFI_Attrs none = {XLA_FFI_Attrs_STRUCT_SIZE, NULL, 0, NULL, NULL, NULL};
  ARGS_OK(XLA_FFI_CustomOptions_Get, a, attrs);
  a->attrs = &none;
  return NULL;
}

static const XLA_FFI_Api api = {
    .struct_size = XLA_FFI_Api_STRUCT_SIZE,
    .extension_start = NULL,
    .api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, NULL, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR},
    .internal_api = NULL,
    .XLA_FFI_Error_Create = api_error_create,
    .XLA_FFI_Error_GetDetails = api_error_details,
    .XLA_FFI_Error_Destroy = api_error_destroy,
    .XLA_FFI_Handler_Register = api_handler_register,
    .XLA_FFI_Stream_Get = api_stream_get,
    .XLA_FFI_Type_Register = api_type_register,
    .XLA_FFI_InvokeContext_Get = api_context_get,
    .XLA_FFI_State_Set = api_state_set,
    .XLA_FFI_State_Get = api_state_get,
    .XLA_FFI_DeviceMemory_Allocate = api_mem_alloc,
    .XLA_FFI_DeviceMemory_Free = api_mem_free,
    .XLA_FFI_ThreadPool_Schedule = api_pool_schedule,
    .XLA_FFI_ThreadPool_NumThreads = api_pool_threads,
    .XLA_FFI_Future_Create = api_future_create,
    .XLA_FFI_Future_SetAvailable = api_future_available,
    .XLA_FFI_Future_SetError = api_future_error,
    .XLA_FFI_RunId_Get = api_run_id,
    .XLA_FFI_DeviceOrdinal_Get = api_device_ordinal,
    .XLA_FFI_InvokeContext_FindExtension = api_find_extension,
    .XLA_FFI_CustomOptions_Get = api_custom_options,
};

const XLA_FFI_Api *cj_ffi_api(void) { return &api; }

static CJ_MUST_USE cj_status status_of(XLA_FFI_Error *e, const char *what) {
  cj_code code = e->code == XLA_FFI_Error_Code_OK ? CJ_UNKNOWN : (cj_code)e->code;
  if (code > CJ_UNAUTHENTICATED) code = CJ_UNKNOWN;
  cj_status st = cj_status_make(code, "%s: the FFI handler failed: %s", what, e->message);
  err_free(e);
  return st;
}

cj_status cj_ffi_call(XLA_FFI_Handler *handler, XLA_FFI_CallFrame *frame, cj_ffi_invoke_ctx *ctx,
                      const char *what) {
  frame->api = &api;
  frame->ctx = (XLA_FFI_InvokeContext *)ctx;
  frame->future = NULL;
  XLA_FFI_Error *e = handler(frame);
  XLA_FFI_Future *f = frame->future;
  if (f) {
    pthread_mutex_lock(&f->mu);
    while (!f->done) pthread_cond_wait(&f->cv, &f->mu);
    XLA_FFI_Error *fe = f->error;
    pthread_mutex_unlock(&f->mu);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
    if (!e) e = fe;
    else err_free(fe);
  }
  return e ? status_of(e, what) : NULL;
}

/* ------------------------------------------------------------------------- attributes */

XLA_FFI_DataType cj_ffi_dtype(cj_dtype dt) {
  const cj_dtype_info *in = cj_dtype_get(dt);
  return in ? (XLA_FFI_DataType)in->xla : XLA_FFI_DataType_INVALID;
}

typedef struct attr_builder {
  cj_ffi_alloc_fn alloc;
  void *actx;
} attr_builder;

static void *ab_alloc(attr_builder *b, size_t n) { return b->alloc(b->actx, n ? n : 1); }

static CJ_MUST_USE cj_status bad_attr(const char *name, const char *why) {
  return cj_status_make(CJ_INVALID_ARGUMENT, "FFI attribute %s: %s", name, why);
}

static CJ_MUST_USE cj_status build_dict(attr_builder *b, const cj_attr *dict, XLA_FFI_Attrs *out,
                            const char *path);

/* An attribute's FFI form: its kind and the pointer the frame holds. */
static CJ_MUST_USE cj_status build_one(attr_builder *b, const char *name, const cj_attr *a,
                           XLA_FFI_AttrType *type, void **out) {
  switch (a->kind) {
    case CJ_ATTR_BOOL:
    case CJ_ATTR_INT:
    case CJ_ATTR_FLOAT: {
      cj_dtype dt = a->kind == CJ_ATTR_BOOL ? CJ_PRED
                    : a->kind == CJ_ATTR_INT ? (a->i.type ? a->i.type->dtype : CJ_S64)
                                             : (a->f.type ? a->f.type->dtype : CJ_F64);
      XLA_FFI_DataType xt = cj_ffi_dtype(dt);
      int nb = cj_dtype_bytes(dt);
      if (xt == XLA_FFI_DataType_INVALID || nb <= 0 || nb > 8)
        return bad_attr(name, "a scalar of this element type has no FFI form");
      XLA_FFI_Scalar *s = ab_alloc(b, sizeof *s);
      void *v = ab_alloc(b, 8);
      if (!s || !v) return cj_oom();
      if (a->kind == CJ_ATTR_BOOL) *(uint8_t *)v = a->b;
      else if (a->kind == CJ_ATTR_INT) cj_elem_set_i64(dt, v, 0, a->i.v);
      else cj_elem_set_f64(dt, v, 0, a->f.v);
      s->dtype = xt;
      s->value = v;
      *type = XLA_FFI_AttrType_SCALAR;
      *out = s;
      return NULL;
    }
    case CJ_ATTR_STRING: {
      XLA_FFI_ByteSpan *sp = ab_alloc(b, sizeof *sp);
      char *copy = ab_alloc(b, a->str.len + 1); /* the IR dies with the module */
      if (!sp || !copy) return cj_oom();
      if (a->str.len) memcpy(copy, a->str.s, a->str.len);
      sp->ptr = copy;
      sp->len = a->str.len;
      *type = XLA_FFI_AttrType_STRING;
      *out = sp;
      return NULL;
    }
    case CJ_ATTR_DENSE_ARRAY:
    case CJ_ATTR_DENSE: {
      cj_dtype dt;
      int64_t n;
      const void *src;
      bool splat = false;
      if (a->kind == CJ_ATTR_DENSE_ARRAY) {
        dt = a->darr.dtype;
        n = a->darr.n;
        src = a->darr.data;
      } else {
        const cj_type *t = a->dense.type;
        if (!t || t->kind != CJ_TYPE_TENSOR || t->rank > 1 || t->num_elements < 0)
          return bad_attr(name, "only 1-D dense elements attributes have an FFI form");
        dt = t->dtype;
        n = t->num_elements;
        src = a->dense.data;
        splat = a->dense.splat;
      }
      XLA_FFI_DataType xt = cj_ffi_dtype(dt);
      int nb = cj_dtype_bytes(dt);
      if (xt == XLA_FFI_DataType_INVALID || nb <= 0)
        return bad_attr(name, "an array of this element type has no FFI form");
      XLA_FFI_Array *arr = ab_alloc(b, sizeof *arr);
      char *data = ab_alloc(b, (size_t)n * (size_t)nb);
      if (!arr || !data) return cj_oom();
      for (int64_t i = 0; i < n; i++)
        memcpy(data + i * nb, (const char *)src + (splat ? 0 : i * nb), (size_t)nb);
      arr->dtype = xt;
      arr->size = (size_t)n;
      arr->data = data;
      *type = XLA_FFI_AttrType_ARRAY;
      *out = arr;
      return NULL;
    }
    case CJ_ATTR_DICT: {
      XLA_FFI_Attrs *d = ab_alloc(b, sizeof *d);
      if (!d) return cj_oom();
      CJ_RETURN_IF_ERROR(build_dict(b, a, d, name));
      *type = XLA_FFI_AttrType_DICTIONARY;
      *out = d;
      return NULL;
    }
    default:
      return bad_attr(name, "attributes of this kind (not a number, string, array or "
                            "dictionary) have no FFI form");
  }
}

static CJ_MUST_USE cj_status build_dict(attr_builder *b, const cj_attr *dict, XLA_FFI_Attrs *out,
                            const char *path) {
  memset(out, 0, sizeof *out);
  out->struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  int32_t n = dict ? dict->dict.n : 0;
  out->size = n;
  if (n == 0) return NULL;
  out->types = ab_alloc(b, (size_t)n * sizeof *out->types);
  out->names = ab_alloc(b, (size_t)n * sizeof *out->names);
  out->attrs = ab_alloc(b, (size_t)n * sizeof *out->attrs);
  if (!out->types || !out->names || !out->attrs) return cj_oom();
  for (int32_t i = 0; i < n; i++) {
    const cj_named_attr *na = &dict->dict.items[i];
    char full[256];
    snprintf(full, sizeof full, "%s%s%s", path ? path : "", path ? "." : "", na->name);
    XLA_FFI_ByteSpan *nm = ab_alloc(b, sizeof *nm);
    size_t nl = strlen(na->name);
    char *copy = ab_alloc(b, nl + 1);
    if (!nm || !copy) return cj_oom();
    memcpy(copy, na->name, nl);
    nm->ptr = copy;
    nm->len = nl;
    out->names[i] = nm;
    CJ_RETURN_IF_ERROR(build_one(b, full, na->value, &out->types[i], &out->attrs[i]));
  }
  /* FFI handlers binary-search by name: the IR dictionary is sorted by name already (strcmp,
   * the same bytewise order); check rather than trust. */
  for (int32_t i = 1; i < n; i++)
    if (strcmp(dict->dict.items[i - 1].name, dict->dict.items[i].name) >= 0)
      return bad_attr(dict->dict.items[i].name, "the dictionary is not sorted by name");
  return NULL;
}

cj_status cj_ffi_attrs_build(const cj_attr *dict, cj_ffi_alloc_fn alloc, void *actx,
                             XLA_FFI_Attrs *out) {
  if (dict && dict->kind != CJ_ATTR_DICT)
    return cj_status_make(CJ_INVALID_ARGUMENT, "FFI attributes must be a dictionary");
  attr_builder b = {alloc, actx};
  return build_dict(&b, dict, out, NULL);
}
