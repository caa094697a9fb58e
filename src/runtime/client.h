/* cjrt: the client and the objects it owns: devices, their descriptions, and memories.
 *
 * A client is created with a backend and a device count (by default the backend's
 * default_device_count). Devices are of the backend's device_kind and each has one memory per
 * kind the backend offers (its memory_kinds, in kind order, so memories[0] is "device", the
 * default): "device", "pinned_host", "unpinned_host". On the CPU backend all three exist and are
 * host memory, so that frameworks can place arrays by memory kind as they do on XLA's own CPU
 * client. Memory ids are unique across the client: device index * CJ_MEMORY_KIND_COUNT + kind
 * (the numbering of XLA's CPU client).
 *
 * Ownership:
 *  - cj_client_create returns one reference. Buffers, storages and transfer managers retain the
 *    client, so it is freed only when the last of them is gone (destroying the API handle first
 *    is safe).
 *  - Devices and memories are owned by the client and live as long as it; they are not counted.
 *  - Strings returned by accessors live as long as their object.
 *  - The client has one "front" slot: the API layer may attach data (with a destructor) that
 *    lives as long as the client. The runtime never looks inside it.
 *  - A memory's first member is a pointer reserved for the API layer (PJRT puts a function
 *    table there since 0.105); the runtime never reads it.
 *
 * Thread safety: everything here is immutable after creation except memory statistics (atomic)
 * and memory user data (under a per-memory lock), so any function may be called from any thread.
 */
#ifndef CJ_RUNTIME_CLIENT_H
#define CJ_RUNTIME_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "runtime/backend.h"
#include "runtime/object.h"
#include "runtime/topology_mp.h"

typedef struct cj_client cj_client;
typedef struct cj_device cj_device;
typedef struct cj_memory cj_memory;

/* The spelling of a kind ("device", ...). */
const char *cj_memory_kind_name(cj_memory_kind k);

/* Upper bound for cpu_device_count (a sanity limit, far above any real use). */
#define CJ_MAX_DEVICES 4096

typedef struct cj_client_options {
  int device_count;  /* 0 = the backend's default_device_count (the online cores on the CPU) */
  int process_index; /* this process's index in a multi-process run (0 when single) */
  int process_count; /* >= 1 */
  /* process_count > 1: the store the processes share (borrowed during cj_client_create only) */
  const cj_kv *kv;
} cj_client_options;

/* ---- memory user data (the PJRT_Memory function table's store) ---- */
typedef struct cj_user_data {
  const void *key;
  void *data;
  void (*dtor)(void *);
  struct cj_user_data *next;
} cj_user_data;

struct cj_memory {
  const void *front_vtable; /* reserved for the API layer; must stay the first member */
  cj_object hdr;
  cj_client *client;
  cj_device *device;
  cj_memory_kind kind;
  int id;
  char debug_string[96];
  char to_string[96];
  pthread_mutex_t ud_mu;
  cj_user_data *user_data;
};

/* A device description: embedded in its device, with its own tag. */
typedef struct cj_device_desc {
  cj_object hdr;
  cj_device *device;
} cj_device_desc;

struct cj_device {
  cj_object hdr;
  cj_device_desc desc;
  cj_client *client;
  int index;             /* position in the client's global device list (all_devices) */
  int id;                /* global id (equal to index) */
  int local_hardware_id; /* position among its own process's devices */
  int process_index;     /* remote devices (another process's) have no memories */
  char debug_string[64];
  char to_string[64];
  int nmemories;                             /* the kinds the backend offers */
  cj_memory *memories[CJ_MEMORY_KIND_COUNT]; /* nmemories, in kind order; [0] is the default */
  /* Statistics of the memory allocated on this device (all kinds), bytes. */
  atomic_llong bytes_in_use, peak_bytes_in_use, num_allocs, largest_alloc;
};

