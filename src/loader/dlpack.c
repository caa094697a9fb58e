/* libcjrt: DLPack export and import of buffers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "loader/loader.h"

_Static_assert(sizeof(cjrt_dl_tensor) == 48, "DLTensor is 48 bytes on LP64");
_Static_assert(sizeof(cjrt_dl_managed_tensor) == 64, "DLManagedTensor is 64 bytes on LP64");
_Static_assert(offsetof(cjrt_dl_managed_tensor_versioned, dl_tensor) == 32,
               "DLManagedTensorVersioned.dl_tensor is at 32");
_Static_assert(offsetof(cjrt_dl_tensor, byte_offset) == 40, "DLTensor.byte_offset is at 40");

static bool subbyte(cjrt_dtype dt) {
  switch (dt) {
    case CJRT_S4: case CJRT_U4: case CJRT_S2: case CJRT_U2: case CJRT_S1: case CJRT_U1:
    case CJRT_F4E2M1FN: case CJRT_F6E2M3FN: case CJRT_F6E3M2FN:
      return true;
    default: return false;
  }
}

/* The DLPack type of each element type DLPack has, one row a type; the float8/6/4 codes exist
 * from DLPack 1.1 on (v1_1). */
static const struct dl_row {
  cjrt_dtype dt;
  uint8_t code, bits;
  bool v1_1;
} kDlTypes[] = {
    {CJRT_PRED, CJRT_DL_BOOL, 8, false},
    {CJRT_S8, CJRT_DL_INT, 8, false},
    {CJRT_S16, CJRT_DL_INT, 16, false},
    {CJRT_S32, CJRT_DL_INT, 32, false},
    {CJRT_S64, CJRT_DL_INT, 64, false},
    {CJRT_S4, CJRT_DL_INT, 4, false},
    {CJRT_S2, CJRT_DL_INT, 2, false},
    {CJRT_S1, CJRT_DL_INT, 1, false},
    {CJRT_U8, CJRT_DL_UINT, 8, false},
    {CJRT_U16, CJRT_DL_UINT, 16, false},
    {CJRT_U32, CJRT_DL_UINT, 32, false},
    {CJRT_U64, CJRT_DL_UINT, 64, false},
    {CJRT_U4, CJRT_DL_UINT, 4, false},
    {CJRT_U2, CJRT_DL_UINT, 2, false},
    {CJRT_U1, CJRT_DL_UINT, 1, false},
    {CJRT_F16, CJRT_DL_FLOAT, 16, false},
    {CJRT_F32, CJRT_DL_FLOAT, 32, false},
    {CJRT_F64, CJRT_DL_FLOAT, 64, false},
    {CJRT_BF16, CJRT_DL_BFLOAT, 16, false},
    {CJRT_C64, CJRT_DL_COMPLEX, 64, false},
    {CJRT_C128, CJRT_DL_COMPLEX, 128, false},
    {CJRT_F8E3M4, CJRT_DL_FLOAT8_E3M4, 8, true},
    {CJRT_F8E4M3, CJRT_DL_FLOAT8_E4M3, 8, true},
    {CJRT_F8E4M3B11FNUZ, CJRT_DL_FLOAT8_E4M3B11FNUZ, 8, true},
    {CJRT_F8E4M3FN, CJRT_DL_FLOAT8_E4M3FN, 8, true},
    {CJRT_F8E4M3FNUZ, CJRT_DL_FLOAT8_E4M3FNUZ, 8, true},
    {CJRT_F8E5M2, CJRT_DL_FLOAT8_E5M2, 8, true},
    {CJRT_F8E5M2FNUZ, CJRT_DL_FLOAT8_E5M2FNUZ, 8, true},
    {CJRT_F8E8M0FNU, CJRT_DL_FLOAT8_E8M0FNU, 8, true},
    {CJRT_F6E2M3FN, CJRT_DL_FLOAT6_E2M3FN, 6, true},
    {CJRT_F6E3M2FN, CJRT_DL_FLOAT6_E3M2FN, 6, true},
    {CJRT_F4E2M1FN, CJRT_DL_FLOAT4_E2M1FN, 4, true},
};

