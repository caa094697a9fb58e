/* cjrt multi-process clients, through the built plugin only (dlopen + GetPjrtApi), started by
 * an MPI launcher (mpirun -n N test_mp plugin.so KVDIR [mode]); the test itself never links MPI.
 * The processes share a small file-based key-value store in KVDIR (JAX's distributed service
 * plays that part in real runs).
 *
 *   run      every process creates a client of 2 devices: the global device list (2N devices,
 *            ids, process indices, addressability), then collectives whose groups span the
 *            processes (all_reduce over MPI and over the gather path, all_gather,
 *            reduce_scatter, collective_permute, collective_broadcast, all_to_all, all_reduce
 *            within each process) with exact
 *            results; a transfer to another process's device is UNIMPLEMENTED naming it
 *   missing  num_nodes is one more than the processes launched: every process fails with
 *            DEADLINE_EXCEEDED naming the process that never came, within CJRT_KV_TIMEOUT_MS
 *   nomodule (no launcher needed) CJRT_MPI_MODULE names a missing file: creation fails naming it
 *   nolaunch two processes started without an MPI launcher (rank from CJRT_TEST_RANK): they
 *            find each other through the store, then fail saying an MPI launch is needed
 */
#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../pjrt_exec/exec_util.h"

static const char *kv_dir;

static void kv_path(char *buf, size_t cap, const char *key, size_t n) {
  int w = snprintf(buf, cap, "%s/", kv_dir);
  for (size_t i = 0; i < n && (size_t)w + 2 < cap; i++)
    buf[w++] = (key[i] == '/' ? '_' : key[i]);
  buf[w] = 0;
}

static PJRT_Error *kv_put(PJRT_KeyValuePutCallback_Args *a) {
  char path[512], tmp[600];
  kv_path(path, sizeof path, a->key, a->key_size);
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  if (access(path, F_OK) == 0) { /* as JAX's store: a key is written once */
    const char *m = "kv_put: the key exists already";
    return (*a->callback_error)(PJRT_Error_Code_ALREADY_EXISTS, m, strlen(m));
  }
  FILE *f = fopen(tmp, "wb");
  if (!f || fwrite(a->value, 1, a->value_size, f) != a->value_size || fclose(f) != 0 ||
      rename(tmp, path) != 0) {
    const char *m = "kv_put: cannot write the value file";
    return (*a->callback_error)(PJRT_Error_Code_INTERNAL, m, strlen(m));
  }
  return NULL;
}

static void kv_free_value(char *v) { free(v); }

static PJRT_Error *kv_get(PJRT_KeyValueGetCallback_Args *a) {
  char path[512];
  kv_path(path, sizeof path, a->key, a->key_size);
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    FILE *f = fopen(path, "rb");
    if (f) {
      char *buf = malloc(4096);
      size_t n = buf ? fread(buf, 1, 4096, f) : 0;
      fclose(f);
      a->value = buf;
      a->value_size = n;
      a->value_deleter_callback = kv_free_value;
      return NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
    long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
    if (ms >= a->timeout_in_ms) {
      const char *m = "kv_get: timed out";
      return (*a->callback_error)(PJRT_Error_Code_DEADLINE_EXCEEDED, m, strlen(m));
    }
    usleep(5000);
  }
}

static int env_int(const char *a, const char *b, int dflt) {
  const char *v = getenv(a);
  if (!v) v = getenv(b);
  return v ? atoi(v) : dflt;
}

static PJRT_Error *create(int node, int nodes, int ndev, PJRT_Client **out) {
  PJRT_NamedValue o[3];
  memset(o, 0, sizeof o);
  const char *names[3] = {"cpu_device_count", "node_id", "num_nodes"};
  int64_t vals[3] = {ndev, node, nodes};
  for (int i = 0; i < 3; i++) {
    o[i].struct_size = PJRT_NamedValue_STRUCT_SIZE;
    o[i].name = names[i];
    o[i].name_size = strlen(names[i]);
    o[i].type = PJRT_NamedValue_kInt64;
    o[i].int64_value = vals[i];
    o[i].value_size = 1;
  }
  ARGS(PJRT_Client_Create, a);
  a.create_options = o;
  a.num_options = 3;
  a.kv_get_callback = kv_get;
  a.kv_put_callback = kv_put;
  PJRT_Error *e = api->PJRT_Client_Create(&a);
  *out = e ? NULL : a.client;
  return e;
}