struct cj_client {
  cj_object hdr;
  cj_backend *backend;
  cj_client_options opts;
  int ndevices;
  cj_device **devices; /* ndevices: this process's (addressable) devices */
  /* Every process's devices in id order (== devices in a single process). A multi-process client
   * got the others' from the topology exchange (runtime/topology_mp.h). */
  int nall_devices;
  cj_device **all_devices;
  cj_mp *mp; /* multi-process state, or NULL */
  int nmemories;
  cj_memory **memories; /* ndevices * (memories per device), ordered by device then kind */
  char platform_version[96];
  int num_cores;
  void *front;
  void (*front_free)(void *front);
  /* Executions (executable.c): the thread pool, created by the first execution, and the number
   * of executions in flight (bounded: see cj_client_inflight_acquire). Guarded by exec_mu. */
  pthread_mutex_t exec_mu;
  pthread_cond_t exec_cv;
  cj_threadpool *pool;
  int inflight;
  /* Multi-process: the done events of the last execution with cross-process collectives
   * (retained; under exec_mu). The next one starts after them, so that executions reach MPI in
   * the order they were issued, which is the same in every process (executable.c). */
  struct cj_event **mp_prev;
  int mp_nprev;
};

/* The most executions a client has in flight before Execute blocks its caller. */
#define CJ_MAX_INFLIGHT 64

/* The platform name every cjrt client reports (and the name frameworks register us under). */
#define CJ_PLATFORM_NAME "cjrt"
/* The device kind string (the backend's device_kind; for NULL, a described topology's). */
const char *cj_client_device_kind(const cj_client *c);

/* Creates a client on `backend` (required: the layer above picks it, e.g. cj_backend_cpu()). */
CJ_MUST_USE cj_status cj_client_create(cj_backend *backend, const cj_client_options *opts, cj_client **out);
void cj_client_retain(cj_client *c);
void cj_client_release(cj_client *c); /* NULL is fine */
bool cj_client_check(const void *p);

/* Attaches API-layer data to the client (freed with `free_fn` when the client goes). */
void cj_client_set_front(cj_client *c, void *front, void (*free_fn)(void *));

/* Whether d belongs to this process. */
static inline bool cj_device_is_local(const cj_device *d) {
  return d->process_index == d->client->opts.process_index;
}
/* The device whose global id is `id` (any process's), or NULL. */
cj_device *cj_client_lookup_device(cj_client *c, int id);
/* The device whose local hardware id is `hw`, or NULL. */
cj_device *cj_client_lookup_local_device(cj_client *c, int hw);

/* Writes num_replicas * num_partitions device ids, replica-major, into out[0 .. n) (spanning
 * every process's devices, in id order). Fails when the counts are not positive or need more
 * devices than the client has. */
CJ_MUST_USE cj_status cj_client_default_assignment(cj_client *c, int num_replicas, int num_partitions,
                                       int *out);

bool cj_device_check(const void *p);
bool cj_device_desc_check(const void *p);
bool cj_memory_check(const void *p);

/* Memory statistics. */
typedef struct cj_memory_stats {
  int64_t bytes_in_use, peak_bytes_in_use, num_allocs, largest_alloc;
} cj_memory_stats;
void cj_device_memory_stats(cj_device *d, cj_memory_stats *out);
/* Resets the peak to the current use and the largest allocation to zero. */
void cj_device_clear_memory_stats(cj_device *d);
/* Called by storage code when device memory is allocated (+bytes) or freed (-bytes). */
void cj_device_account(cj_device *d, int64_t bytes);

/* Memory user data: get returns NULL when absent; set replaces (running the old value's
 * destructor outside the lock) and, with data == NULL, removes. */
void *cj_memory_get_user_data(cj_memory *m, const void *key);
void cj_memory_set_user_data(cj_memory *m, const void *key, void *data, void (*dtor)(void *));

/* Whether buffers of this client live in memory the host can read directly (the CPU backend). */
bool cj_client_memory_is_host(const cj_client *c);

/* ---- execution support ---- */

/* The client's thread pool (one per client, as many threads as cores), created on first use.
 * The pointer stays valid as long as the client. */
CJ_MUST_USE cj_status cj_client_pool(cj_client *c, cj_threadpool **out);

/* Takes one of the client's CJ_MAX_INFLIGHT execution slots, waiting while all are taken, except
 * on one of the client's own task threads (a callback of a finishing execution must not wait for
 * itself): there it never blocks. Pair with cj_client_inflight_release. */
void cj_client_inflight_acquire(cj_client *c);
void cj_client_inflight_release(cj_client *c);

/* Marks the calling thread as running a task of client c's pool (NULL: no longer). If the client
 * loses its last reference on such a thread, it is freed on a helper thread instead, since a
 * pool cannot be destroyed from one of its own tasks. */
void cj_client_enter_task(cj_client *c);
cj_client *cj_client_current_task(void);

#endif
