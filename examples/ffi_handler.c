/* XLA FFI handlers written in plain C against include/xla_ffi_c_api.h, built as a shared
 * library (libcjrt_ffi_example.so) and called from JAX on cjrt (python/tests/jax/test_jax_ffi.py):
 *
 *   lib = ctypes.cdll.LoadLibrary(".../libcjrt_ffi_example.so")
 *   jax.ffi.register_ffi_target("scale_sum", jax.ffi.pycapsule(lib.scale_sum), platform="cjrt")
 *   y, s = jax.ffi.ffi_call("scale_sum", (jax.ShapeDtypeStruct(x.shape, x.dtype),
 *                                         jax.ShapeDtypeStruct(x.shape[:-1], x.dtype)))(
 *       x, factor=np.float32(2))
 *
 * scale_sum      y = x * factor and s = y summed over its last axis, for a float32 x of rank >= 1
 *                (so a batch of calls, vmap_method="broadcast_all", is one call)
 * copy_all       copies each argument into the result of the same index (any element type)
 * describe_attrs writes a text description of its attributes into its uint8 result (NUL-padded)
 * fail           returns an error whose message is its attribute `message`
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xla_ffi_c_api.h"

#define EXPORT __attribute__((visibility("default")))

static XLA_FFI_Error *error(const XLA_FFI_CallFrame *f, XLA_FFI_Error_Code code, const char *fmt,
                            ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  XLA_FFI_Error_Create_Args a = {XLA_FFI_Error_Create_Args_STRUCT_SIZE, NULL, msg, code};
  return f->api->XLA_FFI_Error_Create(&a);
}

/* XLA asks a handler for its metadata (API version, traits) by calling it with a Metadata
 * extension in the frame; answer and do nothing else. */
static int answered_metadata(XLA_FFI_CallFrame *f) {
  for (XLA_FFI_InternalExtension *e = f->extension_start; e; e = e->next)
    if (e->type == XLA_FFI_Extension_Metadata) {
      XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)e)->metadata;
      m->api_version.major_version = XLA_FFI_API_MAJOR;
      m->api_version.minor_version = XLA_FFI_API_MINOR;
      m->traits = 0;
      return 1;
    }
  return 0;
}

static const void *find_attr(const XLA_FFI_CallFrame *f, const char *name, XLA_FFI_AttrType *t) {
  for (int64_t i = 0; i < f->attrs.size; i++) {
    const XLA_FFI_ByteSpan *n = f->attrs.names[i];
    if (n->len == strlen(name) && memcmp(n->ptr, name, n->len) == 0) {
      *t = f->attrs.types[i];
      return f->attrs.attrs[i];
    }
  }
  return NULL;
}

static int64_t elements(const XLA_FFI_Buffer *b) {
  int64_t n = 1;
  for (int64_t k = 0; k < b->rank; k++) n *= b->dims[k];
  return n;
}

EXPORT XLA_FFI_Error *scale_sum(XLA_FFI_CallFrame *f) {
  if (answered_metadata(f)) return NULL;
  if (f->args.size != 1 || f->rets.size != 2)
    return error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                 "scale_sum takes 1 argument and returns 2 results, got %lld and %lld",
                 (long long)f->args.size, (long long)f->rets.size);
  const XLA_FFI_Buffer *x = f->args.args[0];
  XLA_FFI_Buffer *y = f->rets.rets[0], *s = f->rets.rets[1];
  if (x->dtype != XLA_FFI_DataType_F32 || y->dtype != XLA_FFI_DataType_F32 ||
      s->dtype != XLA_FFI_DataType_F32 || x->rank < 1 || s->rank != x->rank - 1 ||
      elements(x) != elements(y))
    return error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                 "scale_sum wants a float32 array, its float32 scaled copy and float32 sums over "
                 "its last axis");
  XLA_FFI_AttrType t;
  const XLA_FFI_Scalar *factor = find_attr(f, "factor", &t);
  if (!factor || t != XLA_FFI_AttrType_SCALAR || factor->dtype != XLA_FFI_DataType_F32)
    return error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                 "scale_sum needs a float32 scalar attribute `factor`");
  float k = *(const float *)factor->value;
  const float *xd = x->data;
  float *yd = y->data, *sd = s->data;
  int64_t row = x->dims[x->rank - 1], rows = row ? elements(x) / row : elements(s);
  for (int64_t r = 0; r < rows; r++) {
    double sum = 0;
    for (int64_t i = r * row; i < (r + 1) * row; i++) {
      yd[i] = xd[i] * k;
      sum += yd[i];
    }
    sd[r] = (float)sum;
  }
  return NULL;
}

static int64_t element_bytes(XLA_FFI_DataType t) {
  switch (t) {
    case XLA_FFI_DataType_S64: case XLA_FFI_DataType_U64: case XLA_FFI_DataType_F64:
    case XLA_FFI_DataType_C64: return 8;
    case XLA_FFI_DataType_C128: return 16;
    case XLA_FFI_DataType_S32: case XLA_FFI_DataType_U32: case XLA_FFI_DataType_F32: return 4;
    case XLA_FFI_DataType_S16: case XLA_FFI_DataType_U16: case XLA_FFI_DataType_F16:
    case XLA_FFI_DataType_BF16: return 2;
    case XLA_FFI_DataType_TOKEN: case XLA_FFI_DataType_INVALID: return 0;
    default: return 1; /* bool, 8-bit types, and sub-byte types (one byte each on cjrt) */
  }
}