static int dev_id(PJRT_Device *d) {
  ARGS(PJRT_Device_GetDescription, g);
  g.device = d;
  if (!OK(api->PJRT_Device_GetDescription(&g))) return -1;
  ARGS(PJRT_DeviceDescription_Id, a);
  a.device_description = g.device_description;
  return OK(api->PJRT_DeviceDescription_Id(&a)) ? a.id : -1;
}

static int dev_proc(PJRT_Device *d) {
  ARGS(PJRT_Device_GetDescription, g);
  g.device = d;
  if (!OK(api->PJRT_Device_GetDescription(&g))) return -1;
  ARGS(PJRT_DeviceDescription_ProcessIndex, a);
  a.device_description = g.device_description;
  return OK(api->PJRT_DeviceDescription_ProcessIndex(&a)) ? a.process_index : -1;
}

static int dev_addressable(PJRT_Device *d) {
  ARGS(PJRT_Device_IsAddressable, a);
  a.device = d;
  return OK(api->PJRT_Device_IsAddressable(&a)) ? a.is_addressable : -1;
}

static PJRT_Client *client;
static int rank, nprocs, ndev_local = 2, ndev_total;
static PJRT_Device *local_devs[8];

/* Runs `text` (one argument, one result, both i32 or f32 of `n`/`m` elements) on the global
 * grid of ndev_total replicas; this process's device with global id g gets arg + g * n. */
static void run_check(const char *what, const char *text, PJRT_Buffer_Type t, int64_t n,
                      int64_t m, const void *arg, const void *expect) {
  pb o;
  compile_options(&o, ndev_total, 1, NULL);
  PJRT_LoadedExecutable *le = compile_ok(client, text, o.b, o.n);
  if (!le) {
    fprintf(stderr, "rank %d: %s: compile failed\n", rank, what);
    return;
  }
  PJRT_Buffer *args[8] = {0}, *outs[8] = {0};
  PJRT_Event *ev[8] = {0};
  for (int i = 0; i < ndev_local; i++) {
    int g = dev_id(local_devs[i]);
    args[i] = buffer_from_host(client, local_devs[i], t, &n, 1, (const char *)arg + (size_t)g * (size_t)n * 4);
  }
  exec_opts eo = {NULL, 0, NULL, 1};
  PJRT_Error *e = execute_raw(le, args, (size_t)ndev_local, 1, outs, 1, ev, &eo);
  if (!OK(e)) {
    fprintf(stderr, "rank %d: %s: execute failed\n", rank, what);
  } else {
    for (int i = 0; i < ndev_local; i++) {
      PJRT_Error *de = event_wait_free(ev[i]);
      if (!OK(de)) continue;
      int g = dev_id(local_devs[i]);
      void *got = calloc((size_t)m, 4);
      if (OK(buffer_to_host(outs[i], got, (size_t)m * 4, NULL))) {
        int same = memcmp(got, (const char *)expect + (size_t)g * (size_t)m * 4, (size_t)m * 4) == 0;
        CHECK_MSG(same, "rank %d: %s: device %d's result differs", rank, what, g);
      }
      free(got);
      buffer_free(outs[i]);
    }
  }
  for (int i = 0; i < ndev_local; i++) buffer_free(args[i]);
  loaded_free(le);
}

