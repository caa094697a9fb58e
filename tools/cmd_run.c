/* cjrt run: compile a program and run it through a PJRT plugin, printing the outputs as numpy
 * prints arrays. Everything goes through libcjrt (include/cjrt/), as any framework would. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cjrt/array.h"
#include "cjrt/cjrt.h"
#include "cjrt/npy.h"

static void run_usage(FILE *f) {
  fprintf(f,
          "usage: cjrt run PROGRAM [options]\n"
          "\n"
          "Compiles PROGRAM (StableHLO as MLIR text, or MLIR bytecode / a portable artifact; or HLO:\n"
          "PROGRAM.pb, a serialized xla.HloModuleProto, or PROGRAM.hlo, HLO text, both sent as\n"
          "format \"hlo\") with a PJRT plugin, runs it on the inputs, and prints each output as\n"
          "numpy prints arrays.\n"
          "\n"
          "options:\n"
          "  --plugin PATH|NAME     the PJRT plugin: a path to its .so, or a name looked up as\n"
          "                         pjrt_c_api_NAME_plugin.so, libNAME.so, ... (default: $CJRT_PLUGIN,\n"
          "                         else the cjrt plugin next to libcjrt)\n"
          "  --device N             run on the device with id N (default: the first addressable)\n"
          "  --input FILE.npy[:TYPE]  an argument from a .npy file (TYPE names the element type of\n"
          "                         ml_dtypes files numpy records only by size, e.g. :f8e4m3fn)\n"
          "  --input 'VALUE:TYPE'   an argument literal: '[[1, 2], [3, 4]]:f32', '3:i32',\n"
          "                         '[true, false]:pred', '[1+2j]:c64'\n"
          "                         (inputs are the program's arguments, in order; their shapes\n"
          "                         go to the plugin as the compile options' argument_layouts,\n"
          "                         so a shape-polymorphic program, e.g. from jax.export with\n"
          "                         tensor<?x3xf32> arguments, runs refined to them)\n"
          "  --output-dir DIR       also write the outputs to DIR/out0.npy, DIR/out1.npy, ...\n"
          "  --repeat N             execute N times (default 1); the last run's outputs are shown\n"
          "  --timing               print compile and execute times\n"
          "  --option NAME=VALUE    a client create option (repeatable), e.g. cpu_device_count=4\n"
          "  --quiet                do not print the outputs\n"
          "  -h, --help             this help\n");
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static bool is_file(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix);
}

/* An --input argument: a .npy file (optionally FILE:TYPE) or a VALUE:TYPE literal. */
static cjrt_error *load_input(const char *arg, cjrt_array *out) {
  if (is_file(arg)) return cjrt_npy_read_file(arg, CJRT_INVALID, out);
  const char *colon = strrchr(arg, ':');
  if (colon) {
    size_t n = (size_t)(colon - arg);
    char *path = malloc(n + 1);
    if (!path) return cjrt_error_make(CJRT_RESOURCE_EXHAUSTED, "out of memory");
    memcpy(path, arg, n);
    path[n] = 0;
    cjrt_error *err = NULL;
    bool file = is_file(path);
    if (file || ends_with(path, ".npy")) {
      cjrt_dtype dt = cjrt_dtype_from_name(colon + 1);
      if (dt == CJRT_INVALID || dt == CJRT_TOKEN)
        err = cjrt_error_make(CJRT_INVALID_ARGUMENT, "'%s': unknown element type '%s'", arg, colon + 1);
      else
        err = cjrt_npy_read_file(path, dt, out);
      free(path);
      return err;
    }
    free(path);
  }
  if (ends_with(arg, ".npy")) return cjrt_npy_read_file(arg, CJRT_INVALID, out); /* says why */
  return cjrt_array_parse_typed(arg, out);
}

typedef struct {
  const char *program, *plugin, *output_dir;
  const char **inputs;
  size_t num_inputs;
  char **options;
  size_t num_options;
  long long device;
  bool has_device, timing, quiet;
  long repeat;
} run_args;

/* Reads "--name value" or "--name=value"; returns the value or NULL (and reports) if missing. */
static const char *opt_value(int argc, char **argv, int *i, const char *name) {
  const char *a = argv[*i];
  size_t n = strlen(name);
  if (!strncmp(a, name, n) && a[n] == '=') return a + n + 1;
  if (*i + 1 >= argc) {
    fprintf(stderr, "cjrt run: %s needs a value\n", name);
    return NULL;
  }
  return argv[++*i];
}

