/* cjrt: multi-process set-up: the MPI module, the topology exchange over the key-value store
 * (see topology_mp.h), and the cross-process operations handed to the backend. */
#include "runtime/topology_mp.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi/cjrt_mpi.h"

#define MODULE_NAME "libcjrt_mpi.so"

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int env_ms(const char *name, int dflt) {
  const char *v = getenv(name);
  if (!v || !*v) return dflt;
  char *end;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || *end || x < 0 || x > INT_MAX) return dflt;
  return (int)x;
}

/* The module, loaded once per process and kept (MPI cannot be initialized twice). */
static pthread_mutex_t module_mu = PTHREAD_MUTEX_INITIALIZER;
static const cjrt_mpi_module *module_loaded;

static CJ_MUST_USE cj_status load_module(const cjrt_mpi_module **out) {
  *out = NULL;
  pthread_mutex_lock(&module_mu);
  if (module_loaded) {
    *out = module_loaded;
    pthread_mutex_unlock(&module_mu);
    return NULL;
  }
  char path[PATH_MAX];
  const char *env = getenv("CJRT_MPI_MODULE");
  if (env && *env) {
    snprintf(path, sizeof path, "%s", env);
  } else {
    Dl_info info;
    path[0] = 0;
    if (dladdr((void *)&cj_mp_create, &info) && info.dli_fname) {
      const char *slash = strrchr(info.dli_fname, '/');
      if (slash)
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                 MODULE_NAME);
    }
    if (!path[0]) snprintf(path, sizeof path, "%s", MODULE_NAME);
  }
  cj_status st = NULL;
  /* RTLD_GLOBAL: MPI implementations load their own components, which look for libmpi's
   * symbols in the global scope. */
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char *why = dlerror();
    st = cj_status_make(CJ_FAILED_PRECONDITION,
                        "a multi-process client needs cjrt's MPI module, which could not be "
                        "loaded from %s (%s); build cjrt with MPI (libopenmpi-dev) or point "
                        "CJRT_MPI_MODULE at libcjrt_mpi.so",
                        path, why ? why : "unknown error");
  } else {
    cjrt_mpi_entry_fn entry = (cjrt_mpi_entry_fn)dlsym(h, CJRT_MPI_ENTRY);
    const cjrt_mpi_module *m = entry ? entry() : NULL;
    if (!m || m->abi != CJRT_MPI_ABI) {
      st = cj_status_make(CJ_FAILED_PRECONDITION,
                          "%s is not a cjrt MPI module of interface version %d", path,
                          CJRT_MPI_ABI);
      dlclose(h);
    } else {
      module_loaded = m;
      *out = m;
    }
  }
  pthread_mutex_unlock(&module_mu);
  return st;
}

/* ---- the operations the backend calls ---- */

enum { MP_MAX_STACK_PROCS = 64 };

/* The MPI ranks of a collective's processes: in `stack` when they fit, else malloc'ed. */
typedef struct mp_ranks {
  int32_t stack[MP_MAX_STACK_PROCS];
  int32_t *ranks;
} mp_ranks;

/* Fills r->ranks with the ranks of procs[0..n); release it with ranks_free, also on error. */
static CJ_MUST_USE cj_status ranks_of(cj_mp *m, const int32_t *procs, int32_t n, mp_ranks *r) {
  r->ranks = n <= MP_MAX_STACK_PROCS ? r->stack : malloc(sizeof(int32_t) * (size_t)n);
  if (!r->ranks) {
    r->ranks = r->stack;
    return cj_oom();
  }
  for (int32_t i = 0; i < n; i++) {
    if (procs[i] < 0 || procs[i] >= m->nprocs)
      return cj_internal("cross-process collective names process %d of %d", procs[i], m->nprocs);
    r->ranks[i] = m->procs[procs[i]].mpi_rank;
  }
  return NULL;
}

static void ranks_free(mp_ranks *r) {
  if (r->ranks != r->stack) free(r->ranks);
}