static void test_topology(void) {
  size_t n;
  PJRT_Device *const *all = client_devices(client, &n);
  CHECK_EQ_INT((int)n, ndev_total);
  for (size_t i = 0; all && i < n; i++) {
    CHECK_EQ_INT(dev_id(all[i]), (int)i);
    CHECK_EQ_INT(dev_proc(all[i]), (int)i / ndev_local);
    CHECK_EQ_INT(dev_addressable(all[i]), (int)i / ndev_local == rank);
  }
  ARGS(PJRT_Client_AddressableDevices, ad);
  ad.client = client;
  if (OK(api->PJRT_Client_AddressableDevices(&ad))) {
    CHECK_EQ_INT((int)ad.num_addressable_devices, ndev_local);
    for (size_t i = 0; i < ad.num_addressable_devices && i < 8; i++) {
      local_devs[i] = ad.addressable_devices[i];
      CHECK_EQ_INT(dev_id(local_devs[i]), rank * ndev_local + (int)i);
    }
  }
  ARGS(PJRT_Client_ProcessIndex, pi);
  pi.client = client;
  if (OK(api->PJRT_Client_ProcessIndex(&pi))) CHECK_EQ_INT(pi.process_index, rank);
  ARGS(PJRT_Client_DefaultDeviceAssignment, da);
  int assign[64];
  da.client = client;
  da.num_replicas = ndev_total;
  da.num_partitions = 1;
  da.default_assignment_size = 64;
  da.default_assignment = assign;
  if (OK(api->PJRT_Client_DefaultDeviceAssignment(&da)))
    for (int i = 0; i < ndev_total; i++) CHECK_EQ_INT(assign[i], i);
  /* another process's device: no memories, and buffers cannot go there */
  PJRT_Device *remote = all ? all[((rank + 1) % nprocs) * ndev_local] : NULL;
  ARGS(PJRT_Device_AddressableMemories, am);
  am.device = remote;
  if (OK(api->PJRT_Device_AddressableMemories(&am))) CHECK_EQ_INT((int)am.num_memories, 0);
  int32_t v = 1;
  PJRT_Buffer *b = buffer_from_host(client, local_devs[0], PJRT_Buffer_Type_S32, NULL, 0, &v);
  ARGS(PJRT_Buffer_CopyToDevice, cp);
  cp.buffer = b;
  cp.dst_device = remote;
  ERR(api->PJRT_Buffer_CopyToDevice(&cp), UNIMPLEMENTED, "cross-process");
  buffer_free(b);
}

/* Executables whose assignment has no device here, or executed on another process's device. */
static void test_remote_exec(void) {
  const char *text = "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                     "  %y = stablehlo.add %x, %x : tensor<2xf32>\n"
                     "  return %y : tensor<2xf32>\n}\n";
  int64_t other = ((rank + 1) % nprocs) * ndev_local, mine = rank * ndev_local;
  pb o;
  compile_options(&o, 1, 1, &other);
  PJRT_LoadedExecutable *le = compile_ok(client, text, o.b, o.n);
  if (le) {
    ARGS(PJRT_LoadedExecutable_AddressableDevices, ad);
    ad.executable = le;
    if (OK(api->PJRT_LoadedExecutable_AddressableDevices(&ad)))
      CHECK_EQ_INT((int)ad.num_addressable_devices, 0);
    ERR(execute_raw(le, NULL, 0, 0, NULL, 0, NULL, NULL), FAILED_PRECONDITION,
        "no device of this process");
    loaded_free(le);
  }
  int64_t two[2] = {mine, other};
  compile_options(&o, 2, 1, two);
  le = compile_ok(client, text, o.b, o.n);
  if (le) {
    size_t n;
    PJRT_Device *const *all = client_devices(client, &n);
    float v[2] = {1, 2};
    int64_t dims[1] = {2};
    PJRT_Buffer *b = buffer_from_host(client, local_devs[0], PJRT_Buffer_Type_F32, dims, 1, v);
    PJRT_Buffer *out = NULL;
    exec_opts eo = {NULL, 0, all ? all[other] : NULL, 0};
    ERR(execute_raw(le, &b, 1, 1, &out, 1, NULL, &eo), INVALID_ARGUMENT, "belongs to process");
    buffer_free(b);
    loaded_free(le);
  }
}

/* Independent executions in flight at once whose collectives share a device group: each must
 * get its own sums (MPI matches by order; the processes must not interleave them differently). */