static bool is_opt(const char *a, const char *name) {
  size_t n = strlen(name);
  return !strncmp(a, name, n) && (a[n] == 0 || a[n] == '=');
}

static int parse_args(int argc, char **argv, run_args *r) {
  r->repeat = 1;
  r->inputs = calloc((size_t)argc, sizeof *r->inputs);
  r->options = calloc((size_t)argc, sizeof *r->options);
  if (!r->inputs || !r->options) return 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      run_usage(stdout);
      return -1;
    } else if (is_opt(a, "--plugin")) {
      if (!(v = opt_value(argc, argv, &i, "--plugin"))) return 2;
      r->plugin = v;
    } else if (is_opt(a, "--device")) {
      if (!(v = opt_value(argc, argv, &i, "--device"))) return 2;
      char *end;
      errno = 0;
      r->device = strtoll(v, &end, 10);
      if (!*v || *end || errno || r->device < 0) {
        fprintf(stderr, "cjrt run: --device wants a device id (a number >= 0), not '%s'\n", v);
        return 2;
      }
      r->has_device = true;
    } else if (is_opt(a, "--input")) {
      if (!(v = opt_value(argc, argv, &i, "--input"))) return 2;
      r->inputs[r->num_inputs++] = v;
    } else if (is_opt(a, "--output-dir")) {
      if (!(v = opt_value(argc, argv, &i, "--output-dir"))) return 2;
      r->output_dir = v;
    } else if (is_opt(a, "--repeat")) {
      if (!(v = opt_value(argc, argv, &i, "--repeat"))) return 2;
      char *end;
      errno = 0;
      r->repeat = strtol(v, &end, 10);
      if (!*v || *end || errno || r->repeat < 1 || r->repeat > 100000000) {
        fprintf(stderr, "cjrt run: --repeat wants a count >= 1, not '%s'\n", v);
        return 2;
      }
    } else if (is_opt(a, "--option")) {
      if (!(v = opt_value(argc, argv, &i, "--option"))) return 2;
      r->options[r->num_options++] = (char *)v;
    } else if (!strcmp(a, "--timing")) {
      r->timing = true;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
      r->quiet = true;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "cjrt run: unknown option '%s' (cjrt run --help lists them)\n", a);
      return 2;
    } else if (!r->program) {
      r->program = a;
    } else {
      fprintf(stderr, "cjrt run: more than one program ('%s' and '%s'); inputs go after --input\n",
              r->program, a);
      return 2;
    }
  }
  if (!r->program) {
    fprintf(stderr, "cjrt run: no program given\n\n");
    run_usage(stderr);
    return 2;
  }
  return 0;
}

/* Opens the plugin and creates a client with the given NAME=VALUE options (shared with
 * `cjrt info`). Prints the error and returns false on failure. */
bool cjrt_tool_open_client(const char *cmd, const char *plugin, char **options, size_t num_options,
                           cjrt_plugin **out_plugin, cjrt_client **out_client);
bool cjrt_tool_open_client(const char *cmd, const char *plugin, char **options, size_t num_options,
                           cjrt_plugin **out_plugin, cjrt_client **out_client) {
  *out_plugin = NULL;
  *out_client = NULL;
  cjrt_error *err = cjrt_plugin_open(plugin, out_plugin);
  if (err) {
    fprintf(stderr, "cjrt %s: %s\n", cmd, cjrt_error_message(err));
    cjrt_error_free(err);
    return false;
  }
  cjrt_value *vals = calloc(num_options ? num_options : 1, sizeof *vals);
  int64_t *lists = calloc((num_options ? num_options : 1) * 64, sizeof *lists);
  bool ok = vals && lists;
  if (!ok) fprintf(stderr, "cjrt %s: out of memory\n", cmd);
  for (size_t i = 0; ok && i < num_options; i++) {
    size_t len = strlen(options[i]);
    char *copy = malloc(len + 1);
    if (!copy) {
      ok = false;
      break;
    }
    memcpy(copy, options[i], len + 1);
    options[i] = copy; /* parsed in place: names and values point into it */
    err = cjrt_value_parse(copy, lists + 64 * i, 64, &vals[i]);
    if (err) {
      fprintf(stderr, "cjrt %s: %s\n", cmd, cjrt_error_message(err));
      cjrt_error_free(err);
      ok = false;
      for (size_t k = 0; k <= i; k++) free(options[k]);
      num_options = 0;
    }
  }
  if (ok) {
    err = cjrt_client_create(*out_plugin, vals, num_options, out_client);
    if (err) {
      fprintf(stderr, "cjrt %s: creating a client of %s: %s\n", cmd, cjrt_plugin_path(*out_plugin),
              cjrt_error_message(err));
      cjrt_error_free(err);
      ok = false;
    }
  }
  for (size_t i = 0; i < num_options; i++) free(options[i]);
  free(vals);
  free(lists);
  if (!ok) {
    cjrt_plugin_close(*out_plugin);
    *out_plugin = NULL;
  }
  return ok;
}

