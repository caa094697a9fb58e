/* Fuzz target: the xla.CompileOptionsProto reader (src/frontend/compile_options.c). Whatever the
 * bytes, it either fills the storage or fails with a status; when it succeeds, writing the
 * options back and reading them again must give the same replica/partition counts and device
 * assignment. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/compile_options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cj_compile_options_storage s;
  cj_status st = cj_compile_options_read(data, size, &s);
  if (st) {
    cj_status_free(st);
    return 0;
  }
  void *buf = NULL;
  size_t len = 0;
  st = cj_compile_options_write(&s.opts, &buf, &len);
  if (!st) {
    cj_compile_options_storage back;
    cj_status st2 = cj_compile_options_read(buf, len, &back);
    if (st2) {
      cj_status_free(st2);
      abort(); /* what we wrote must read back: a bug in the writer or the reader */
    }
    if (back.opts.num_replicas != s.opts.num_replicas ||
        back.opts.num_partitions != s.opts.num_partitions || back.ndevices != s.ndevices ||
        (s.ndevices && memcmp(back.devices, s.devices, sizeof(int64_t) * (size_t)s.ndevices)))
      abort();
    cj_compile_options_storage_free(&back);
  }
  cj_status_free(st);
  free(buf);
  cj_compile_options_storage_free(&s);
  return 0;
}
