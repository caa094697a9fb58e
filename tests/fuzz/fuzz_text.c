/* Fuzz target for the textual MLIR front end and the printer: parse (with `// -----` splits),
 * verify, print (pretty and generic) and re-parse the printout. A module that verifies must read
 * back from its printout to the same printout; anything else must fail cleanly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/frontend.h"
#include "ir/ir.h"

static void check_roundtrip(const cj_module *m, unsigned flags, const char *want) {
  char *s1 = NULL, *s2 = NULL;
  size_t n1 = 0, n2 = 0;
  cj_module *m2 = NULL;
  cj_status st = cj_print_module(m, flags, &s1, &n1);
  if (st) goto done; /* out of memory only */
  st = cj_parse_mlir_text(s1, n1, "printout.mlir", &m2);
  if (st) __builtin_trap(); /* a printout that does not read back */
  st = cj_print_module(m2, 0, &s2, &n2);
  if (st) goto done;
  if (strcmp(want ? want : s1, s2) != 0) __builtin_trap(); /* print -> parse -> print differs */
done:
  cj_status_free(st);
  free(s1);
  free(s2);
  cj_module_free(m2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cj_module **mods = NULL;
  size_t n = 0;
  cj_status st = cj_parse_mlir_text_split((const char *)data, size, "fuzz.mlir", &mods, &n);
  if (st) {
    cj_status_free(st);
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    cj_status vs = cj_verify_module(mods[i]);
    char *pretty = NULL;
    size_t pn = 0;
    cj_status ps = cj_print_module(mods[i], CJ_PRINT_LOCS, &pretty, &pn);
    if (!vs && !ps) {
      char *plain = NULL;
      size_t qn = 0;
      cj_status qs = cj_print_module(mods[i], 0, &plain, &qn);
      if (!qs) {
        check_roundtrip(mods[i], 0, NULL);
        check_roundtrip(mods[i], CJ_PRINT_GENERIC, plain);
      }
      cj_status_free(qs);
      free(plain);
    }
    cj_status_free(vs);
    cj_status_free(ps);
    free(pretty);
    cj_module_free(mods[i]);
  }
  free(mods);
  return 0;
}