static CJ_MUST_USE cj_status op_allgatherv(void *ctx, uint64_t group, const int32_t *procs, int32_t n,
                               const void *send, size_t send_bytes, void *recv,
                               const size_t *recv_bytes) {
  cj_mp *m = ctx;
  const cjrt_mpi_module *mod = m->module;
  mp_ranks r;
  cj_status st = ranks_of(m, procs, n, &r);
  char err[256] = "";
  if (!st &&
      mod->allgatherv(group, r.ranks, n, send, send_bytes, recv, recv_bytes, err, sizeof err))
    st = cj_status_make(CJ_UNAVAILABLE, "cross-process gather over MPI: %s", err);
  ranks_free(&r);
  return st;
}

static CJ_MUST_USE cj_status op_allreduce(void *ctx, uint64_t group, const int32_t *procs, int32_t n,
                              const void *send, void *recv, int64_t count, cj_dtype dt, int op,
                              bool *done) {
  cj_mp *m = ctx;
  const cjrt_mpi_module *mod = m->module;
  *done = false;
  mp_ranks r;
  cj_status st = ranks_of(m, procs, n, &r);
  char err[256] = "";
  int supported = 0;
  if (!st && mod->allreduce(group, r.ranks, n, send, recv, count, (int)dt, op, &supported, err,
                            sizeof err))
    st = cj_status_make(CJ_UNAVAILABLE, "cross-process all-reduce over MPI: %s", err);
  ranks_free(&r);
  *done = !st && supported;
  return st;
}

/* ---- the topology exchange ---- */

/* Publishes `value` under "<prefix><self>" and reads every process's key into vals[p]
 * (malloc'ed), waiting until `deadline` (ms, now_ms's clock) in all. */
static CJ_MUST_USE cj_status kv_round(const cj_kv *kv, const char *prefix, const char *what, int32_t self,
                          int32_t nprocs, const char *value, int64_t deadline, int timeout,
                          char **vals) {
  char key[64];
  snprintf(key, sizeof key, "%s%d", prefix, self);
  cj_status st = kv->put(kv->ctx, key, value, strlen(value));
  if (st) return cj_status_annotate(st, "publishing this process's %s under '%s'", what, key);
  for (int32_t p = 0; p < nprocs; p++) {
    snprintf(key, sizeof key, "%s%d", prefix, p);
    int64_t left = deadline - now_ms();
    size_t len = 0;
    st = kv->get(kv->ctx, key, left > 0 ? (int)left : 0, &vals[p], &len);
    if (st) {
      cj_code code = cj_status_code(st);
      cj_status_ignore(st); /* its code is kept; the message below says what a user can act on */
      return cj_status_make(code == CJ_DEADLINE_EXCEEDED || code == CJ_NOT_FOUND
                                ? CJ_DEADLINE_EXCEEDED
                                : code,
                            "process %d of %d did not publish its %s (key '%s') within %d ms "
                            "(CJRT_KV_TIMEOUT_MS): it never started, failed, or was killed",
                            p, nprocs, what, key, timeout);
    }
  }
  return NULL;
}

static void free_vals(char **vals, int32_t n) {
  for (int32_t p = 0; p < n; p++) free(vals[p]);
  free(vals);
}

