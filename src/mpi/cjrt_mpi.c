/* cjrt: the MPI module (see cjrt_mpi.h): cross-process collectives for multi-process clients.
 * Built only when CMake finds MPI; loaded by the plugin at run time. Communicators are made once
 * per device group and set of ranks (MPI_Comm_create_group, collective over those ranks only)
 * and cached: groups over the same processes get different communicators, so that their
 * collectives, started from different threads in an order that differs between processes, are
 * never matched with each other. With MPI_THREAD_MULTIPLE they run concurrently; with less, one
 * at a time (which can deadlock when two groups span the same processes: init says so). */
#include "mpi/cjrt_mpi.h"

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;        /* the cache */
static pthread_mutex_t serial_mu = PTHREAD_MUTEX_INITIALIZER; /* calls, below THREAD_MULTIPLE */
static int we_initialized, multiple = 1;

typedef struct comm_entry {
  uint64_t group;
  int32_t n;
  int32_t *ranks;
  MPI_Comm comm;
  struct comm_entry *next;
} comm_entry;
static comm_entry *comms; /* under mu; lives until MPI_Finalize */

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (err && errlen) vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return 1;
}

static int mpi_fail(char *err, size_t errlen, const char *what, int rc) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "error %d", rc);
  return fail(err, errlen, "%s failed: %s", what, msg);
}

static void finalize_at_exit(void) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (fin) return;
  pthread_mutex_lock(&mu);
  for (comm_entry *e = comms, *next; e; e = next) {
    next = e->next;
    MPI_Comm_free(&e->comm);
    free(e->ranks);
    free(e);
  }
  comms = NULL;
  pthread_mutex_unlock(&mu);
  MPI_Finalize();
}

