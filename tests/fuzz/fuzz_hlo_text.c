/* Fuzz target: the HLO text reader and its lowering into StableHLO (src/frontend/hlo_text.c,
 * hlo_lower.c). Whatever the bytes, reading gives a module or fails with a status, never crashes
 * or leaks; a module it gives must not crash the verifier. */
#include <stdint.h>
#include <stdlib.h>

#include "frontend/frontend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cj_module *m = NULL;
  cj_status st = cj_read_hlo_program(data, size, CJ_HLO_TEXT, "fuzz.hlo", &m);
  if (!st) st = cj_verify_module(m);
  cj_status_free(st);
  cj_module_free(m);
  return 0;
}
