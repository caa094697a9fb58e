/* cjrt info: what a PJRT plugin says about itself: versions, attributes, platform, devices and
 * memories. Everything goes through libcjrt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cjrt/cjrt.h"

/* in cmd_run.c */
bool cjrt_tool_open_client(const char *cmd, const char *plugin, char **options, size_t num_options,
                           cjrt_plugin **out_plugin, cjrt_client **out_client);

static void info_usage(FILE *f) {
  fprintf(f,
          "usage: cjrt info [--plugin PATH|NAME] [--option NAME=VALUE]...\n"
          "\n"
          "Loads a PJRT plugin, creates a client, and prints the plugin's PJRT C API version and\n"
          "attributes, the platform, and every device and memory with their attributes.\n"
          "\n"
          "options:\n"
          "  --plugin PATH|NAME     the PJRT plugin (default: $CJRT_PLUGIN, else the cjrt plugin\n"
          "                         next to libcjrt); a NAME is looked up as pjrt_c_api_NAME_plugin.so,\n"
          "                         libNAME.so, ... in $CJRT_PLUGIN_PATH, $PJRT_PLUGIN_LIBRARY_PATH,\n"
          "                         libcjrt's directory and the system library path\n"
          "  --option NAME=VALUE    a client create option (repeatable), e.g. cpu_device_count=4\n"
          "  -h, --help             this help\n");
}

static void print_value(const cjrt_value *v) {
  switch (v->kind) {
    case CJRT_VALUE_STRING: printf("\"%s\"", v->string_value); break;
    case CJRT_VALUE_INT64: printf("%lld", (long long)v->int64_value); break;
    case CJRT_VALUE_INT64_LIST:
      printf("[");
      for (size_t i = 0; i < v->size; i++) printf(i ? ", %lld" : "%lld", (long long)v->int64_list[i]);
      printf("]");
      break;
    case CJRT_VALUE_FLOAT: printf("%g", (double)v->float_value); break;
    case CJRT_VALUE_BOOL: printf("%s", v->bool_value ? "true" : "false"); break;
    default: printf("(kind %d)", (int)v->kind); break;
  }
}

static void print_memory_line(const cjrt_memory *m, const char *indent, bool is_default) {
  printf("%s%s: id %d, kind id %d%s", indent, cjrt_memory_kind(m), cjrt_memory_id(m),
         cjrt_memory_kind_id(m), is_default ? ", default" : "");
  if (*cjrt_memory_to_string(m)) printf(", %s", cjrt_memory_to_string(m));
  printf("\n");
}

int cjrt_cmd_info(int argc, char **argv) {
  const char *plugin_arg = NULL;
  char **options = calloc((size_t)argc, sizeof *options);
  size_t num_options = 0;
  if (!options) return 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      info_usage(stdout);
      free(options);
      return 0;
    } else if (!strcmp(a, "--plugin") || !strncmp(a, "--plugin=", 9)) {
      if (a[8] == '=') {
        plugin_arg = a + 9;
      } else if (i + 1 < argc) {
        plugin_arg = argv[++i];
      } else {
        fprintf(stderr, "cjrt info: --plugin needs a value\n");
        free(options);
        return 2;
      }
    } else if (!strcmp(a, "--option") || !strncmp(a, "--option=", 9)) {
      if (a[8] == '=') {
        options[num_options++] = (char *)a + 9;
      } else if (i + 1 < argc) {
        options[num_options++] = argv[++i];
      } else {
        fprintf(stderr, "cjrt info: --option needs NAME=VALUE\n");
        free(options);
        return 2;
      }
    } else {
      fprintf(stderr, "cjrt info: unexpected argument '%s' (cjrt info --help lists the options)\n", a);
      free(options);
      return 2;
    }
  }
  cjrt_plugin *p = NULL;
  cjrt_client *c = NULL;
  bool ok = cjrt_tool_open_client("info", plugin_arg, options, num_options, &p, &c);
  free(options);
  if (!ok) return 1;

  printf("plugin: %s\n", cjrt_plugin_path(p));
  printf("PJRT C API: %d.%d (libcjrt speaks %d.%d)\n", cjrt_plugin_api_major(p),
         cjrt_plugin_api_minor(p), cjrt_api_major(), cjrt_api_minor());
  size_t na = cjrt_plugin_num_attributes(p);
  printf("plugin attributes: %zu\n", na);
  for (size_t i = 0; i < na; i++) {
    const cjrt_value *v = cjrt_plugin_attribute(p, i);
    printf("  %s = ", v->name);
    print_value(v);
    printf("\n");
  }
  printf("platform: %s\n", cjrt_client_platform_name(c));
  printf("platform version: %s\n", cjrt_client_platform_version(c));
  printf("process index: %d\n", cjrt_client_process_index(c));
  size_t nd = cjrt_client_num_devices(c);
  printf("devices: %zu (%zu addressable)\n", nd, cjrt_client_num_addressable_devices(c));
  for (size_t i = 0; i < nd; i++) {
    cjrt_device *d = cjrt_client_device(c, i);
    printf("  device %lld: %s, kind \"%s\", process %d, local hardware id %d%s\n",
           (long long)cjrt_device_id(d), cjrt_device_to_string(d), cjrt_device_kind(d),
           cjrt_device_process_index(d), cjrt_device_local_hardware_id(d),
           cjrt_device_is_addressable(d) ? "" : ", not addressable");
    if (*cjrt_device_debug_string(d) && strcmp(cjrt_device_debug_string(d), cjrt_device_to_string(d)))
      printf("    debug string: %s\n", cjrt_device_debug_string(d));
    for (size_t k = 0; k < cjrt_device_num_attributes(d); k++) {
      const cjrt_value *v = cjrt_device_attribute(d, k);
      printf("    %s = ", v->name);
      print_value(v);
      printf("\n");
    }
    size_t nm = cjrt_device_num_memories(d);
    if (nm) printf("    memories:\n");
    for (size_t k = 0; k < nm; k++) {
      cjrt_memory *m = cjrt_device_memory(d, k);
      print_memory_line(m, "      ", m == cjrt_device_default_memory(d));
    }
  }
  size_t nm = cjrt_client_num_memories(c);
  printf("memories: %zu\n", nm);
  for (size_t i = 0; i < nm; i++) {
    cjrt_memory *m = cjrt_client_memory(c, i);
    print_memory_line(m, "  ", false);
    size_t n = cjrt_memory_num_devices(m);
    printf("    devices:");
    for (size_t k = 0; k < n; k++) printf(" %lld", (long long)cjrt_device_id(cjrt_memory_device(m, k)));
    printf("%s\n", n ? "" : " (none reported)");
  }
  cjrt_client_free(c);
  cjrt_plugin_close(p);
  fflush(stdout);
  return 0;
}
