/* cjrt: the backends this build has, by name (backends/registry.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/registry.h"

static const struct {
  const char *name;
  cj_backend *(*get)(void);
} backends[] = {
    {"cpu", cj_backend_cpu},
    {"reference", cj_backend_reference},
};

cj_backend *cj_backend_by_name(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
    if (strcmp(backends[i].name, name) == 0) return backends[i].get();
  return NULL;
}

/* The names above, comma-separated (written once, on first use, under a once-guard). */
static char names_buf[128];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;
static void names_init(void) {
  size_t k = 0;
  for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
    int n = snprintf(names_buf + k, sizeof names_buf - k, "%s%s", i ? ", " : "", backends[i].name);
    if (n < 0 || (size_t)n >= sizeof names_buf - k) break;
    k += (size_t)n;
  }
}

const char *cj_backend_names(void) {
  pthread_once(&names_once, names_init);
  return names_buf;
}

cj_status cj_backend_select(const char *name, cj_backend **out) {
  *out = NULL;
  if (!name || !*name) name = getenv("CJRT_BACKEND");
  if (!name || !*name) {
    *out = cj_backend_cpu();
    return NULL;
  }
  *out = cj_backend_by_name(name);
  if (!*out) return cj_invalid("unknown backend '%s' (known backends: %s)", name, cj_backend_names());
  return NULL;
}
