/* The one PJRT operation the TensorFlow layer (src/tfnpd) needs on objects it holds as opaque
 * PJRT pointers: a copy of a buffer on its own device (TFNPD_SameDevicePjRtBufferCopy). */
#include "pjrt/internal.h"
#include "tfnpd/tfnpd.h"

cj_status cjp_tfnpd_buffer_copy(struct PJRT_Buffer *src, struct PJRT_Buffer **out) {
  cj_buffer *b = (cj_buffer *)src, *copy = NULL;
  if (!b || !cj_buffer_check(b))
    return cj_status_make(CJ_INVALID_ARGUMENT, "the source is not a live cjrt buffer");
  CJ_RETURN_IF_ERROR(cj_buffer_copy_to_memory(b, cj_buffer_memory(b), &copy));
  *out = (struct PJRT_Buffer *)copy;
  return NULL;
}
