/* bench_mpi_allreduce: an osu-style comparison of a 64 MB f32 all-reduce across MPI processes
 * through cjrt (one device per process, the plugin loaded with dlopen, a stablehlo.all_reduce
 * whose group spans the processes) against MPI_Allreduce called directly, same buffers sizes,
 * same processes, same run. Prints the median time of each and their ratio.
 *
 *   mpirun --allow-run-as-root --oversubscribe -n 2 build/bench_mpi_allreduce \
 *       build/pjrt_c_api_cjrt_plugin.so [MB] [iterations]
 */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../tests/pjrt_exec/exec_util.h"

static char kv_dir[256];

static void kv_path(char *buf, size_t cap, const char *key, size_t n) {
  int w = snprintf(buf, cap, "%s/", kv_dir);
  for (size_t i = 0; i < n && (size_t)w + 2 < cap; i++) buf[w++] = key[i] == '/' ? '_' : key[i];
  buf[w] = 0;
}

static PJRT_Error *kv_put(PJRT_KeyValuePutCallback_Args *a) {
  char path[512], tmp[600];
  kv_path(path, sizeof path, a->key, a->key_size);
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return (*a->callback_error)(PJRT_Error_Code_INTERNAL, "kv_put", 6);
  fwrite(a->value, 1, a->value_size, f);
  fclose(f);
  rename(tmp, path);
  return NULL;
}

static void kv_free_value(char *v) { free(v); }

static PJRT_Error *kv_get(PJRT_KeyValueGetCallback_Args *a) {
  char path[512];
  kv_path(path, sizeof path, a->key, a->key_size);
  for (int waited = 0;; waited += 5) {
    FILE *f = fopen(path, "rb");
    if (f) {
      char *buf = malloc(4096);
      a->value_size = fread(buf, 1, 4096, f);
      fclose(f);
      a->value = buf;
      a->value_deleter_callback = kv_free_value;
      return NULL;
    }
    if (waited >= a->timeout_in_ms)
      return (*a->callback_error)(PJRT_Error_Code_DEADLINE_EXCEEDED, "kv_get", 6);
    usleep(5000);
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (!rank) fprintf(stderr, "usage: %s plugin.so [MB] [iterations]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  double mb = argc > 2 ? atof(argv[2]) : 64;
  int iters = argc > 3 ? atoi(argv[3]) : 10;
  int64_t n = (int64_t)(mb * 1024 * 1024 / 4);
  if (!rank) {
    snprintf(kv_dir, sizeof kv_dir, "/tmp/cjrt-bench-kv-XXXXXX");
    if (!mkdtemp(kv_dir)) kv_dir[0] = 0;
  }
  MPI_Bcast(kv_dir, sizeof kv_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (!plugin_open(argv[1])) MPI_Abort(MPI_COMM_WORLD, 1);

  /* the client: one device per process */
  PJRT_NamedValue o[3];
  memset(o, 0, sizeof o);
  const char *names[3] = {"cpu_device_count", "node_id", "num_nodes"};
  int64_t vals[3] = {1, rank, size};
  for (int i = 0; i < 3; i++) {
    o[i].struct_size = PJRT_NamedValue_STRUCT_SIZE;
    o[i].name = names[i];
    o[i].name_size = strlen(names[i]);
    o[i].type = PJRT_NamedValue_kInt64;
    o[i].int64_value = vals[i];
    o[i].value_size = 1;
  }
  ARGS(PJRT_Client_Create, ca);
  ca.create_options = o;
  ca.num_options = 3;
  ca.kv_get_callback = kv_get;
  ca.kv_put_callback = kv_put;
  PJRT_Error *e = api->PJRT_Client_Create(&ca);
  if (e) {
    fprintf(stderr, "rank %d: %s\n", rank, err_msg(e));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  PJRT_Client *client = ca.client;
  ARGS(PJRT_Client_AddressableDevices, ad);
  ad.client = client;
  api->PJRT_Client_AddressableDevices(&ad);
  PJRT_Device *dev = ad.addressable_devices[0];

  char groups[1024] = "";
  for (int d = 0, w = 0; d < size; d++)
    w += snprintf(groups + w, sizeof groups - (size_t)w, "%s%d", d ? ", " : "", d);
  char text[2048];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%lldxf32>) -> tensor<%lldxf32> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%x) ({\n"
           "  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
           "    %%s = stablehlo.add %%a, %%b : tensor<f32>\n"
           "    stablehlo.return %%s : tensor<f32>\n"
           "  }) {replica_groups = dense<[[%s]]> : tensor<1x%dxi64>} : (tensor<%lldxf32>) -> "
           "tensor<%lldxf32>\n"
           "  return %%r : tensor<%lldxf32>\n}\n",
           (long long)n, (long long)n, groups, size, (long long)n, (long long)n, (long long)n);
  pb opts;
  compile_options(&opts, size, 1, NULL);
  PJRT_LoadedExecutable *le;
  e = compile_err(client, text, opts.b, opts.n, &le);
  if (e) {
    fprintf(stderr, "rank %d: compile: %s\n", rank, err_msg(e));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  float *host = malloc(sizeof(float) * (size_t)n), *recv = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++) host[i] = (float)((i + rank) % 7);
  PJRT_Buffer *arg = buffer_from_host(client, dev, PJRT_Buffer_Type_F32, &n, 1, host);

  double *tc = malloc(sizeof(double) * (size_t)(iters + 2));
  double *tm = malloc(sizeof(double) * (size_t)(iters + 2));
  int bad = 0;
  for (int it = 0; it < iters + 2; it++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    PJRT_Buffer *out = NULL;
    PJRT_Event *ev = NULL;
    exec_opts eo = {NULL, 0, NULL, 1};
    e = execute_raw(le, &arg, 1, 1, &out, 1, &ev, &eo);
    if (!e) e = event_wait_free(ev);
    tc[it] = now() - t0;
    if (e) {
      fprintf(stderr, "rank %d: execute: %s\n", rank, err_msg(e));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (it == 0) { /* check the answer once */
      buffer_to_host(out, recv, sizeof(float) * (size_t)n, NULL);
      for (int64_t i = 0; i < n && !bad; i += 4099) {
        float want = 0;
        for (int q = 0; q < size; q++) want += (float)((i + q) % 7);
        bad = recv[i] != want;
      }
    }
    buffer_free(out);

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = now();
    MPI_Allreduce(host, recv, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    tm[it] = now() - t0;
  }
  /* the slowest process's times decide; drop the two warm-up runs */
  MPI_Allreduce(MPI_IN_PLACE, tc, iters + 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, tm, iters + 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  qsort(tc + 2, (size_t)iters, sizeof(double), cmp);
  qsort(tm + 2, (size_t)iters, sizeof(double), cmp);
  double c = tc[2 + iters / 2], m = tm[2 + iters / 2];
  if (!rank)
    printf("all-reduce of %.0f MB f32 across %d processes (median of %d): cjrt %.2f ms, "
           "MPI_Allreduce %.2f ms, ratio %.2fx%s\n",
           mb, size, iters, c * 1e3, m * 1e3, c / m, bad ? "  WRONG RESULT" : "");
  buffer_free(arg);
  loaded_free(le);
  client_free(client);
  free(host);
  free(recv);
  free(tc);
  free(tm);
  MPI_Barrier(MPI_COMM_WORLD);
  if (!rank && kv_dir[0]) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", kv_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", kv_dir);
  }
  MPI_Finalize();
  return bad;
}