static int m_init(int *rank, int *size, char *err, size_t errlen) {
  pthread_mutex_lock(&mu);
  int inited = 0, rc = MPI_SUCCESS;
  MPI_Initialized(&inited);
  if (inited) { /* the host program's MPI: its thread level decides */
    int level = 0;
    MPI_Query_thread(&level);
    multiple = level >= MPI_THREAD_MULTIPLE;
  } else {
    int provided = 0;
    rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    if (rc == MPI_SUCCESS) multiple = provided >= MPI_THREAD_MULTIPLE;
    if (rc == MPI_SUCCESS) {
      we_initialized = 1;
      atexit(finalize_at_exit);
      /* errors come back as codes, never as an abort of the host program */
      MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
  }
  pthread_mutex_unlock(&mu);
  if (rc != MPI_SUCCESS) return mpi_fail(err, errlen, "MPI_Init_thread", rc);
  rc = MPI_Comm_rank(MPI_COMM_WORLD, rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(MPI_COMM_WORLD, size);
  if (rc != MPI_SUCCESS) return mpi_fail(err, errlen, "MPI_Comm_rank/size", rc);
  return 0;
}

/* The communicator of `group` over ranks[0..n) (in that order), made once and cached. The cache
 * lock is not held while a communicator is made: making one is collective over its ranks, and
 * another group's creation may be what a peer process is busy with. */
static int get_comm(uint64_t group, const int32_t *ranks, int32_t n, MPI_Comm *out, char *err,
                    size_t errlen) {
  pthread_mutex_lock(&mu);
  for (comm_entry *e = comms; e; e = e->next)
    if (e->group == group && e->n == n &&
        memcmp(e->ranks, ranks, sizeof(int32_t) * (size_t)n) == 0) {
      *out = e->comm;
      pthread_mutex_unlock(&mu);
      return 0;
    }
  pthread_mutex_unlock(&mu);
  comm_entry *e = calloc(1, sizeof *e);
  int *r = malloc(sizeof(int) * (size_t)n);
  if (e) e->ranks = malloc(sizeof(int32_t) * (size_t)n);
  if (!e || !e->ranks || !r) {
    if (e) free(e->ranks);
    free(e);
    free(r);
    return fail(err, errlen, "out of memory");
  }
  memcpy(e->ranks, ranks, sizeof(int32_t) * (size_t)n);
  e->n = n;
  e->group = group;
  for (int32_t i = 0; i < n; i++) r[i] = ranks[i];
  MPI_Group world, g;
  /* the tag keeps concurrent creations of different groups apart */
  int tag = (int)((group ^ (group >> 15) ^ (group >> 30) ^ (group >> 45)) & 0x7fff);
  int rc = MPI_Comm_group(MPI_COMM_WORLD, &world);
  if (rc == MPI_SUCCESS) rc = MPI_Group_incl(world, n, r, &g);
  if (rc == MPI_SUCCESS) {
    rc = MPI_Comm_create_group(MPI_COMM_WORLD, g, tag, &e->comm);
    MPI_Group_free(&g);
  }
  MPI_Group_free(&world);
  free(r);
  if (rc != MPI_SUCCESS) {
    free(e->ranks);
    free(e);
    return mpi_fail(err, errlen, "MPI_Comm_create_group", rc);
  }
  MPI_Comm_set_errhandler(e->comm, MPI_ERRORS_RETURN);
  pthread_mutex_lock(&mu);
  e->next = comms;
  comms = e;
  pthread_mutex_unlock(&mu);
  *out = e->comm;
  return 0;
}

static int m_allgatherv(uint64_t group, const int32_t *ranks, int32_t n, const void *send,
                        size_t send_bytes, void *recv, const size_t *recv_bytes, char *err,
                        size_t errlen) {
  int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
  if (!counts || !displs) {
    free(counts);
    free(displs);
    return fail(err, errlen, "out of memory");
  }
  size_t off = 0;
  for (int32_t i = 0; i < n; i++) {
    if (recv_bytes[i] > INT_MAX || off > INT_MAX) {
      free(counts);
      free(displs);
      return fail(err, errlen, "a gather of %zu bytes is larger than MPI's int counts allow",
                  off + recv_bytes[i]);
    }
    counts[i] = (int)recv_bytes[i];
    displs[i] = (int)off;
    off += recv_bytes[i];
  }
  if (!multiple) pthread_mutex_lock(&serial_mu);
  MPI_Comm comm;
  int r = get_comm(group, ranks, n, &comm, err, errlen);
  if (!r) {
    int rc = MPI_Allgatherv(send, (int)send_bytes, MPI_BYTE, recv, counts, displs, MPI_BYTE, comm);
    if (rc != MPI_SUCCESS) r = mpi_fail(err, errlen, "MPI_Allgatherv", rc);
  }
  if (!multiple) pthread_mutex_unlock(&serial_mu);
  free(counts);
  free(displs);
  return r;
}

/* cj_dtype numbers (= PJRT_Buffer_Type) */
static MPI_Datatype type_of(int dt, int *is_float) {
  *is_float = 0;
  switch (dt) {
    case 1: return MPI_C_BOOL; /* PRED: one byte */
    case 2: return MPI_INT8_T;
    case 3: return MPI_INT16_T;
    case 4: return MPI_INT32_T;
    case 5: return MPI_INT64_T;
    case 6: return MPI_UINT8_T;
    case 7: return MPI_UINT16_T;
    case 8: return MPI_UINT32_T;
    case 9: return MPI_UINT64_T;
    case 11: *is_float = 1; return MPI_FLOAT;
    case 12: *is_float = 1; return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
  }
}

static int m_allreduce(uint64_t group, const int32_t *ranks, int32_t n, const void *send, void *recv,
                       int64_t count, int dtype, int op, int *supported, char *err,
                       size_t errlen) {
  *supported = 0;
  int is_float;
  MPI_Datatype t = type_of(dtype, &is_float);
  if (t == MPI_DATATYPE_NULL || count > INT_MAX) return 0;
  MPI_Op o;
  switch (op) { /* CJ_XRED_* */
    case 0: o = dtype == 1 ? MPI_LOR : MPI_SUM; break;
    case 1: o = dtype == 1 ? MPI_LAND : MPI_PROD; break;
    /* float max/min: NaN rules differ between MPI implementations; the caller gathers */
    case 2: if (is_float) return 0; o = dtype == 1 ? MPI_LOR : MPI_MAX; break;
    case 3: if (is_float) return 0; o = dtype == 1 ? MPI_LAND : MPI_MIN; break;
    case 4: if (is_float) return 0; o = dtype == 1 ? MPI_LAND : MPI_BAND; break;
    case 5: if (is_float) return 0; o = dtype == 1 ? MPI_LOR : MPI_BOR; break;
    case 6: if (is_float) return 0; o = dtype == 1 ? MPI_LXOR : MPI_BXOR; break;
    default: return 0;
  }
  *supported = 1;
  if (!multiple) pthread_mutex_lock(&serial_mu);
  MPI_Comm comm;
  int r = get_comm(group, ranks, n, &comm, err, errlen);
  if (!r) {
    int rc = MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, t, o, comm);
    if (rc != MPI_SUCCESS) r = mpi_fail(err, errlen, "MPI_Allreduce", rc);
  }
  if (!multiple) pthread_mutex_unlock(&serial_mu);
  return r;
}

static const char *m_library(void) {
  static char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  if (!v[0] && MPI_Get_library_version(v, &len) != MPI_SUCCESS) snprintf(v, sizeof v, "MPI");
  char *nl = strchr(v, '\n');
  if (nl) *nl = 0;
  return v;
}

static const cjrt_mpi_module module = {CJRT_MPI_ABI, m_init, m_allgatherv, m_allreduce,
                                       m_library};

__attribute__((visibility("default"))) const cjrt_mpi_module *cjrt_mpi_get_module(void);
__attribute__((visibility("default"))) const cjrt_mpi_module *cjrt_mpi_get_module(void) {
  return &module;
}
