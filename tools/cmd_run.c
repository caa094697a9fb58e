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
#include "frontend/frontend.h"
#include "ir/ir.h"

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
          "  --device N             run on the device with id N (default: the first addressable;\n"
          "                         single-device programs only)\n"
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
          "  --replicas N, --partitions N\n"
          "                         run on N replicas / partitions (default: what the program\n"
          "                         says: mhlo.num_replicas / mhlo.num_partitions on the module)\n"
          "  --quiet                do not print the outputs\n"
          "  -h, --help             this help\n"
          "\n"
          "Programs for several devices (mhlo.num_replicas = R, mhlo.num_partitions = P on the\n"
          "MLIR module, text or bytecode; replica_count= / num_partitions= on an HLO text\n"
          "module's first line; HLO protos do not say: use --replicas/--partitions) run on\n"
          "R x P devices: the client is created with cpu_device_count=R*P unless --option\n"
          "sets it (--device is for single-device programs). Inputs are global arrays: an\n"
          "argument the compiled program shards (mhlo.spmd_parameters_shardings in the plugin's\n"
          "optimized program, as cjrt's SPMD partitioner writes it) is split into each\n"
          "partition's tile; every other argument goes whole to every device. Outputs are\n"
          "global too: sharded results (mhlo.spmd_output_sharding) are assembled from their\n"
          "tiles, others are device 0's. With several replicas the outputs shown are replica\n"
          "0's (stderr says so). A plugin whose optimized program carries no such shardings\n"
          "gets every input whole and shows device 0's outputs.\n");
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
  long long replicas, partitions; /* --replicas / --partitions (0: what the program says) */
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
    } else if (is_opt(a, "--replicas") || is_opt(a, "--partitions")) {
      bool rep = is_opt(a, "--replicas");
      const char *name = rep ? "--replicas" : "--partitions";
      if (!(v = opt_value(argc, argv, &i, name))) return 2;
      char *end;
      errno = 0;
      long long n = strtoll(v, &end, 10);
      if (!*v || *end || errno || n < 1 || n > 4096) {
        fprintf(stderr, "cjrt run: %s wants a count >= 1, not '%s'\n", name, v);
        return 2;
      }
      if (rep)
        r->replicas = n;
      else
        r->partitions = n;
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


/* ---- programs for several devices ---- */

/* The integer after `name` [spaces] '=' [spaces] in text (first occurrence), or -1. */
static long long find_count(const char *text, size_t len, const char *name) {
  size_t n = strlen(name);
  for (size_t i = 0; i + n < len; i++) {
    if (memcmp(text + i, name, n) != 0) continue;
    size_t k = i + n;
    while (k < len && text[k] == ' ') k++;
    if (k >= len || text[k] != '=') continue;
    k++;
    while (k < len && text[k] == ' ') k++;
    long long v = 0;
    size_t d0 = k;
    while (k < len && text[k] >= '0' && text[k] <= '9' && v < 1000000) v = v * 10 + (text[k++] - '0');
    if (k > d0) return v;
  }
  return -1;
}

/* The replicas and partitions a program asks for: mhlo.num_replicas / mhlo.num_partitions on
 * an MLIR module (text or bytecode; JAX writes them), replica_count= / num_partitions= on an
 * HLO text module's first line. 0 where the program does not say (HLO protos never do: their
 * counts live in the compile options). The module is read with cjrt's own reader, here only
 * for these two numbers; a program it cannot read is left to the plugin to judge. */
static void program_counts(const char *data, size_t len, const char *path, long long *nr,
                           long long *np) {
  *nr = *np = 0;
  if (!data || ends_with(path, ".pb")) return;
  if (ends_with(path, ".hlo")) {
    const char *nl = memchr(data, '\n', len);
    size_t first = nl ? (size_t)(nl - data) : len;
    long long r = find_count(data, first, "replica_count"), p = find_count(data, first, "num_partitions");
    *nr = r > 0 ? r : 0;
    *np = p > 0 ? p : 0;
    return;
  }
  cj_module *m = NULL;
  cj_status st = cj_read_program(data, len, path, &m);
  if (st) {
    cj_status_free(st);
    return;
  }
  int64_t v;
  if (cj_attr_get_i64(cj_module_attr(m, "mhlo.num_replicas"), &v) && v > 0) *nr = v;
  if (cj_attr_get_i64(cj_module_attr(m, "mhlo.num_partitions"), &v) && v > 0) *np = v;
  cj_module_free(m);
}

/* An HloSharding, as cjrt's compiler writes them for @main's arguments and results
 * (mhlo.spmd_parameters_shardings / mhlo.spmd_output_sharding): "{replicated}", "{maximal
 * device=N}" (both: whole on every device) or "{devices=[t0,...]ids [last_tile_dim_replicate]}"
 * with ids explicit or "<=[n]". Tile dims past the array's rank replicate. */
enum { MAX_TILE_DIMS = 16 };
typedef struct hsharding {
  bool split;
  int ndims;                    /* tile dims, the replicated one included */
  int64_t tiles[MAX_TILE_DIMS];
  int64_t *ids;                 /* product(tiles) partition ids, row-major over the tiles */
  int64_t nids;
} hsharding;

static void hsharding_free(hsharding *h) {
  free(h->ids);
  memset(h, 0, sizeof *h);
}

/* Parses the sharding text t[0..n) into *h. */
static cjrt_error *hsharding_parse(const char *t, size_t n, hsharding *h) {
  memset(h, 0, sizeof *h);
  char buf[4096];
  if (n >= sizeof buf) n = sizeof buf - 1;
  memcpy(buf, t, n);
  buf[n] = 0;
  const char *d = strstr(buf, "devices=[");
  if (!d || strstr(buf, "last_tile_dims") || strstr(buf, "manual")) {
    if (strstr(buf, "replicated") || strstr(buf, "maximal")) return NULL;
    return cjrt_error_make(CJRT_UNIMPLEMENTED, "sharding '%s' is not one cjrt run can split", buf);
  }
  d += 9;
  int64_t total = 1;
  while (*d && *d != ']') {
    if (h->ndims == MAX_TILE_DIMS)
      return cjrt_error_make(CJRT_UNIMPLEMENTED, "sharding '%s' has too many tile dims", buf);
    char *end;
    long long v = strtoll(d, &end, 10);
    if (end == d || v < 1 || v > 1 << 20)
      return cjrt_error_make(CJRT_INVALID_ARGUMENT, "cannot read sharding '%s'", buf);
    h->tiles[h->ndims++] = v;
    total *= v;
    d = end;
    if (*d == ',') d++;
  }
  if (*d != ']') return cjrt_error_make(CJRT_INVALID_ARGUMENT, "cannot read sharding '%s'", buf);
  d++;
  h->ids = calloc((size_t)total, sizeof *h->ids);
  if (!h->ids) return cjrt_error_make(CJRT_RESOURCE_EXHAUSTED, "out of memory");
  h->nids = total;
  if (!strncmp(d, "<=[", 3)) {
    char *end;
    long long v = strtoll(d + 3, &end, 10);
    if (v != total || *end != ']') {
      hsharding_free(h);
      return cjrt_error_make(CJRT_UNIMPLEMENTED, "sharding '%s': only plain <=[n] iota lists are read", buf);
    }
    for (int64_t i = 0; i < total; i++) h->ids[i] = i;
  } else {
    for (int64_t i = 0; i < total; i++) {
      char *end;
      h->ids[i] = strtoll(d, &end, 10);
      if (end == d) {
        hsharding_free(h);
        return cjrt_error_make(CJRT_INVALID_ARGUMENT, "sharding '%s' lists fewer than %lld devices", buf,
                               (long long)total);
      }
      d = end;
      if (*d == ',') d++;
    }
  }
  /* (last_tile_dim_replicate: the last tile dim is past the array's rank and only replicates) */
  h->split = total > 1;
  return NULL;
}

/* Where partition p's tile starts, per array dim (rank dims; tile dims past the rank replicate),
 * and how big a tile is. False when p is not in the sharding or a dim does not split evenly. */
static bool tile_of(const hsharding *h, int64_t p, size_t rank, const int64_t *global,
                    int64_t *off, int64_t *size) {
  int64_t at = -1;
  for (int64_t i = 0; i < h->nids && at < 0; i++)
    if (h->ids[i] == p) at = i;
  if (at < 0 || (size_t)h->ndims < rank) return false;
  int64_t idx[MAX_TILE_DIMS];
  for (int k = h->ndims - 1; k >= 0; k--) {
    idx[k] = at % h->tiles[k];
    at /= h->tiles[k];
  }
  for (size_t k = 0; k < rank; k++) {
    if (global[k] % h->tiles[k]) return false;
    size[k] = global[k] / h->tiles[k];
    off[k] = idx[k] * size[k];
  }
  return true;
}

/* Copies the block [off, off+size) of a row-major array of dims `global` between `whole` and
 * the dense `part` (to_part: whole -> part). */
static void copy_block(unsigned char *whole, unsigned char *part, size_t rank, const int64_t *global,
                       const int64_t *off, const int64_t *size, size_t es, bool to_part) {
  if (rank == 0) {
    if (to_part) memcpy(part, whole, es);
    else memcpy(whole, part, es);
    return;
  }
  int64_t count = 1;
  for (size_t k = 0; k < rank; k++) count *= size[k];
  if (count == 0) return;
  size_t run = (size_t)size[rank - 1] * es;
  int64_t rows = count / size[rank - 1];
  int64_t idx[64] = {0};
  for (int64_t r = 0; r < rows; r++) {
    int64_t lin = 0;
    for (size_t k = 0; k < rank; k++) lin = lin * global[k] + off[k] + (k + 1 < rank ? idx[k] : 0);
    unsigned char *w = whole + (size_t)lin * es, *q = part + (size_t)r * run;
    if (to_part) memcpy(q, w, run);
    else memcpy(w, q, run);
    for (int k = (int)rank - 2; k >= 0; k--) {
      if (++idx[k] < size[k]) break;
      idx[k] = 0;
    }
  }
}

/* The quoted strings of the array attribute `name = ["...", "..."]` in text: *out (owned, each
 * malloc'ed) and *count; none found: 0. */
static void find_string_array(const char *text, const char *name, char ***out, size_t *count) {
  *out = NULL;
  *count = 0;
  const char *a = text ? strstr(text, name) : NULL;
  if (!a) return;
  a += strlen(name);
  while (*a == ' ') a++;
  if (*a++ != '=') return;
  while (*a == ' ') a++;
  bool list = *a == '[';
  if (list) a++;
  size_t cap = 0;
  for (;;) {
    while (*a == ' ' || *a == ',') a++;
    if (*a != '"') break;
    const char *e = strchr(a + 1, '"');
    if (!e) break;
    if (*count == cap) {
      cap = cap ? cap * 2 : 8;
      char **n = realloc(*out, cap * sizeof *n);
      if (!n) break;
      *out = n;
    }
    size_t n = (size_t)(e - a - 1);
    char *sv = malloc(n + 1);
    if (!sv) break;
    memcpy(sv, a + 1, n);
    sv[n] = 0;
    (*out)[(*count)++] = sv;
    a = e + 1;
    if (!list) break;
  }
}

static void free_strings(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* Splits an mhlo.spmd_output_sharding ("{...}" for one result, "{{...}, {...}}" for several)
 * into one sharding per result. False when the count does not fit. */
static bool split_output_shardings(const char *t, size_t nout, hsharding *out, cjrt_error **err) {
  *err = NULL;
  size_t n = strlen(t);
  if (nout == 1) {
    *err = hsharding_parse(t, n, &out[0]);
    return *err == NULL;
  }
  if (n < 2 || t[0] != '{' || t[n - 1] != '}') return false;
  size_t j = 0;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 1; i + 1 < n; i++) {
    if (t[i] == '{') {
      if (depth++ == 0) start = i;
    } else if (t[i] == '}' && --depth == 0) {
      if (j == nout) return false;
      *err = hsharding_parse(t + start, i + 1 - start, &out[j++]);
      if (*err) return false;
    }
  }
  return j == nout;
}

/* Reads a whole file (NULL on failure). */
static char *read_file(const char *path, size_t *len) {
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 65536;
      char *nb = realloc(buf, cap + 1);
      if (!nb) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  fclose(f);
  buf[n] = 0;
  *len = n;
  return buf;
}

/* Compiles r->program for nr x np devices (0 x 0: as the plugin chooses, one device). */
static cjrt_error *compile_program(cjrt_client *client, const run_args *r, const cjrt_array *arrays,
                                   long long nr, long long np, const int64_t *device_id,
                                   cjrt_executable **exe) {
  cjrt_compile_options copts = {0};
  copts.device_ids = device_id;
  copts.num_replicas = nr;
  copts.num_partitions = np;
  copts.use_spmd_partitioning = np > 1;
  /* the inputs' (global) shapes go along, so that a shape-polymorphic program is refined */
  cjrt_arg_shape *shapes = calloc(r->num_inputs ? r->num_inputs : 1, sizeof *shapes);
  if (!shapes) return cjrt_error_make(CJRT_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < r->num_inputs; i++)
    shapes[i] = (cjrt_arg_shape){arrays[i].dtype, arrays[i].rank, arrays[i].dims};
  copts.argument_shapes = shapes;
  copts.num_argument_shapes = r->num_inputs;
  /* *.pb (an xla.HloModuleProto) and *.hlo (HLO text) go to the plugin as format "hlo" */
  if (ends_with(r->program, ".pb") || ends_with(r->program, ".hlo")) copts.format = "hlo";
  cjrt_error *err = cjrt_compile_file(client, r->program, &copts, exe);
  free(shapes);
  return err;
}

/* Whether the user set the client's device count. */
static bool has_device_count_option(const run_args *r) {
  for (size_t i = 0; i < r->num_options; i++)
    if (!strncmp(r->options[i], "cpu_device_count=", 17)) return true;
  return false;
}

/* Opens the plugin and a client with at least `ndev` devices (cpu_device_count=ndev is added
 * to the options when the program needs several and the user did not say). */
static bool open_for(run_args *r, long long ndev, cjrt_plugin **plugin, cjrt_client **client) {
  char count[64];
  /* cjrt_tool_open_client replaces the entries of the list it is given: give it a copy */
  char **opts = calloc(r->num_options + 1, sizeof *opts);
  if (!opts) {
    fprintf(stderr, "cjrt run: out of memory\n");
    return false;
  }
  size_t n = r->num_options;
  memcpy(opts, r->options, n * sizeof *opts);
  if (ndev > 1 && !has_device_count_option(r)) {
    snprintf(count, sizeof count, "cpu_device_count=%lld", ndev);
    opts[n++] = count;
  }
  bool ok = cjrt_tool_open_client("run", r->plugin, opts, n, plugin, client);
  free(opts);
  return ok;
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
  cjrt_buffer **args = NULL;
  cjrt_buffer **outs = NULL;
  double *times = calloc((size_t)r.repeat, sizeof *times);
  size_t nout = 0, ndev = 0;
  cjrt_error *err = NULL;
  char *program_text = NULL, *optimized = NULL;
  char **arg_sh_text = NULL;
  size_t n_arg_sh = 0;
  hsharding *arg_sh = NULL, *out_sh = NULL;
  if (!arrays || !times) {
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
  /* How many devices: --replicas / --partitions, else what the program says. */
  long long nr = r.replicas, np = r.partitions;
  if (!nr || !np) {
    size_t len = 0;
    program_text = read_file(r.program, &len);
    long long tr, tp;
    program_counts(program_text, len, r.program, &tr, &tp);
    if (!nr) nr = tr;
    if (!np) np = tp;
    free(program_text);
    program_text = NULL;
  }
  if (nr < 1) nr = 1;
  if (np < 1) np = 1;
  if (nr > 65536 || np > 65536) {
    fprintf(stderr, "cjrt run: the program asks for %lld replicas x %lld partitions\n", nr, np);
    goto done;
  }
  if (nr * np > 1 && r.has_device) {
    fprintf(stderr, "cjrt run: --device picks one device, but the program runs on %lld replicas x "
            "%lld partitions\n", nr, np);
    rc = 2;
    goto done;
  }
  if (!open_for(&r, nr * np, &plugin, &client)) goto done;
  int64_t device_id = r.device;
  if (r.has_device) {
    cjrt_device *device = cjrt_client_lookup_device(client, r.device);
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
  }
  bool multi = nr * np > 1;
  double t0 = now_ms();
  err = compile_program(client, &r, arrays, multi ? nr : 0, multi ? np : 0,
                        r.has_device ? &device_id : NULL, &exe);
  double t_compile = now_ms() - t0;
  if (err) {
    fprintf(stderr, "cjrt run: %s\n", cjrt_error_message(err));
    goto done;
  }
  ndev = cjrt_executable_num_devices(exe);
  nout = cjrt_executable_num_outputs(exe);
  if (ndev < 1 || (multi && ndev != (size_t)(nr * np))) {
    fprintf(stderr, "cjrt run: the executable runs on %zu devices; cjrt run expected %lld\n", ndev,
            multi ? nr * np : 1);
    goto done;
  }
  if (ndev > 1 && nr * np != (long long)ndev) { /* --replicas/--partitions unset, plugin chose */
    nr = (long long)ndev;
    np = 1;
  }
  /* the shardings of @main's arguments and results on the devices (partitioned programs) */
  arg_sh = calloc(r.num_inputs ? r.num_inputs : 1, sizeof *arg_sh);
  out_sh = calloc(nout ? nout : 1, sizeof *out_sh);
  if (!arg_sh || !out_sh) {
    fprintf(stderr, "cjrt run: out of memory\n");
    goto done;
  }
  if (np > 1) {
    cjrt_error *oe = cjrt_executable_optimized_program(exe, &optimized, NULL, NULL);
    cjrt_error_free(oe); /* no optimized program: everything is taken as replicated */
    find_string_array(optimized, "mhlo.spmd_parameters_shardings", &arg_sh_text, &n_arg_sh);
    for (size_t i = 0; i < n_arg_sh && i < r.num_inputs; i++) {
      err = hsharding_parse(arg_sh_text[i], strlen(arg_sh_text[i]), &arg_sh[i]);
      if (err) {
        fprintf(stderr, "cjrt run: input %zu: %s\n", i, cjrt_error_message(err));
        goto done;
      }
    }
    char **ot = NULL;
    size_t no = 0;
    find_string_array(optimized, "mhlo.spmd_output_sharding", &ot, &no);
    if (no == 1 && !split_output_shardings(ot[0], nout, out_sh, &err)) {
      fprintf(stderr, "cjrt run: the program's output sharding '%s' does not fit its %zu outputs%s%s\n",
              ot[0], nout, err ? ": " : "", err ? cjrt_error_message(err) : "");
      free_strings(ot, no);
      goto done;
    }
    free_strings(ot, no);
  }
  /* the arguments: per device, the whole input or its shard */
  args = calloc(ndev * (r.num_inputs ? r.num_inputs : 1), sizeof *args);
  if (!args) {
    fprintf(stderr, "cjrt run: out of memory\n");
    goto done;
  }
  for (size_t d = 0; d < ndev; d++) {
    cjrt_device *dev = cjrt_executable_device(exe, d);
    int64_t part = (int64_t)d % np; /* devices are replica-major */
    for (size_t i = 0; i < r.num_inputs; i++) {
      cjrt_array *a = &arrays[i];
      if (!arg_sh[i].split) {
        err = cjrt_buffer_from_array(client, dev, a, &args[d * r.num_inputs + i]);
      } else {
        int64_t off[MAX_TILE_DIMS], size[MAX_TILE_DIMS];
        if (!tile_of(&arg_sh[i], part, a->rank, a->dims, off, size)) {
          char *desc = NULL;
          cjrt_error_free(cjrt_array_describe(a->dtype, a->dims, a->rank, &desc));
          fprintf(stderr, "cjrt run: input %zu (%s) cannot be split as the program's sharding "
                  "'%s' asks for partition %lld\n", i, desc ? desc : "?", arg_sh_text[i],
                  (long long)part);
          cjrt_free(desc);
          goto done;
        }
        cjrt_array piece = {0};
        err = cjrt_array_alloc(a->dtype, size, a->rank, &piece);
        if (!err) {
          copy_block(a->data, piece.data, a->rank, a->dims, off, size, cjrt_dtype_size(a->dtype), true);
          err = cjrt_buffer_from_array(client, dev, &piece, &args[d * r.num_inputs + i]);
        }
        cjrt_array_free(&piece);
      }
      if (err) {
        fprintf(stderr, "cjrt run: input %zu: %s\n", i, cjrt_error_message(err));
        goto done;
      }
    }
  }
  outs = calloc(ndev * (nout ? nout : 1), sizeof *outs);
  if (!outs) goto done;
  for (long k = 0; k < r.repeat; k++) {
    for (size_t i = 0; i < ndev * nout; i++) {
      cjrt_buffer_free(outs[i]);
      outs[i] = NULL;
    }
    double t1 = now_ms();
    err = cjrt_execute_sharded(exe, ndev, args, r.num_inputs, outs, nout);
    times[k] = now_ms() - t1;
    if (err) {
      fprintf(stderr, "cjrt run: executing %s: %s\n", r.program, cjrt_error_message(err));
      goto done;
    }
  }
  if (nr > 1 && !r.quiet)
    fprintf(stderr, "cjrt run: the program ran %lld replicas; the outputs are replica 0's\n", nr);
  for (size_t i = 0; i < nout; i++) {
    cjrt_array a = {0};
    if (!out_sh[i].split) {
      err = cjrt_buffer_to_array(outs[i], &a); /* replica 0, partition 0 */
    } else {
      /* assembled from replica 0's tiles: the first device holding each */
      cjrt_array piece = {0};
      err = cjrt_buffer_to_array(outs[i], &piece);
      int64_t global[MAX_TILE_DIMS];
      bool fits = !err && piece.rank <= MAX_TILE_DIMS && (size_t)out_sh[i].ndims >= piece.rank;
      for (size_t k = 0; fits && k < piece.rank; k++) global[k] = piece.dims[k] * out_sh[i].tiles[k];
      if (!err && !fits)
        err = cjrt_error_make(CJRT_INVALID_ARGUMENT, "its sharding does not fit its rank %zu", piece.rank);
      if (!err) err = cjrt_array_alloc(piece.dtype, global, piece.rank, &a);
      size_t es = cjrt_dtype_size(piece.dtype);
      cjrt_array_free(&piece);
      for (int64_t p = 0; !err && p < np; p++) {
        int64_t off[MAX_TILE_DIMS], size[MAX_TILE_DIMS];
        if (!tile_of(&out_sh[i], p, a.rank, a.dims, off, size)) continue;
        err = cjrt_buffer_to_array(outs[(size_t)p * nout + i], &piece);
        if (!err) copy_block(a.data, piece.data, a.rank, a.dims, off, size, es, false);
        cjrt_array_free(&piece);
      }
    }
    if (err) {
      fprintf(stderr, "cjrt run: reading output %zu: %s\n", i, cjrt_error_message(err));
      cjrt_array_free(&a);
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
    for (size_t i = 0; i < ndev * nout; i++) cjrt_buffer_free(outs[i]);
  free(outs);
  for (size_t i = 0; args && i < ndev * r.num_inputs; i++) cjrt_buffer_free(args[i]);
  for (size_t i = 0; arrays && i < r.num_inputs; i++) cjrt_array_free(&arrays[i]);
  for (size_t i = 0; arg_sh && i < r.num_inputs; i++) hsharding_free(&arg_sh[i]);
  for (size_t i = 0; out_sh && i < nout; i++) hsharding_free(&out_sh[i]);
  free(arg_sh);
  free(out_sh);
  free_strings(arg_sh_text, n_arg_sh);
  cjrt_free(optimized);
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
