/* cjrt tests: files. One copy of what each test used to carry its own of. */
#ifndef CJ_TESTS_FILES_H
#define CJ_TESTS_FILES_H

#include <stdio.h>
#include <stdlib.h>

/* The whole file, NUL-terminated (malloc'ed; the caller frees), its size in *len when len is not
 * NULL (0 when NULL is returned). NULL if it cannot be read (a missing file, out of memory). */
static inline char *tc_read_file(const char *path, size_t *len) {
  if (len) *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[n] = 0;
    if (len) *len = (size_t)n;
  }
  return buf;
}

#endif
