/* cjrt: device topologies: which devices a program may run on, without a client.
 *
 * A topology lists devices (global id, process index) in a fixed order and names the platform.
 * It exists in two forms:
 *  - described: made from a name and counts (cj_topology_create) or from bytes
 *    (cj_topology_deserialize); it owns device descriptions that belong to no client
 *    (cj_device structs whose `client` is NULL and whose own header is not a device tag, so only
 *    their embedded cj_device_desc is ever handed out). Programs are compiled against it ahead
 *    of time (PJRT_Compile) and loaded on a client later.
 *  - a client's (cj_topology_for_client): it borrows the client's devices and their
 *    descriptions; the client's owner keeps it and frees it before the client goes.
 *
 * Every topology also keeps the process table a framework reports for a distributed run
 * (PJRT_Client_UpdateGlobalProcessInfo): one entry per task, replaced wholesale by each update.
 *
 * Serialized form (versioned, little-endian, checksummed):
 *   "CJRTTOPO" | u32 version (1) | u32 name length | name | u32 process count |
 *   u32 device count | device count x (i32 id, i32 process index) | u64 FNV-1a of all before.
 * The name is the platform's ("cjrt"). Deserialize rejects anything else with
 * INVALID_ARGUMENT, never reads past the given bytes.
 *
 * Ownership: create/deserialize/for_client return an owned topology (cj_topology_free).
 * Strings and arrays returned by accessors live as long as the topology. The topology has one
 * "front" slot for API-layer data, freed with it.
 *
 * Thread safety: immutable after creation except the process table (under a lock).
 */
#ifndef CJ_RUNTIME_TOPOLOGY_H
#define CJ_RUNTIME_TOPOLOGY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/status.h"
#include "runtime/client.h"
#include "runtime/object.h"

typedef struct cj_topology cj_topology;

/* One process of a distributed run, as reported by the framework (PJRT_ProcessInfo). */
typedef struct cj_process_info {
  int task_id;
  uint64_t incarnation_id;
  int state;      /* PJRT_ProcessState's values: 0 unspecified .. 4 error */
  int error_code; /* absl code, 0 = OK */
  /* Given to set_processes: any bytes (NULL when the size is 0). Kept and returned by
   * cj_topology_process: an owned NUL-terminated copy. */
  char *error_message;
  size_t error_message_size;
} cj_process_info;

struct cj_topology {
  cj_object hdr;
  cj_client *client;       /* the client whose devices these are (not retained), or NULL */
  int process_count;
  int ndevices;
  cj_device *owned;        /* described topologies: ndevices descriptions; NULL for a client's */
  cj_device_desc **descs;  /* ndevices, in order */
  char platform_version[96];
  void *front;
  void (*front_free)(void *front);
  pthread_mutex_t proc_mu;
  cj_process_info *procs; /* nprocs, by the order they were given */
  size_t nprocs;
};

/* The kind of a described topology's devices: the topologies cj_topology_create describes are
 * the CPU backend's (their names are "", "cjrt" and "cpu"). */
#define CJ_TOPOLOGY_DEVICE_KIND "cpu"

/* The topology names cj_topology_create accepts: "" (the default), "cjrt" and "cpu". */
#define CJ_TOPOLOGY_NAMES "\"\", \"cjrt\", \"cpu\""

/* A described topology of `process_count` processes with `devices_per_process` devices each
 * (0: the number of online cores, as a client would have). Device ids are numbered
 * process-major: process p's k-th device is p * devices_per_process + k. */
CJ_MUST_USE cj_status cj_topology_create(const char *name, size_t name_len, int devices_per_process,
                             int process_count, cj_topology **out);
/* The topology of a client's devices. */
CJ_MUST_USE cj_status cj_topology_for_client(cj_client *c, cj_topology **out);
void cj_topology_free(cj_topology *t); /* NULL is fine */
bool cj_topology_check(const void *p);
/* Attaches API-layer data (freed with `free_fn` when the topology goes). */
void cj_topology_set_front(cj_topology *t, void *front, void (*free_fn)(void *));

/* The description of the device with global id `id`, or NULL. */
cj_device_desc *cj_topology_lookup(const cj_topology *t, int64_t id);

/* Serialized bytes (malloc'ed) and reading them back. */
CJ_MUST_USE cj_status cj_topology_serialize(const cj_topology *t, void **out, size_t *len);
CJ_MUST_USE cj_status cj_topology_deserialize(const void *data, size_t len, cj_topology **out);
/* A 64-bit fingerprint of what the topology describes (equal for equal serialized forms). */
uint64_t cj_topology_fingerprint(const cj_topology *t);

/* Whether a program compiled for num_replicas x num_partitions devices with the given global
 * device ids (replica-major; NULL: the default assignment, the first devices in order) fits the
 * topology. INVALID_ARGUMENT naming what does not. */
CJ_MUST_USE cj_status cj_topology_check_assignment(const cj_topology *t, int64_t num_replicas,
                                       int64_t num_partitions, const int64_t *ids);

/* The memory-space kind ids a device of the topology has (cj_memory_kind values), *out_n of
 * them; the array is static. */
const int *cj_topology_memory_kind_ids(size_t *out_n);
/* The canonical on-device shape of an array of `dt` and `dims` in memory-space kind `kind_id`,
 * as a serialized xla.ShapeProto (malloc'ed): the dense row-major layout cjrt uses everywhere. */
CJ_MUST_USE cj_status cj_topology_canonical_shape(const cj_topology *t, int kind_id, cj_dtype dt,
                                      const int64_t *dims, size_t rank, void **out, size_t *len);

/* Replaces the process table with `n` entries (copied); fails (changing nothing) on a negative
 * or repeated task id, or a state outside 0..4. */
CJ_MUST_USE cj_status cj_topology_set_processes(cj_topology *t, const cj_process_info *infos, size_t n);
/* A copy of the entry for task `task_id` (its message owned by the caller), or NOT_FOUND. */
CJ_MUST_USE cj_status cj_topology_process(cj_topology *t, int task_id, cj_process_info *out);

#endif
