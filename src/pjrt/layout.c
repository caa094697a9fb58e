/* cjrt: element types, shapes and layouts as they arrive through the C API. */
#include <stdio.h>
#include <string.h>

#include "pjrt/internal.h"

/* cj_dtype and PJRT_Buffer_Type share their numbers (dtypes.def), and cj_code and
 * PJRT_Error_Code share absl's: no mapping tables exist, so the equalities are checked here. */
#define SAME_TYPE(x) _Static_assert((int)CJ_##x == (int)PJRT_Buffer_Type_##x, #x);
SAME_TYPE(INVALID)
SAME_TYPE(PRED)
SAME_TYPE(S8)
SAME_TYPE(S16)
SAME_TYPE(S32)
SAME_TYPE(S64)
SAME_TYPE(U8)
SAME_TYPE(U16)
SAME_TYPE(U32)
SAME_TYPE(U64)
SAME_TYPE(F16)
SAME_TYPE(F32)
SAME_TYPE(F64)
SAME_TYPE(BF16)
SAME_TYPE(C64)
SAME_TYPE(C128)
SAME_TYPE(F8E5M2)
SAME_TYPE(F8E4M3FN)
SAME_TYPE(F8E4M3B11FNUZ)
SAME_TYPE(F8E5M2FNUZ)
SAME_TYPE(F8E4M3FNUZ)
SAME_TYPE(S4)
SAME_TYPE(U4)
SAME_TYPE(TOKEN)
SAME_TYPE(S2)
SAME_TYPE(U2)
SAME_TYPE(F8E4M3)
SAME_TYPE(F8E3M4)
SAME_TYPE(F8E8M0FNU)
SAME_TYPE(F4E2M1FN)
SAME_TYPE(S1)
SAME_TYPE(U1)
SAME_TYPE(F6E2M3FN)
SAME_TYPE(F6E3M2FN)
#undef SAME_TYPE

#define SAME_CODE(x) _Static_assert((int)CJ_##x == (int)PJRT_Error_Code_##x, #x);
SAME_CODE(OK)
SAME_CODE(CANCELLED)
SAME_CODE(UNKNOWN)
SAME_CODE(INVALID_ARGUMENT)
SAME_CODE(DEADLINE_EXCEEDED)
SAME_CODE(NOT_FOUND)
SAME_CODE(ALREADY_EXISTS)
SAME_CODE(PERMISSION_DENIED)
SAME_CODE(RESOURCE_EXHAUSTED)
SAME_CODE(FAILED_PRECONDITION)
SAME_CODE(ABORTED)
SAME_CODE(OUT_OF_RANGE)
SAME_CODE(UNIMPLEMENTED)
SAME_CODE(INTERNAL)
SAME_CODE(UNAVAILABLE)
SAME_CODE(DATA_LOSS)
SAME_CODE(UNAUTHENTICATED)
#undef SAME_CODE

_Static_assert((int)CJ_HOST_COPY_DURING_CALL ==
                   (int)PJRT_HostBufferSemantics_kImmutableOnlyDuringCall &&
                   (int)CJ_HOST_COPY_UNTIL_DONE ==
                       (int)PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes &&
                   (int)CJ_HOST_ZERO_COPY == (int)PJRT_HostBufferSemantics_kImmutableZeroCopy &&
                   (int)CJ_HOST_MUTABLE_ZERO_COPY == (int)PJRT_HostBufferSemantics_kMutableZeroCopy,
               "host buffer semantics values");

cj_status cjp_dtype(PJRT_Buffer_Type t, cj_dtype *out) {
  int v = (int)t;
  if (v < (int)PJRT_Buffer_Type_PRED || v > (int)PJRT_Buffer_Type_F6E3M2FN)
    return cj_invalid("element type %d is not a valid PJRT_Buffer_Type", v);
  *out = (cj_dtype)v;
  return NULL;
}

cj_status cjp_shape(cj_dtype dt, const int64_t *dims, size_t num_dims) {
  size_t nbytes;
  return cj_shape_check(dt, dims, num_dims, &nbytes);
}

/* Formats a list of int64 for messages. */
static const char *fmt_list(char *buf, size_t size, const int64_t *v, size_t n) {
  size_t len = 0;
  buf[0] = 0;
  for (size_t i = 0; i < n && len + 24 < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? "," : "", (long long)v[i]);
  if (len + 24 >= size && n) snprintf(buf + len, size - len, ",...");
  return buf;
}

static CJ_MUST_USE cj_status check_layout_header(const PJRT_Buffer_MemoryLayout *l) {
  /* struct_size is not checked: jaxlib sets it wrong (0.10 leaves it 0, 0.7 writes 8 for
   * 4-bit types) although it always passes the whole struct, which has kept its fields since
   * it was introduced; XLA's own plugins do not read it either. */
  if (l->type != PJRT_Buffer_MemoryLayout_Type_Tiled &&
      l->type != PJRT_Buffer_MemoryLayout_Type_Strides)
    return cj_invalid("layout type %d is neither Tiled nor Strides", (int)l->type);
  return NULL;
}