CJRT_API cjrt_error *cjrt_dtype_to_dlpack(cjrt_dtype dt, int minor, cjrt_dl_dtype *out,
                                          uint64_t *out_flags) {
  *out = (cjrt_dl_dtype){0, 0, 1};
  *out_flags = 0;
  const struct dl_row *row = NULL;
  for (size_t i = 0; i < sizeof kDlTypes / sizeof *kDlTypes && !row; i++)
    if (kDlTypes[i].dt == dt) row = &kDlTypes[i];
  if (!row)
    return cjrt__error(CJRT_INVALID_ARGUMENT, "DLPack has no type for %s", cjrt_dtype_name(dt));
  int code = row->code, bits = row->bits;
  bool needs_1_1 = row->v1_1;
  if (subbyte(dt)) {
    /* stored one element per byte: only a versioned 1.1 tensor can say so */
    if (minor < 1)
      return cjrt__error(CJRT_INVALID_ARGUMENT,
                         "DLPack cannot carry %s here: its elements take one byte each, which only "
                         "a DLPack 1.1 consumer understands (flag IS_SUBBYTE_TYPE_PADDED); "
                         "this consumer asked for %s",
                         cjrt_dtype_name(dt), minor < 0 ? "a legacy (unversioned) tensor" : "DLPack 1.0");
    *out_flags = CJRT_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED;
  } else if (needs_1_1 && minor < 1) {
    return cjrt__error(CJRT_INVALID_ARGUMENT,
                       "DLPack cannot carry %s here: float8 type codes exist from DLPack 1.1 on; "
                       "this consumer asked for %s",
                       cjrt_dtype_name(dt), minor < 0 ? "a legacy (unversioned) tensor" : "DLPack 1.0");
  }
  out->code = (uint8_t)code;
  out->bits = (uint8_t)bits;
  out->lanes = 1;
  return NULL;
}

CJRT_API cjrt_error *cjrt_dtype_from_dlpack(cjrt_dl_dtype t, uint64_t flags, cjrt_dtype *out) {
  *out = CJRT_INVALID;
  if (t.lanes != 1)
    return cjrt__error(CJRT_UNIMPLEMENTED, "DLPack vector types (lanes = %u) are not supported", t.lanes);
  bool padded = flags & CJRT_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED;
  cjrt_dtype dt = CJRT_INVALID;
  for (size_t i = 0; i < sizeof kDlTypes / sizeof *kDlTypes; i++)
    if (kDlTypes[i].code == t.code && kDlTypes[i].bits == t.bits) dt = kDlTypes[i].dt;
  if (dt == CJRT_INVALID)
    return cjrt__error(CJRT_UNIMPLEMENTED, "DLPack type (code %u, %u bits) has no PJRT element type",
                       t.code, t.bits);
  if (subbyte(dt) && !padded)
    return cjrt__error(CJRT_UNIMPLEMENTED,
                       "DLPack %s data packed several elements per byte is not supported (PJRT "
                       "host data takes one byte per element)",
                       cjrt_dtype_name(dt));
  *out = dt;
  return NULL;
}

/* ---- export ---- */

typedef struct {
  union {
    cjrt_dl_managed_tensor legacy;
    cjrt_dl_managed_tensor_versioned versioned;
  } t;
  cjrt_buffer *buffer;
  int64_t shape[]; /* rank entries */
} export_ctx;

static void release_export(export_ctx *x) {
  cjrt_buffer *b = x->buffer;
  PJRT_Buffer_DecreaseExternalReferenceCount_Args d = {
      .struct_size = PJRT_Buffer_DecreaseExternalReferenceCount_Args_STRUCT_SIZE, .buffer = b->raw};
  cjrt_error_free(CJRT_PJRT(b->client->lib, PJRT_Buffer_DecreaseExternalReferenceCount, &d));
  cjrt_buffer_free(b);
  free(x);
}
static void legacy_deleter(cjrt_dl_managed_tensor *self) {
  if (self) release_export((export_ctx *)self->manager_ctx);
}
static void versioned_deleter(cjrt_dl_managed_tensor_versioned *self) {
  if (self) release_export((export_ctx *)self->manager_ctx);
}