EXPORT XLA_FFI_Error *copy_all(XLA_FFI_CallFrame *f) {
  if (answered_metadata(f)) return NULL;
  if (f->args.size != f->rets.size)
    return error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT, "copy_all: as many results as arguments");
  for (int64_t i = 0; i < f->args.size; i++) {
    const XLA_FFI_Buffer *a = f->args.args[i];
    XLA_FFI_Buffer *r = f->rets.rets[i];
    if (a->dtype != r->dtype || elements(a) != elements(r))
      return error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                   "copy_all: result %lld differs from its argument", (long long)i);
    size_t n = (size_t)(elements(a) * element_bytes(a->dtype));
    if (n) memcpy(r->data, a->data, n);
  }
  return NULL;
}

typedef struct text {
  char *p;
  size_t cap, len;
} text;

static void put(text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t->p + t->len, t->len < t->cap ? t->cap - t->len : 0, fmt, ap);
  va_end(ap);
  if (n > 0) t->len += (size_t)n;
  if (t->len > t->cap) t->len = t->cap;
}

static void put_value(text *t, XLA_FFI_DataType dt, const void *v) {
  switch (dt) {
    case XLA_FFI_DataType_PRED: put(t, "%s", *(const unsigned char *)v ? "true" : "false"); break;
    case XLA_FFI_DataType_S8: put(t, "%d", *(const signed char *)v); break;
    case XLA_FFI_DataType_S16: put(t, "%d", *(const short *)v); break;
    case XLA_FFI_DataType_S32: put(t, "%d", *(const int *)v); break;
    case XLA_FFI_DataType_S64: put(t, "%lld", *(const long long *)v); break;
    case XLA_FFI_DataType_U8: put(t, "%u", *(const unsigned char *)v); break;
    case XLA_FFI_DataType_U16: put(t, "%u", *(const unsigned short *)v); break;
    case XLA_FFI_DataType_U32: put(t, "%u", *(const unsigned *)v); break;
    case XLA_FFI_DataType_U64: put(t, "%llu", *(const unsigned long long *)v); break;
    case XLA_FFI_DataType_F32: put(t, "%.9g", *(const float *)v); break;
    case XLA_FFI_DataType_F64: put(t, "%.17g", *(const double *)v); break;
    default: put(t, "?"); break;
  }
}

static void describe(text *t, const XLA_FFI_Attrs *attrs) {
  put(t, "{");
  for (int64_t i = 0; i < attrs->size; i++) {
    const XLA_FFI_ByteSpan *n = attrs->names[i];
    put(t, "%s%.*s=", i ? ";" : "", (int)n->len, n->ptr);
    const void *a = attrs->attrs[i];
    switch (attrs->types[i]) {
      case XLA_FFI_AttrType_SCALAR: {
        const XLA_FFI_Scalar *s = a;
        put(t, "scalar:%d:", (int)s->dtype);
        put_value(t, s->dtype, s->value);
        break;
      }
      case XLA_FFI_AttrType_ARRAY: {
        const XLA_FFI_Array *arr = a;
        put(t, "array:%d:[", (int)arr->dtype);
        for (size_t k = 0; k < arr->size; k++) {
          if (k) put(t, ",");
          put_value(t, arr->dtype, (const char *)arr->data + k * element_bytes(arr->dtype));
        }
        put(t, "]");
        break;
      }
      case XLA_FFI_AttrType_STRING: {
        const XLA_FFI_ByteSpan *s = a;
        put(t, "string:%.*s", (int)s->len, s->ptr);
        break;
      }
      case XLA_FFI_AttrType_DICTIONARY:
        put(t, "dict:");
        describe(t, a);
        break;
    }
  }
  put(t, "}");
}

EXPORT XLA_FFI_Error *describe_attrs(XLA_FFI_CallFrame *f) {
  if (answered_metadata(f)) return NULL;
  if (f->rets.size != 1 || ((XLA_FFI_Buffer *)f->rets.rets[0])->dtype != XLA_FFI_DataType_U8)
    return error(f, XLA_FFI_Error_Code_INVALID_ARGUMENT, "describe_attrs returns one uint8 array");
  XLA_FFI_Buffer *r = f->rets.rets[0];
  text t = {r->data, (size_t)elements(r), 0};
  memset(t.p, 0, t.cap);
  describe(&t, &f->attrs);
  return NULL;
}

EXPORT XLA_FFI_Error *fail(XLA_FFI_CallFrame *f) {
  if (answered_metadata(f)) return NULL;
  XLA_FFI_AttrType t;
  const XLA_FFI_ByteSpan *m = find_attr(f, "message", &t);
  if (!m || t != XLA_FFI_AttrType_STRING) return error(f, XLA_FFI_Error_Code_INTERNAL, "fail");
  return error(f, XLA_FFI_Error_Code_FAILED_PRECONDITION, "%.*s", (int)m->len, m->ptr);
}