static void test_concurrent_executions(void) {
  enum { E = 4096, K = 4 };
  int N = ndev_total;
  char groups[256] = "", text[2048];
  for (int d = 0, w = 0; d < N; d++) w += snprintf(groups + w, sizeof groups - (size_t)w, "%s%d", d ? ", " : "", d);
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxi32>) -> tensor<%dxi32> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%x) ({\n  ^bb0(%%a: tensor<i32>, %%b: tensor<i32>):\n"
           "    %%s = stablehlo.add %%a, %%b : tensor<i32>\n    stablehlo.return %%s : tensor<i32>\n"
           "  }) {replica_groups = dense<[[%s]]> : tensor<1x%dxi64>} : (tensor<%dxi32>) -> "
           "tensor<%dxi32>\n  return %%r : tensor<%dxi32>\n}\n",
           E, E, groups, N, E, E, E);
  pb o;
  compile_options(&o, N, 1, NULL);
  PJRT_LoadedExecutable *le = compile_ok(client, text, o.b, o.n);
  if (!le) return;
  int32_t *x = calloc(sizeof(int32_t), E);
  PJRT_Buffer *args[K][8] = {{0}}, *outs[K][8] = {{0}};
  PJRT_Event *ev[K][8] = {{0}};
  int64_t n = E;
  for (int round = 0; round < 3; round++) {
    for (int k = 0; k < K; k++)
      for (int i = 0; i < ndev_local; i++) {
        int g = dev_id(local_devs[i]);
        for (int j = 0; j < E; j++) x[j] = (k + 1) * (g + 1) + j;
        args[k][i] = buffer_from_host(client, local_devs[i], PJRT_Buffer_Type_S32, &n, 1, x);
      }
    exec_opts eo = {NULL, 0, NULL, 1};
    for (int k = 0; k < K; k++) OK(execute_raw(le, args[k], (size_t)ndev_local, 1, outs[k], 1, ev[k], &eo));
    int bad = 0;
    for (int k = 0; k < K; k++)
      for (int i = 0; i < ndev_local; i++) {
        if (!OK(event_wait_free(ev[k][i]))) continue;
        if (OK(buffer_to_host(outs[k][i], x, sizeof(int32_t) * E, NULL)))
          for (int j = 0; j < E; j++) /* sum over g of (k+1)(g+1) + j */
            bad += x[j] != (k + 1) * N * (N + 1) / 2 + N * j;
        buffer_free(outs[k][i]);
        buffer_free(args[k][i]);
      }
    CHECK_MSG(bad == 0, "rank %d: concurrent executions: %d wrong elements", rank, bad);
  }
  free(x);
  loaded_free(le);
}

static const char kSum[] = "({\n  ^bb0(%%a: tensor<%s>, %%b: tensor<%s>):\n"
                           "    %%s = stablehlo.%s %%a, %%b : tensor<%s>\n"
                           "    stablehlo.return %%s : tensor<%s>\n  })";