CJRT_API cjrt_error *cjrt_buffer_to_dlpack(cjrt_buffer *b, bool versioned, uint32_t max_minor,
                                           void **out) {
  *out = NULL;
  if (!b) return cjrt__error(CJRT_INVALID_ARGUMENT, "DLPack export: buffer is NULL");
  int minor = versioned ? (max_minor >= CJRT_DLPACK_MINOR ? CJRT_DLPACK_MINOR : (int)max_minor) : -1;
  cjrt_dl_dtype dt;
  uint64_t flags;
  CJRT_TRY(cjrt_dtype_to_dlpack(b->dtype, minor, &dt, &flags));
  if (cjrt_buffer_is_deleted(b))
    return cjrt__error(CJRT_FAILED_PRECONDITION, "DLPack export: the buffer was deleted");
  bool on_cpu = false;
  CJRT_TRY(cjrt__annotate(cjrt_buffer_is_on_cpu(b, &on_cpu), "DLPack export"));
  if (!on_cpu)
    return cjrt__error(CJRT_UNIMPLEMENTED,
                       "DLPack export: the buffer is not in host memory (PJRT_Buffer_IsOnCpu is "
                       "false); only CPU buffers are exported");
  /* the consumer reads the memory directly: the data must be there first */
  CJRT_TRY(cjrt__annotate(cjrt_buffer_await(b), "DLPack export"));
  export_ctx *x = calloc(1, sizeof *x + (b->rank ? b->rank : 1) * sizeof(int64_t));
  if (!x) return cjrt__oom();
  PJRT_Buffer_IncreaseExternalReferenceCount_Args inc = {
      .struct_size = PJRT_Buffer_IncreaseExternalReferenceCount_Args_STRUCT_SIZE, .buffer = b->raw};
  cjrt_error *err = CJRT_PJRT(b->client->lib, PJRT_Buffer_IncreaseExternalReferenceCount, &inc);
  if (err) {
    free(x);
    return cjrt__annotate(err, "DLPack export");
  }
  uintptr_t ptr = 0;
  err = cjrt_buffer_unsafe_pointer(b, &ptr);
  if (!err && !ptr && cjrt_buffer_num_elements(b) > 0)
    err = cjrt__error(CJRT_INTERNAL, "PJRT_Buffer_UnsafePointer returned NULL for a non-empty buffer");
  x->buffer = cjrt_buffer_retain(b);
  if (err) {
    release_export(x);
    return cjrt__annotate(err, "DLPack export");
  }
  if (b->rank) memcpy(x->shape, b->dims, b->rank * sizeof(int64_t));
  cjrt_dl_tensor t = {.data = (void *)ptr,
                      .device = {CJRT_DL_CPU, 0},
                      .ndim = (int32_t)b->rank,
                      .dtype = dt,
                      .shape = x->shape,
                      .strides = NULL,
                      .byte_offset = 0};
  if (versioned) {
    x->t.versioned.version = (cjrt_dl_version){CJRT_DLPACK_MAJOR, (uint32_t)minor};
    x->t.versioned.manager_ctx = x;
    x->t.versioned.deleter = versioned_deleter;
    x->t.versioned.flags = flags | CJRT_DLPACK_FLAG_READ_ONLY;
    x->t.versioned.dl_tensor = t;
  } else {
    x->t.legacy.dl_tensor = t;
    x->t.legacy.manager_ctx = x;
    x->t.legacy.deleter = legacy_deleter;
  }
  *out = &x->t;
  return NULL;
}

/* ---- import ---- */

typedef struct {
  void *managed;
  bool versioned;
} import_ctx;

static void call_deleter(void *managed, bool versioned) {
  if (versioned) {
    cjrt_dl_managed_tensor_versioned *m = managed;
    if (m->deleter) m->deleter(m);
  } else {
    cjrt_dl_managed_tensor *m = managed;
    if (m->deleter) m->deleter(m);
  }
}

static void import_on_delete(void *data, void *arg) {
  (void)data;
  import_ctx *ic = arg;
  call_deleter(ic->managed, ic->versioned);
  free(ic);
}

static bool host_device(int32_t type) {
  return type == CJRT_DL_CPU || type == CJRT_DL_CUDA_HOST || type == CJRT_DL_ROCM_HOST ||
         type == CJRT_DL_CUDA_MANAGED;
}

