/* libcjrt: DLPack, to share buffers with numpy, PyTorch, JAX and any other DLPack framework
 * without copying.
 *
 * The structures are DLPack's (1.1), ABI-identical, under cjrt_ names so that this header can sit
 * beside the real dlpack.h: a cjrt_dl_managed_tensor* may be cast to DLManagedTensor* and a
 * cjrt_dl_managed_tensor_versioned* to DLManagedTensorVersioned*.
 *
 * Ownership:
 * - cjrt_buffer_to_dlpack hands out a managed tensor that holds a reference to the buffer and an
 *   external reference on the PJRT buffer (PJRT_Buffer_IncreaseExternalReferenceCount), so the
 *   memory stays put while the consumer uses it. The consumer calls its deleter exactly once (from
 *   any thread; it takes no lock of the caller's and needs no Python). A tensor never handed on is
 *   released by calling its deleter too.
 * - cjrt_buffer_from_dlpack takes ownership of the managed tensor only on success: it then calls
 *   the tensor's deleter exactly once, when the new buffer lets go of the memory (zero-copy) or
 *   before returning (when it had to copy). On failure the caller still owns the tensor.
 */
#ifndef CJRT_DLPACK_H
#define CJRT_DLPACK_H

#include "cjrt/cjrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CJRT_DLPACK_MAJOR 1
#define CJRT_DLPACK_MINOR 1

/* DLDeviceType values used here. */
enum { CJRT_DL_CPU = 1, CJRT_DL_CUDA = 2, CJRT_DL_CUDA_HOST = 3, CJRT_DL_ROCM_HOST = 11,
       CJRT_DL_CUDA_MANAGED = 13 };

/* DLDataTypeCode values. */
enum {
  CJRT_DL_INT = 0,
  CJRT_DL_UINT = 1,
  CJRT_DL_FLOAT = 2,
  CJRT_DL_OPAQUE_HANDLE = 3,
  CJRT_DL_BFLOAT = 4,
  CJRT_DL_COMPLEX = 5,
  CJRT_DL_BOOL = 6,
  CJRT_DL_FLOAT8_E3M4 = 7,
  CJRT_DL_FLOAT8_E4M3 = 8,
  CJRT_DL_FLOAT8_E4M3B11FNUZ = 9,
  CJRT_DL_FLOAT8_E4M3FN = 10,
  CJRT_DL_FLOAT8_E4M3FNUZ = 11,
  CJRT_DL_FLOAT8_E5M2 = 12,
  CJRT_DL_FLOAT8_E5M2FNUZ = 13,
  CJRT_DL_FLOAT8_E8M0FNU = 14,
  CJRT_DL_FLOAT6_E2M3FN = 15,
  CJRT_DL_FLOAT6_E3M2FN = 16,
  CJRT_DL_FLOAT4_E2M1FN = 17,
};

/* Flags of the versioned tensor. */
#define CJRT_DLPACK_FLAG_READ_ONLY (1ULL << 0)
#define CJRT_DLPACK_FLAG_IS_COPIED (1ULL << 1)
#define CJRT_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED (1ULL << 2)

typedef struct cjrt_dl_version {
  uint32_t major, minor;
} cjrt_dl_version;

typedef struct cjrt_dl_device {
  int32_t device_type;
  int32_t device_id;
} cjrt_dl_device;

typedef struct cjrt_dl_dtype {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} cjrt_dl_dtype;

typedef struct cjrt_dl_tensor {
  void *data;
  cjrt_dl_device device;
  int32_t ndim;
  cjrt_dl_dtype dtype;
  int64_t *shape;
  int64_t *strides; /* in elements; NULL = compact row-major */
  uint64_t byte_offset;
} cjrt_dl_tensor;

/* The legacy ("dltensor" capsule) tensor. */
typedef struct cjrt_dl_managed_tensor {
  cjrt_dl_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct cjrt_dl_managed_tensor *self);
} cjrt_dl_managed_tensor;

/* The DLPack 1.x ("dltensor_versioned" capsule) tensor. */
typedef struct cjrt_dl_managed_tensor_versioned {
  cjrt_dl_version version;
  void *manager_ctx;
  void (*deleter)(struct cjrt_dl_managed_tensor_versioned *self);
  uint64_t flags;
  cjrt_dl_tensor dl_tensor;
} cjrt_dl_managed_tensor_versioned;

/* The DLPack type of a cjrt dtype. `minor` is the DLPack 1.x minor the consumer reads, or -1
 * for a legacy (unversioned) tensor: the float8/6/4 codes are DLPack 1.1's; sub-byte types (S4,
 * U4, S2, U2, S1, U1, F4E2M1FN, F6*) are stored one per byte, which only a 1.1 versioned tensor
 * can state (flag IS_SUBBYTE_TYPE_PADDED, returned in *out_flags). TOKEN and INVALID have none.
 * Errors say why. */
CJRT_API cjrt_error *cjrt_dtype_to_dlpack(cjrt_dtype dt, int minor, cjrt_dl_dtype *out,
                                          uint64_t *out_flags);
/* The reverse; `flags` is the versioned tensor's flags (0 for legacy ones). */
CJRT_API cjrt_error *cjrt_dtype_from_dlpack(cjrt_dl_dtype dt, uint64_t flags, cjrt_dtype *out);

/* Exports a buffer: *out is a cjrt_dl_managed_tensor_versioned* when `versioned` (its version
 * is 1.max_minor, at most 1.1: what the consumer said it reads via __dlpack__'s max_version;
 * flags: READ_ONLY, as PJRT buffers are immutable, plus sub-byte padding where it applies), else a
 * cjrt_dl_managed_tensor*. The device is kDLCPU 0; strides are NULL (PJRT buffers are dense
 * row-major); data is PJRT_Buffer_UnsafePointer, after the buffer is ready. The buffer must be
 * on the CPU (cjrt_buffer_is_on_cpu) and not deleted. Types the chosen version cannot carry fail
 * with a message naming the type and what would carry it. */
CJRT_API cjrt_error *cjrt_buffer_to_dlpack(cjrt_buffer *b, bool versioned, uint32_t max_minor,
                                           void **out);

/* Imports a managed tensor (`versioned` says which struct it is) on `device` (NULL: the first
 * addressable device). Host tensors (kDLCPU, kDLCUDAHost, kDLCUDAManaged, kDLROCMHost) whose
 * layout is dense row-major (strides NULL, or equal to the compact strides, size-1 dims ignored)
 * and whose data (data + byte_offset) is aligned to the element size become zero-copy views
 * (cjrt_buffer_view) when the plugin keeps buffers in host memory and accepts the view; other
 * layouts, and plugins without views, are copied (strides in elements become byte strides, so
 * transposed or sliced layouts copy in one pass). *out_copied says which happened (may be NULL).
 * Versioned tensors with a major version other than 1 are rejected (and left untouched). */
CJRT_API cjrt_error *cjrt_buffer_from_dlpack(cjrt_client *c, cjrt_device *device, void *managed,
                                             bool versioned, cjrt_buffer **out, bool *out_copied);

#ifdef __cplusplus
}
#endif

#endif