cj_status cj_mp_create(const cj_kv *kv, int32_t self, int32_t nprocs, int32_t local_devices,
                       const char *kind, cj_mp **out) {
  *out = NULL;
  if (!kv || !kv->get || !kv->put)
    return cj_invalid("a client of %d processes needs a key-value store", nprocs);
  /* the module first (a missing one is named at once), MPI itself only once every process has
   * come: MPI_Init waits for the whole MPI job, and a missing process must be a timeout naming
   * it, not a hang */
  const cjrt_mpi_module *mod;
  CJ_RETURN_IF_ERROR(load_module(&mod));
  cj_mp *m = calloc(1, sizeof *m);
  char **vals = calloc((size_t)nprocs, sizeof(char *));
  if (!m || !vals || !(m->procs = calloc((size_t)nprocs, sizeof *m->procs))) {
    free(vals);
    cj_mp_free(m);
    return cj_oom();
  }
  m->self = self;
  m->nprocs = nprocs;
  m->module = mod;
  m->ops.allgatherv = op_allgatherv;
  m->ops.allreduce = op_allreduce;

  /* Keys are namespaced by the client: stores such as JAX's refuse to overwrite a key, and a
   * process may create several clients (the n-th multi-process client of every process meets
   * the n-th of the others). */
  static atomic_int clients_made;
  int nth = atomic_fetch_add(&clients_made, 1);
  char prefix_topo[48], prefix_mpi[48];
  snprintf(prefix_topo, sizeof prefix_topo, "cjrt:%d:topology:", nth);
  snprintf(prefix_mpi, sizeof prefix_mpi, "cjrt:%d:mpi:", nth);
  int timeout = env_ms("CJRT_KV_TIMEOUT_MS", CJ_KV_TIMEOUT_MS_DEFAULT);
  char val[160];
  snprintf(val, sizeof val, "v1 devices=%d kind=%s", local_devices, kind);
  cj_status st = kv_round(kv, prefix_topo, "devices", self, nprocs, val,
                          now_ms() + timeout, timeout, vals);
  for (int32_t p = 0; p < nprocs && !st; p++) {
    int nd = -1;
    char k[32] = "";
    if (sscanf(vals[p], "v1 devices=%d kind=%31s", &nd, k) != 2 || nd < 1)
      st = cj_invalid("process %d published a topology cjrt cannot read: \"%.100s\"", p, vals[p]);
    m->procs[p].ndevices = nd;
    snprintf(m->procs[p].kind, sizeof m->procs[p].kind, "%s", k);
  }
  free_vals(vals, nprocs);
  vals = NULL;

  int rank = -1, size = 0;
  char err[256] = "";
  if (!st && mod->init(&rank, &size, err, sizeof err))
    st = cj_status_make(CJ_FAILED_PRECONDITION, "cannot initialize MPI (%s): %s",
                        mod->library(), err);
  if (!st && size < 2)
    st = cj_status_make(CJ_FAILED_PRECONDITION,
                        "a client of %d processes needs an MPI launch (mpirun -n %d, srun ...), "
                        "but MPI_COMM_WORLD has %d process",
                        nprocs, nprocs, size);
  /* the MPI rank of each process (JAX's process ids need not be MPI's ranks) */
  if (!st) {
    vals = calloc((size_t)nprocs, sizeof(char *));
    if (!vals) st = cj_oom();
  }
  if (!st) {
    snprintf(val, sizeof val, "v1 mpi_rank=%d mpi_size=%d", rank, size);
    st = kv_round(kv, prefix_mpi, "MPI rank", self, nprocs, val, now_ms() + timeout, timeout,
                  vals);
  }
  for (int32_t p = 0; p < nprocs && !st; p++) {
    int r = -1, sz = -1;
    if (sscanf(vals[p], "v1 mpi_rank=%d mpi_size=%d", &r, &sz) != 2 || r < 0)
      st = cj_invalid("process %d published an MPI rank cjrt cannot read: \"%.100s\"", p,
                      vals[p]);
    m->procs[p].mpi_rank = r;
  }
  if (vals) free_vals(vals, nprocs);

  /* ids, and MPI ranks that must name distinct processes of one world */
  int32_t total = 0;
  for (int32_t p = 0; p < nprocs && !st; p++) {
    if ((int64_t)total + m->procs[p].ndevices > INT32_MAX / 2) {
      st = cj_invalid("the processes have more than %d devices in all", INT32_MAX / 2);
      break;
    }
    m->procs[p].first_id = total;
    total += m->procs[p].ndevices;
    if (m->procs[p].mpi_rank >= size)
      st = cj_status_make(CJ_FAILED_PRECONDITION,
                          "process %d has MPI rank %d but this process's MPI world has %d "
                          "processes: every process must be started by the same MPI launch",
                          p, m->procs[p].mpi_rank, size);
    for (int32_t q = 0; q < p && !st; q++)
      if (m->procs[q].mpi_rank == m->procs[p].mpi_rank)
        st = cj_status_make(CJ_FAILED_PRECONDITION,
                            "processes %d and %d both have MPI rank %d: every process must be "
                            "started by the same MPI launch",
                            q, p, m->procs[p].mpi_rank);
  }
  if (st) {
    cj_mp_free(m);
    return st;
  }
  m->total_devices = total;
  *out = m;
  return NULL;
}

void cj_mp_free(cj_mp *m) {
  if (!m) return;
  free(m->procs);
  free(m);
}
