/* cjrt: multi-process clients: the key-value store a framework lends at client creation, the
 * exchange of each process's devices through it, and the optional MPI module that carries
 * cross-process collectives (src/mpi/cjrt_mpi.h).
 *
 * Set-up (cj_mp_create), in every process of a run of num_nodes processes:
 *  1. load the MPI module (CJRT_MPI_MODULE, else libcjrt_mpi.so next to the library holding this
 *     code): without it creation fails naming the path;
 *  2. publish "cjrt:<c>:topology:<process>" = "v1 devices=<n> kind=<kind>" (c: this process's
 *     count of multi-process clients made before: keys are never written twice) and read every
 *     process's key, waiting at most CJRT_KV_TIMEOUT_MS (default 60000): a process that never
 *     publishes is DEADLINE_EXCEEDED naming it (before MPI_Init, which would wait for it forever);
 *  3. initialize MPI (outside an MPI launch: FAILED_PRECONDITION saying so), then publish and
 *     read "cjrt:<c>:mpi:<process>" = "v1 mpi_rank=<r> mpi_size=<s>" the same way.
 * Global device ids are cumulative: process p's local device d has id
 * (devices of processes 0..p-1) + d.
 *
 * Ownership: cj_mp_create returns an owned cj_mp; cj_mp_free frees it (the MPI module stays
 * loaded for the life of the process: MPI cannot be initialized twice).
 */
#ifndef CJ_RUNTIME_TOPOLOGY_MP_H
#define CJ_RUNTIME_TOPOLOGY_MP_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "runtime/backend.h"

/* A key-value store shared by the processes of a run (the API layer wraps PJRT's callbacks).
 * get waits up to timeout_ms for the key and returns a malloc'ed copy of its value (*out, *len;
 * the caller frees it), or a status: DEADLINE_EXCEEDED / NOT_FOUND when it did not come. Both
 * must be callable from any thread. */
typedef struct cj_kv {
  void *ctx;
  cj_status (*get)(void *ctx, const char *key, int timeout_ms, char **out, size_t *len);
  cj_status (*put)(void *ctx, const char *key, const char *value, size_t len);
} cj_kv;

/* What one process published. */
typedef struct cj_mp_proc {
  int32_t ndevices;
  int32_t first_id; /* global id of its device 0 */
  int32_t mpi_rank;
  char kind[32];
} cj_mp_proc;

typedef struct cj_mp {
  int32_t self, nprocs;
  cj_mp_proc *procs; /* nprocs */
  int32_t total_devices;
  cj_xproc_ops ops; /* over the MPI module; ctx = this cj_mp */
  const void *module; /* const cjrt_mpi_module* */
} cj_mp;

/* The default for CJRT_KV_TIMEOUT_MS. */
#define CJ_KV_TIMEOUT_MS_DEFAULT 60000

CJ_MUST_USE cj_status cj_mp_create(const cj_kv *kv, int32_t self, int32_t nprocs, int32_t local_devices,
                       const char *kind, cj_mp **out);
void cj_mp_free(cj_mp *m); /* NULL is fine */

#endif
