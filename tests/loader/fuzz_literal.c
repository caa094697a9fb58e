/* Fuzz target: libcjrt's literal parser ('VALUE:TYPE' from the command line) and the printer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cjrt/array.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = 0;
  cjrt_array a;
  cjrt_error *e = cjrt_array_parse_typed(s, &a);
  if (!e) {
    char *text = NULL;
    e = cjrt_array_format(&a, &text);
    if (e) abort(); /* a parsed array always prints */
    cjrt_free(text);
    cjrt_array_free(&a);
  }
  cjrt_error_free(e);
  free(s);
  return 0;
}