static bool write_output(const char *dir, size_t i, const cjrt_array *a) {
  char path[4096];
  snprintf(path, sizeof path, "%s/out%zu.npy", dir, i);
  cjrt_error *err = cjrt_npy_write_file(path, a, false);
  if (err) {
    fprintf(stderr, "cjrt run: %s\n", cjrt_error_message(err));
    cjrt_error_free(err);
    return false;
  }
  return true;
}

int cjrt_cmd_run(int argc, char **argv) {
  run_args r = {0};
  int rc = parse_args(argc, argv, &r);
  if (rc) {
    free(r.inputs);
    free(r.options);
    return rc < 0 ? 0 : rc;
  }
  rc = 1;
  cjrt_plugin *plugin = NULL;
  cjrt_client *client = NULL;
  cjrt_executable *exe = NULL;
  cjrt_array *arrays = calloc(r.num_inputs ? r.num_inputs : 1, sizeof *arrays);
  cjrt_buffer **args = calloc(r.num_inputs ? r.num_inputs : 1, sizeof *args);
  cjrt_buffer **outs = NULL;
  double *times = calloc((size_t)r.repeat, sizeof *times);
  size_t nout = 0;
  cjrt_error *err = NULL;
  if (!arrays || !args || !times) {
    fprintf(stderr, "cjrt run: out of memory\n");
    goto done;
  }
  if (!is_file(r.program)) {
    struct stat st;
    fprintf(stderr, "cjrt run: %s: %s\n", r.program,
            stat(r.program, &st) == 0 ? "not a regular file" : strerror(errno));
    goto done;
  }
  /* read the inputs before starting the plugin: bad input is reported fast */
  for (size_t i = 0; i < r.num_inputs; i++) {
    err = load_input(r.inputs[i], &arrays[i]);
    if (err) {
      fprintf(stderr, "cjrt run: input %zu: %s\n", i, cjrt_error_message(err));
      goto done;
    }
  }
  if (r.output_dir) {
    struct stat st;
    if (stat(r.output_dir, &st) != 0) {
      if (mkdir(r.output_dir, 0777) != 0) {
        fprintf(stderr, "cjrt run: cannot create --output-dir %s: %s\n", r.output_dir, strerror(errno));
        goto done;
      }
    } else if (!S_ISDIR(st.st_mode)) {
      fprintf(stderr, "cjrt run: --output-dir %s is not a directory\n", r.output_dir);
      goto done;
    }
  }
  if (!cjrt_tool_open_client("run", r.plugin, r.options, r.num_options, &plugin, &client)) goto done;
  cjrt_device *device = NULL;
  cjrt_compile_options copts = {0};
  int64_t device_id = r.device;
  if (r.has_device) {
    device = cjrt_client_lookup_device(client, r.device);
    if (!device || !cjrt_device_is_addressable(device)) {
      fprintf(stderr, "cjrt run: --device %lld: %s (the client has %zu addressable devices",
              r.device, device ? "not addressable from this process" : "no such device",
              cjrt_client_num_addressable_devices(client));
      size_t n = cjrt_client_num_addressable_devices(client);
      for (size_t i = 0; i < n && i < 16; i++)
        fprintf(stderr, "%s%lld", i ? ", " : ": ids ",
                (long long)cjrt_device_id(cjrt_client_addressable_device(client, i)));
      fprintf(stderr, "%s)\n", n > 16 ? ", ..." : "");
      goto done;
    }
    copts.device_ids = &device_id;
  }
  /* the inputs' shapes go along, so that a shape-polymorphic program is refined to them */
  cjrt_arg_shape *shapes = calloc(r.num_inputs ? r.num_inputs : 1, sizeof *shapes);
  if (!shapes) {
    fprintf(stderr, "cjrt run: out of memory\n");
    goto done;
  }
  for (size_t i = 0; i < r.num_inputs; i++)
    shapes[i] = (cjrt_arg_shape){arrays[i].dtype, arrays[i].rank, arrays[i].dims};
  copts.argument_shapes = shapes;
  copts.num_argument_shapes = r.num_inputs;
  /* *.pb (an xla.HloModuleProto) and *.hlo (HLO text) go to the plugin as format "hlo" */
  size_t plen = strlen(r.program);
  if ((plen > 3 && strcmp(r.program + plen - 3, ".pb") == 0) ||
      (plen > 4 && strcmp(r.program + plen - 4, ".hlo") == 0))
    copts.format = "hlo";
  double t0 = now_ms();
  err = cjrt_compile_file(client, r.program, &copts, &exe);
  free(shapes);
  double t_compile = now_ms() - t0;
  if (err) {
    fprintf(stderr, "cjrt run: %s\n", cjrt_error_message(err));
    goto done;
  }
  if (cjrt_executable_num_devices(exe) != 1) {
    fprintf(stderr, "cjrt run: the program runs on %zu devices; cjrt run drives single-device programs\n",
            cjrt_executable_num_devices(exe));
    goto done;
  }
  cjrt_device *exe_dev = cjrt_executable_device(exe, 0);
  for (size_t i = 0; i < r.num_inputs; i++) {
    err = cjrt_buffer_from_array(client, exe_dev, &arrays[i], &args[i]);
    if (err) {
      fprintf(stderr, "cjrt run: input %zu: %s\n", i, cjrt_error_message(err));
      goto done;
    }
  }
  nout = cjrt_executable_num_outputs(exe);
  outs = calloc(nout ? nout : 1, sizeof *outs);
  if (!outs) goto done;
  for (long k = 0; k < r.repeat; k++) {
    for (size_t i = 0; i < nout; i++) {
      cjrt_buffer_free(outs[i]);
      outs[i] = NULL;
    }
    double t1 = now_ms();
    err = cjrt_execute(exe, args, r.num_inputs, outs, nout);
    times[k] = now_ms() - t1;
    if (err) {
      fprintf(stderr, "cjrt run: executing %s: %s\n", r.program, cjrt_error_message(err));
      goto done;
    }
  }
  for (size_t i = 0; i < nout; i++) {
    cjrt_array a;
    err = cjrt_buffer_to_array(outs[i], &a);
    if (err) {
      fprintf(stderr, "cjrt run: reading output %zu: %s\n", i, cjrt_error_message(err));
      goto done;
    }
    if (!r.quiet) {
      char *desc = NULL, *text = NULL;
      err = cjrt_array_describe(a.dtype, a.dims, a.rank, &desc);
      if (!err) err = cjrt_array_format(&a, &text);
      if (err) {
        fprintf(stderr, "cjrt run: printing output %zu: %s\n", i, cjrt_error_message(err));
        cjrt_free(desc);
        cjrt_array_free(&a);
        goto done;
      }
      printf("out%zu: %s\n%s\n", i, desc, text);
      cjrt_free(desc);
      cjrt_free(text);
    }
    bool ok = !r.output_dir || write_output(r.output_dir, i, &a);
    cjrt_array_free(&a);
    if (!ok) goto done;
  }
  if (r.timing) {
    qsort(times, (size_t)r.repeat, sizeof *times, cmp_double);
    double sum = 0;
    for (long k = 0; k < r.repeat; k++) sum += times[k];
    printf("timing: compile %.3f ms\n", t_compile);
    if (r.repeat == 1)
      printf("timing: execute %.3f ms\n", times[0]);
    else
      printf("timing: execute x%ld: min %.3f ms, median %.3f ms, mean %.3f ms\n", r.repeat,
             times[0], times[r.repeat / 2], sum / (double)r.repeat);
  }
  rc = 0;
done:
  cjrt_error_free(err);
  if (outs)
    for (size_t i = 0; i < nout; i++) cjrt_buffer_free(outs[i]);
  free(outs);
  for (size_t i = 0; args && i < r.num_inputs; i++) cjrt_buffer_free(args[i]);
  for (size_t i = 0; arrays && i < r.num_inputs; i++) cjrt_array_free(&arrays[i]);
  free(args);
  free(arrays);
  free(times);
  cjrt_executable_free(exe);
  cjrt_client_free(client);
  cjrt_plugin_close(plugin);
  free(r.inputs);
  free(r.options);
  fflush(stdout);
  return rc;
}
