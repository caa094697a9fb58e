/* Fuzz target: the MLIR bytecode + VHLO reader (cj_read_mlir_bytecode), then the verifier on
 * whatever decodes. Any input must either decode or fail with a status: no crash, no
 * out-of-bounds read, no leak, no unbounded recursion. Seeds: tests/fuzz/seeds/fuzz_bytecode/
 * (portable artifacts of several StableHLO versions and container versions 0..6). */
#include <stddef.h>
#include <stdint.h>

#include "frontend/frontend.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cj_module *m = NULL;
  cj_status st = cj_read_mlir_bytecode(data, size, "fuzz.mlirbc", &m);
  if (!st) {
    cj_status v = cj_verify_module(m);
    cj_status_free(v);
  }
  cj_status_free(st);
  cj_module_free(m);
  return 0;
}
