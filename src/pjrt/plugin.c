/* cjrt: PJRT_Plugin_*: one-time set-up and plugin-wide attributes. */
#include <pthread.h>
#include <string.h>

#include "frontend/frontend.h"
#include "pjrt/internal.h"

/* xla_version follows upstream's plugins. The StableHLO pair is what our bytecode reader
 * accepts: frameworks serialize for min(their version, stablehlo_current_version). Each is a
 * kInt64List of exactly 3 (major, minor, patch): XLA indexes the list without checks. The values
 * are filled once and live as long as the process. */
static int64_t current_version[3], minimum_version[3];
static PJRT_NamedValue attributes[3];
static pthread_once_t attributes_once = PTHREAD_ONCE_INIT;

/* *v is the kInt64List `name` = values[0..3). */
static void version_attribute(PJRT_NamedValue *v, const char *name, const int64_t *values) {
  v->struct_size = PJRT_NamedValue_STRUCT_SIZE;
  v->name = name;
  v->name_size = strlen(name);
  v->type = PJRT_NamedValue_kInt64List;
  v->int64_array_value = values;
  v->value_size = 3;
}

static void attributes_init(void) {
  cj_stablehlo_version_current(current_version);
  cj_stablehlo_version_minimum(minimum_version);
  PJRT_NamedValue *a = attributes;
  a[0].struct_size = PJRT_NamedValue_STRUCT_SIZE;
  a[0].name = "xla_version";
  a[0].name_size = sizeof "xla_version" - 1;
  a[0].type = PJRT_NamedValue_kInt64;
  a[0].int64_value = 2;
  a[0].value_size = 1;
  version_attribute(&a[1], "stablehlo_current_version", current_version);
  version_attribute(&a[2], "stablehlo_minimum_version", minimum_version);
}

PJRT_Error *cjp_PJRT_Plugin_Initialize(PJRT_Plugin_Initialize_Args *args) {
  CJP_CHECK_ARGS(PJRT_Plugin_Initialize, args, extension_start);
  /* Nothing to set up: every client creates what it needs. Calling it again is harmless. */
  return NULL;
}

PJRT_Error *cjp_PJRT_Plugin_Attributes(PJRT_Plugin_Attributes_Args *args) {
  /* Headers before 0.95 computed this struct's size up to `attributes` only (24 bytes), though
   * the struct always had `num_attributes` after it (pjrt-contract trap 25); jaxlib up to 0.6
   * sends that size and aborts if this call fails. Both fields exist in such a caller's struct,
   * so 24 bytes is accepted. */
  CJP_CHECK_ARGS(PJRT_Plugin_Attributes, args, attributes);
  pthread_once(&attributes_once, attributes_init);
  args->attributes = attributes;
  args->num_attributes = sizeof attributes / sizeof attributes[0];
  return NULL;
}