/* Byte strides of a tiled layout without tiles: minor_to_major must be a permutation. */
static CJ_MUST_USE cj_status tiled_strides(const PJRT_Buffer_MemoryLayout_Tiled *t, size_t elem,
                               const int64_t *dims, size_t rank, int64_t *out) {
  char buf[128];
  if (t->minor_to_major_size != rank)
    return cj_invalid("the layout's minor_to_major has %zu entries for a rank-%zu shape",
                      t->minor_to_major_size, rank);
  if (rank && !t->minor_to_major) return cj_invalid("the layout's minor_to_major is NULL");
  bool seen[CJ_MAX_RANK] = {false};
  for (size_t i = 0; i < rank; i++) {
    int64_t d = t->minor_to_major[i];
    if (d < 0 || (size_t)d >= rank || seen[d])
      return cj_invalid("minor_to_major {%s} is not a permutation of the %zu dimensions",
                        fmt_list(buf, sizeof buf, t->minor_to_major, rank), rank);
    seen[d] = true;
  }
  if (t->num_tiles)
    return cj_unimplemented("tiled layouts (%zu tiles) are not supported by cjrt", t->num_tiles);
  int64_t s = (int64_t)elem;
  for (size_t i = 0; i < rank; i++) {
    int64_t d = t->minor_to_major[i];
    out[d] = s;
    s *= dims[d] > 0 ? dims[d] : 1;
  }
  return NULL;
}

cj_status cjp_check_device_layout(const PJRT_Buffer_MemoryLayout *l, cj_dtype dt,
                                  const int64_t *dims, size_t rank) {
  if (!l) return NULL;
  CJ_RETURN_IF_ERROR(check_layout_header(l));
  size_t elem = (size_t)cj_dtype_bytes(dt);
  int64_t got[CJ_MAX_RANK], dense[CJ_MAX_RANK];
  if (rank > CJ_MAX_RANK) return cj_invalid("rank %zu is too large", rank);
  if (l->type == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    CJ_RETURN_IF_ERROR(tiled_strides(&l->tiled, elem, dims, rank, got));
  } else {
    if (l->strides.num_byte_strides != rank)
      return cj_invalid("the layout has %zu byte strides for a rank-%zu shape",
                        l->strides.num_byte_strides, rank);
    if (rank && !l->strides.byte_strides) return cj_invalid("the layout's byte_strides is NULL");
    memcpy(got, l->strides.byte_strides, sizeof(int64_t) * rank);
  }
  cj_dense_strides(dims, (int)rank, elem, dense);
  for (size_t i = 0; i < rank; i++)
    if (dims[i] > 1 && got[i] != dense[i]) {
      char a[128], b[128];
      return cj_unimplemented(
          "cjrt keeps arrays in the dense row-major layout only (byte strides {%s}); the "
          "requested device layout has byte strides {%s}",
          fmt_list(a, sizeof a, dense, rank), fmt_list(b, sizeof b, got, rank));
    }
  return NULL;
}

cj_status cjp_host_layout_strides(const PJRT_Buffer_MemoryLayout *l, cj_dtype dt,
                                  const int64_t *dims, size_t rank, int64_t *out_strides,
                                  size_t *out_span) {
  size_t elem = (size_t)cj_dtype_bytes(dt);
  size_t nbytes;
  CJ_RETURN_IF_ERROR(cj_shape_check(dt, dims, rank, &nbytes));
  if (!l) {
    cj_dense_strides(dims, (int)rank, elem, out_strides);
    *out_span = nbytes;
    return NULL;
  }
  CJ_RETURN_IF_ERROR(check_layout_header(l));
  if (l->type == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    CJ_RETURN_IF_ERROR(tiled_strides(&l->tiled, elem, dims, rank, out_strides));
    *out_span = nbytes;
    return NULL;
  }
  if (l->strides.num_byte_strides != rank)
    return cj_invalid("the layout has %zu byte strides for a rank-%zu shape",
                      l->strides.num_byte_strides, rank);
  if (rank && !l->strides.byte_strides) return cj_invalid("the layout's byte_strides is NULL");
  unsigned __int128 span = elem;
  for (size_t i = 0; i < rank; i++) {
    int64_t s = l->strides.byte_strides[i];
    if (s < 0)
      return cj_invalid("negative byte stride %lld (dimension %zu) is not supported here",
                        (long long)s, i);
    out_strides[i] = s;
    if (dims[i] > 0) span += (unsigned __int128)(dims[i] - 1) * (unsigned __int128)s;
  }
  if (nbytes == 0) span = 0;
  if (span > (unsigned __int128)INT64_MAX) return cj_invalid("the layout spans too many bytes");
  *out_span = (size_t)span;
  return NULL;
}

cj_status cjp_device_array(PJRT_Buffer_Type t, const int64_t *dims, size_t num_dims,
                           const PJRT_Buffer_MemoryLayout *layout, cj_dtype *out) {
  CJ_RETURN_IF_ERROR(cjp_dtype(t, out));
  CJ_RETURN_IF_ERROR(cjp_shape(*out, dims, num_dims));
  return cjp_check_device_layout(layout, *out, dims, num_dims);
}
