/* cjrt: HLO text (`HloModule ...`) into the hlo_module record of hlo.h. */
#include "frontend/hlo.h"

cj_status hlo_read_text(const char *text, size_t len, const char *filename, hlo_module **out) {
  (void)text;
  (void)len;
  *out = NULL;
  return cj_unimplemented("%s: HLO text is not supported yet", filename ? filename : "hlo");
}