CJRT_API cjrt_error *cjrt_buffer_from_dlpack(cjrt_client *c, cjrt_device *device, void *managed,
                                             bool versioned, cjrt_buffer **out, bool *out_copied) {
  *out = NULL;
  if (out_copied) *out_copied = false;
  if (!c || !managed) return cjrt__error(CJRT_INVALID_ARGUMENT, "DLPack import: NULL argument");
  const cjrt_dl_tensor *t;
  uint64_t flags = 0;
  if (versioned) {
    const cjrt_dl_managed_tensor_versioned *m = managed;
    if (m->version.major != CJRT_DLPACK_MAJOR)
      return cjrt__error(CJRT_UNIMPLEMENTED, "DLPack import: version %u.%u; cjrt reads major version %d",
                         m->version.major, m->version.minor, CJRT_DLPACK_MAJOR);
    t = &m->dl_tensor;
    flags = m->flags;
  } else {
    t = &((const cjrt_dl_managed_tensor *)managed)->dl_tensor;
  }
  if (!host_device(t->device.device_type))
    return cjrt__error(CJRT_UNIMPLEMENTED,
                       "DLPack import: the tensor lives on device type %d (id %d), not in host "
                       "memory; cjrt imports host tensors (kDLCPU)",
                       t->device.device_type, t->device.device_id);
  cjrt_dtype dt;
  CJRT_TRY(cjrt__annotate(cjrt_dtype_from_dlpack(t->dtype, flags, &dt), "DLPack import"));
  if (t->ndim < 0 || t->ndim > 64 || (t->ndim && !t->shape))
    return cjrt__error(CJRT_INVALID_ARGUMENT, "DLPack import: bad ndim %d", t->ndim);
  size_t rank = (size_t)t->ndim;
  size_t es = cjrt_dtype_size(dt);
  int64_t n = cjrt__num_elements(t->shape, rank, es);
  if (n < 0) return cjrt__error(CJRT_INVALID_ARGUMENT, "DLPack import: bad shape");
  if (n > 0 && !t->data) return cjrt__error(CJRT_INVALID_ARGUMENT, "DLPack import: data is NULL");
  char *data = (char *)t->data + t->byte_offset;
  /* dense row-major? (dims of size 1 may carry any stride) */
  bool compact = true;
  int64_t byte_strides[64];
  int64_t expect = 1;
  for (size_t d = rank; d-- > 0;) {
    int64_t st = t->strides ? t->strides[d] : expect;
    if (st > INT64_MAX / 16 || st < -(INT64_MAX / 16))
      return cjrt__error(CJRT_INVALID_ARGUMENT, "DLPack import: stride %lld is out of range", (long long)st);
    byte_strides[d] = st * (int64_t)es;
    if (t->shape[d] != 1 && st != expect) compact = false;
    expect *= t->shape[d];
  }
  cjrt_error *err;
  cjrt_device *d = cjrt__default_device(c, device, &err);
  if (!d) return err;
  /* element-aligned data only: kernels may load whole elements (components for complex) */
  size_t align = dt == CJRT_C64 ? 4 : dt == CJRT_C128 ? 8 : es;
  bool aligned = ((uintptr_t)data % align) == 0;
  if (compact && aligned && n > 0 && cjrt__client_on_cpu(c) &&
      CJRT_HAS(c->lib, PJRT_Client_CreateViewOfDeviceBuffer)) {
    import_ctx *ic = malloc(sizeof *ic);
    if (!ic) return cjrt__oom();
    ic->managed = managed;
    ic->versioned = versioned;
    err = cjrt_buffer_view(c, d, dt, t->shape, rank, data, import_on_delete, ic, out);
    if (!err) return NULL; /* the view owns the tensor now */
    free(ic);
    /* the plugin would not view this memory (alignment, ...): copy instead */
    cjrt_error_free(err);
  }
  err = cjrt_buffer_from_host(c, d, dt, t->shape, rank, data, compact ? NULL : byte_strides, out);
  if (err) return cjrt__annotate(err, "DLPack import");
  if (out_copied) *out_copied = true;
  call_deleter(managed, versioned);
  return NULL;
}