static void test_collectives(void) {
  int N = ndev_total;
  enum { E = 1000 };
  char body[512], text[4096];
  /* all_reduce(add) of i32 across every device (MPI_Allreduce) */
  int32_t *xi = calloc(sizeof(int32_t), E * (size_t)N), *ri = calloc(sizeof(int32_t), E * (size_t)N);
  float *xf = calloc(sizeof(float), E * (size_t)N), *rf = calloc(sizeof(float), E * (size_t)N);
  for (int d = 0; d < N; d++)
    for (int i = 0; i < E; i++) {
      xi[d * E + i] = 1000 * d + i;
      xf[d * E + i] = (float)((d * 7 + i) % 13) - 6.0f;
    }
  for (int d = 0; d < N; d++)
    for (int i = 0; i < E; i++) {
      int32_t s = 0;
      for (int q = 0; q < N; q++) s += xi[q * E + i];
      ri[d * E + i] = s;
    }
  snprintf(body, sizeof body, "({\n  ^bb0(%%a: tensor<i32>, %%b: tensor<i32>):\n"
                              "    %%s = stablehlo.add %%a, %%b : tensor<i32>\n"
                              "    stablehlo.return %%s : tensor<i32>\n  })");
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxi32>) -> tensor<%dxi32> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = dense<[[%s]]> : "
           "tensor<1x%dxi64>} : (tensor<%dxi32>) -> tensor<%dxi32>\n"
           "  return %%r : tensor<%dxi32>\n}\n",
           E, E, body, N == 4 ? "0, 1, 2, 3" : N == 8 ? "0, 1, 2, 3, 4, 5, 6, 7" : "0, 1", N, E,
           E, E);
  run_check("all_reduce add i32", text, PJRT_Buffer_Type_S32, E, E, xi, ri);
  (void)kSum;

  /* all_reduce(maximum) of f32: MPI is not asked (NaN rules): the gather path */
  for (int d = 0; d < N; d++)
    for (int i = 0; i < E; i++) {
      float mx = xf[i];
      for (int q = 1; q < N; q++) mx = xf[q * E + i] > mx ? xf[q * E + i] : mx;
      rf[d * E + i] = mx;
    }
  snprintf(body, sizeof body, "({\n  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
                              "    %%s = stablehlo.maximum %%a, %%b : tensor<f32>\n"
                              "    stablehlo.return %%s : tensor<f32>\n  })");
  char groups[256] = "";
  for (int d = 0, w = 0; d < N; d++) w += snprintf(groups + w, sizeof groups - (size_t)w, "%s%d", d ? ", " : "", d);
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxf32>) -> tensor<%dxf32> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = dense<[[%s]]> : "
           "tensor<1x%dxi64>} : (tensor<%dxf32>) -> tensor<%dxf32>\n"
           "  return %%r : tensor<%dxf32>\n}\n",
           E, E, body, groups, N, E, E, E);
  run_check("all_reduce max f32", text, PJRT_Buffer_Type_F32, E, E, xf, rf);

  /* all_reduce(add) in groups within each process ({0,1}, {2,3}, ...): no MPI at all */
  char pg[512] = "";
  for (int p = 0, w = 0; p < nprocs; p++)
    w += snprintf(pg + w, sizeof pg - (size_t)w, "%s[%d, %d]", p ? ", " : "", 2 * p, 2 * p + 1);
  for (int d = 0; d < N; d++)
    for (int i = 0; i < E; i++) {
      int b = d & ~1;
      ri[d * E + i] = xi[b * E + i] + xi[(b + 1) * E + i];
    }
  snprintf(body, sizeof body, "({\n  ^bb0(%%a: tensor<i32>, %%b: tensor<i32>):\n"
                              "    %%s = stablehlo.add %%a, %%b : tensor<i32>\n"
                              "    stablehlo.return %%s : tensor<i32>\n  })");
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxi32>) -> tensor<%dxi32> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = dense<[%s]> : "
           "tensor<%dx2xi64>} : (tensor<%dxi32>) -> tensor<%dxi32>\n"
           "  return %%r : tensor<%dxi32>\n}\n",
           E, E, body, pg, nprocs, E, E, E);
  run_check("all_reduce within processes", text, PJRT_Buffer_Type_S32, E, E, xi, ri);

  /* two groups that span the same processes ({0, 2, ..} and {1, 3, ..}): each process has a
   * member of both, whose exchanges must not be mixed up (run a few times: it is a race) */
  char eo_groups[512] = "";
  {
    int w = snprintf(eo_groups, sizeof eo_groups, "[");
    for (int d = 0; d < N; d += 2) w += snprintf(eo_groups + w, sizeof eo_groups - (size_t)w, "%s%d", d ? ", " : "", d);
    w += snprintf(eo_groups + w, sizeof eo_groups - (size_t)w, "], [");
    for (int d = 1; d < N; d += 2) w += snprintf(eo_groups + w, sizeof eo_groups - (size_t)w, "%s%d", d > 1 ? ", " : "", d);
    snprintf(eo_groups + w, sizeof eo_groups - (size_t)w, "]");
  }
  for (int d = 0; d < N; d++)
    for (int i = 0; i < E; i++) {
      int32_t sum = 0;
      for (int q = d % 2; q < N; q += 2) sum += xi[q * E + i];
      ri[d * E + i] = sum;
    }
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxi32>) -> tensor<%dxi32> {\n"
           "  %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = dense<[%s]> : "
           "tensor<2x%dxi64>} : (tensor<%dxi32>) -> tensor<%dxi32>\n"
           "  return %%r : tensor<%dxi32>\n}\n",
           E, E, body, eo_groups, N / 2, E, E, E);
  for (int rep = 0; rep < 5; rep++)
    run_check("all_reduce in interleaved groups", text, PJRT_Buffer_Type_S32, E, E, xi, ri);
  /* the same through the gather path (a maximum of f32) */
  for (int d = 0; d < N; d++)
    for (int i = 0; i < E; i++) {
      float mx = xf[(d % 2) * E + i];
      for (int q = d % 2; q < N; q += 2) mx = xf[q * E + i] > mx ? xf[q * E + i] : mx;
      rf[d * E + i] = mx;
    }
  {
    char fbody[512];
    snprintf(fbody, sizeof fbody, "({\n  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
                                  "    %%s = stablehlo.maximum %%a, %%b : tensor<f32>\n"
                                  "    stablehlo.return %%s : tensor<f32>\n  })");
    snprintf(text, sizeof text,
             "func.func @main(%%x: tensor<%dxf32>) -> tensor<%dxf32> {\n"
             "  %%r = \"stablehlo.all_reduce\"(%%x) %s {replica_groups = dense<[%s]> : "
             "tensor<2x%dxi64>} : (tensor<%dxf32>) -> tensor<%dxf32>\n"
             "  return %%r : tensor<%dxf32>\n}\n",
             E, E, fbody, eo_groups, N / 2, E, E, E);
  }
  for (int rep = 0; rep < 5; rep++)
    run_check("all_reduce max in interleaved groups", text, PJRT_Buffer_Type_F32, E, E, xf, rf);

  /* all_gather of tensor<4xi32> -> tensor<4Nxi32> */
  enum { G = 4 };
  int32_t *gi = calloc(sizeof(int32_t), G * (size_t)N), *go = calloc(sizeof(int32_t), G * (size_t)N * (size_t)N);
  for (int d = 0; d < N; d++)
    for (int i = 0; i < G; i++) gi[d * G + i] = 100 * d + i;
  for (int d = 0; d < N; d++) memcpy(go + (size_t)d * G * (size_t)N, gi, sizeof(int32_t) * G * (size_t)N);
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxi32>) -> tensor<%dxi32> {\n"
           "  %%r = \"stablehlo.all_gather\"(%%x) {all_gather_dim = 0 : i64, replica_groups = "
           "dense<[[%s]]> : tensor<1x%dxi64>} : (tensor<%dxi32>) -> tensor<%dxi32>\n"
           "  return %%r : tensor<%dxi32>\n}\n",
           G, G * N, groups, N, G, G * N, G * N);
  run_check("all_gather", text, PJRT_Buffer_Type_S32, G, (int64_t)G * N, gi, go);

  /* reduce_scatter(add): tensor<2N x i32> -> tensor<2xi32> */
  int32_t *si = calloc(sizeof(int32_t), 2 * (size_t)N * (size_t)N), *so = calloc(sizeof(int32_t), 2 * (size_t)N);
  for (int d = 0; d < N; d++)
    for (int i = 0; i < 2 * N; i++) si[d * 2 * N + i] = 10 * d + i;
  for (int d = 0; d < N; d++)
    for (int j = 0; j < 2; j++) {
      int32_t s = 0;
      for (int q = 0; q < N; q++) s += si[q * 2 * N + 2 * d + j];
      so[d * 2 + j] = s;
    }
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxi32>) -> tensor<2xi32> {\n"
           "  %%r = \"stablehlo.reduce_scatter\"(%%x) %s {scatter_dimension = 0 : i64, "
           "replica_groups = dense<[[%s]]> : tensor<1x%dxi64>} : (tensor<%dxi32>) -> "
           "tensor<2xi32>\n"
           "  return %%r : tensor<2xi32>\n}\n",
           2 * N, body, groups, N, 2 * N);
  run_check("reduce_scatter", text, PJRT_Buffer_Type_S32, 2 * N, 2, si, so);

  /* collective_permute: device d sends to d + 1 (mod N); device 0 receives from N - 1 */
  char pairs[512] = "";
  for (int d = 0, w = 0; d < N; d++)
    w += snprintf(pairs + w, sizeof pairs - (size_t)w, "%s[%d, %d]", d ? ", " : "", d, (d + 1) % N);
  int32_t *po = calloc(sizeof(int32_t), G * (size_t)N);
  for (int d = 0; d < N; d++) memcpy(po + d * G, gi + ((d + N - 1) % N) * G, sizeof(int32_t) * G);
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxi32>) -> tensor<%dxi32> {\n"
           "  %%r = \"stablehlo.collective_permute\"(%%x) {source_target_pairs = dense<[%s]> : "
           "tensor<%dx2xi64>} : (tensor<%dxi32>) -> tensor<%dxi32>\n"
           "  return %%r : tensor<%dxi32>\n}\n",
           G, G, pairs, N, G, G, G);
  run_check("collective_permute", text, PJRT_Buffer_Type_S32, G, G, gi, po);
  /* collective_broadcast from replica N-1 (the last process) to replica 0; the rest: zeros */
  int32_t *bo = calloc(sizeof(int32_t), G * (size_t)N);
  memcpy(bo + (N - 1) * G, gi + (N - 1) * G, sizeof(int32_t) * G);
  memcpy(bo, gi + (N - 1) * G, sizeof(int32_t) * G);
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxi32>) -> tensor<%dxi32> {\n"
           "  %%r = \"stablehlo.collective_broadcast\"(%%x) {replica_groups = dense<[[%d, 0]]> : "
           "tensor<1x2xi64>} : (tensor<%dxi32>) -> tensor<%dxi32>\n"
           "  return %%r : tensor<%dxi32>\n}\n",
           G, G, N - 1, G, G, G);
  run_check("collective_broadcast", text, PJRT_Buffer_Type_S32, G, G, gi, bo);

  /* all_to_all over every device: tensor<2N> split in N parts of 2, part d to device d */
  int32_t *ai = calloc(sizeof(int32_t), 2 * (size_t)N * (size_t)N), *ao = calloc(sizeof(int32_t), 2 * (size_t)N * (size_t)N);
  for (int d = 0; d < N; d++)
    for (int i = 0; i < 2 * N; i++) ai[d * 2 * N + i] = 1000 * d + i;
  for (int d = 0; d < N; d++)
    for (int q = 0; q < N; q++)
      for (int c = 0; c < 2; c++) ao[d * 2 * N + 2 * q + c] = ai[q * 2 * N + 2 * d + c];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxi32>) -> tensor<%dxi32> {\n"
           "  %%r = \"stablehlo.all_to_all\"(%%x) {split_dimension = 0 : i64, concat_dimension = 0 "
           ": i64, split_count = %d : i64, replica_groups = dense<[[%s]]> : tensor<1x%dxi64>} : "
           "(tensor<%dxi32>) -> tensor<%dxi32>\n"
           "  return %%r : tensor<%dxi32>\n}\n",
           2 * N, 2 * N, N, groups, N, 2 * N, 2 * N, 2 * N);
  run_check("all_to_all", text, PJRT_Buffer_Type_S32, 2 * N, 2 * N, ai, ao);
  free(bo);
  free(ai);
  free(ao);
  free(xi);
  free(ri);
  free(xf);
  free(rf);
  free(gi);
  free(go);
  free(si);
  free(so);
  free(po);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s plugin.so KVDIR [run|missing|nomodule]\n", argv[0]);
    return 2;
  }
  kv_dir = argv[2];
  const char *mode = argc > 3 ? argv[3] : "run";
  void *h = plugin_open(argv[1]);
  if (!h) return 1;
  rank = env_int("OMPI_COMM_WORLD_RANK", "PMI_RANK", 0);
  nprocs = env_int("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", 1);
  ndev_total = ndev_local * nprocs;
  char name[64];
  snprintf(name, sizeof name, "test_mp %s rank %d", mode, rank);
  if (strcmp(mode, "nomodule") == 0) {
    setenv("CJRT_MPI_MODULE", "/nonexistent/libcjrt_mpi.so", 1);
    PJRT_Client *c;
    ERR(create(0, 2, 2, &c), FAILED_PRECONDITION, "/nonexistent/libcjrt_mpi.so");
    return check_report(name);
  }
  if (strcmp(mode, "nolaunch") == 0) {
    PJRT_Client *c;
    ERR(create(env_int("CJRT_TEST_RANK", "CJRT_TEST_RANK", 0), 2, 2, &c), FAILED_PRECONDITION,
        "needs an MPI launch");
    return check_report(name);
  }
  if (strcmp(mode, "missing") == 0) {
    setenv("CJRT_KV_TIMEOUT_MS", "1500", 1);
    PJRT_Client *c;
    char needle[64];
    snprintf(needle, sizeof needle, "process %d of %d did not publish", nprocs, nprocs + 1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ERR(create(rank, nprocs + 1, 2, &c), DEADLINE_EXCEEDED, needle);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK_MSG(t1.tv_sec - t0.tv_sec < 30, "the timeout took %ld s", (long)(t1.tv_sec - t0.tv_sec));
    return check_report(name);
  }
  if (!OK(create(rank, nprocs, ndev_local, &client))) return check_report(name);
  test_topology();
  test_remote_exec();
  test_collectives();
  test_concurrent_executions();
  client_free(client);
  /* a second client in the same processes (its keys must not collide with the first's) */
  if (OK(create(rank, nprocs, ndev_local, &client))) {
    test_topology();
    client_free(client);
  }
  return check_report(name);
}
