/* Fuzz target: libcjrt's .npy reader (untrusted files from --input). Whatever it accepts must
 * write back and read back to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cjrt/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const cjrt_dtype types[] = {CJRT_INVALID, CJRT_F8E4M3FN, CJRT_BF16, CJRT_F32};
  for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
    cjrt_array a;
    cjrt_error *e = cjrt_npy_read_mem(data, size, types[k], "fuzz", &a);
    if (e) {
      cjrt_error_free(e);
      continue;
    }
    void *bytes = NULL;
    size_t n = 0;
    e = cjrt_npy_write_mem(&a, k & 1, &bytes, &n);
    if (e) abort(); /* what was read must be writable */
    cjrt_array b;
    e = cjrt_npy_read_mem(bytes, n, a.dtype, "fuzz-again", &b);
    if (e || b.nbytes != a.nbytes || b.rank != a.rank || memcmp(a.data, b.data, a.nbytes)) abort();
    cjrt_array_free(&b);
    cjrt_free(bytes);
    cjrt_array_free(&a);
  }
  return 0;
}
