/* cjrt: executables: a compiled program (cj_executable) and its loaded form on a client
 * (cj_loaded), and executing it.
 *
 * A cj_executable is what the backend compiled, plus what it was compiled from: the compile
 * options exactly as received (GetCompileOptions), the device assignment those options ask for
 * (or none: the client's default, chosen at load), the fingerprint as text. It belongs to no
 * client: PJRT_Compile makes one without a client, PJRT_Client_Load puts it on one.
 *
 * A cj_loaded puts an executable on a client: it resolves the device assignment to devices
 * (num_replicas x num_partitions distinct devices of the client; the default assignment when
 * the executable has none), lists the addressable devices in the order Execute takes argument
 * lists (replica-major: for each replica, each partition) with their (replica, partition), and
 * keeps the assignment serialized as an xla.DeviceAssignmentProto.
 *
 * Execution (cj_loaded_execute) is asynchronous: it checks the arguments, takes one of the
 * client's in-flight slots (blocking while CJ_MAX_INFLIGHT executions are pending), decides
 * donation, creates the outputs (not ready) and returns. The work starts when every argument is
 * ready, one task per device on the client's pool, all devices of a multi-device execution
 * sharing one backend launch; each device's outputs become ready (or errors) when its share
 * finishes. Arguments' memory stays pinned until then, whatever the caller deletes meanwhile.
 *
 * Ownership: constructors return one reference (the API handle). GetExecutable-style sharing
 * retains the cj_executable; a cj_loaded retains its executable and its client; executions
 * retain the cj_loaded. Strings and arrays returned by accessors live as long as the object.
 *
 * Thread safety: everything here may be called from any thread; executables are immutable after
 * creation except the loaded one's deleted flag.
 */
#ifndef CJ_RUNTIME_EXECUTABLE_H
#define CJ_RUNTIME_EXECUTABLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "runtime/backend.h"
#include "runtime/ffi.h"
#include "runtime/buffer.h"
#include "runtime/client.h"
#include "runtime/event.h"
#include "runtime/object.h"

typedef struct cj_executable cj_executable;
typedef struct cj_loaded cj_loaded;

/* A device's place in a device assignment (same layout as PJRT_LogicalDeviceIds). */
typedef struct cj_logical_id {
  int replica;
  int partition;
} cj_logical_id;

struct cj_executable {
  cj_object hdr;
  struct cj_compiled *compiled; /* owned (runtime/compile.h): the program, its texts, options */
  cj_backend *backend;          /* compiled->backend */
  cj_program *program;          /* compiled->program */
  const cj_program_info *info;  /* &compiled->info */
  void *options; /* the serialized CompileOptionsProto as given (may be empty) */
  size_t options_len;
  int64_t num_replicas, num_partitions;
  int64_t *assignment; /* num_replicas * num_partitions global device ids, replica-major, or NULL */
  char fingerprint[33]; /* 32 hex digits, from the program's fingerprint */
  /* Short and loop-free (CJ_INLINE_COST): single-device executions whose arguments are ready
   * run on the calling thread (their events are then ready when Execute returns), and no
   * execution of it wakes a sleeping pool worker (cj_pool_set_waking). */
  bool run_inline;
  /* The cost estimate was wrong: run_inline executions kept taking long (executable.c,
   * note_short_run), so it is treated as any other program from then on. */
  atomic_int long_runs;
  atomic_bool not_short;
  /* The estimate was wrong the other way (a loop that ends after a few steps, an overestimate):
   * CJ_PROMOTE_RUNS executions in a row on a task thread each took under CJ_PROMOTE_NS, so it
   * runs as a short program from then on, until note_short_run's strikes say otherwise (then it
   * is never promoted again). */
  atomic_int quick_runs;
  atomic_bool proven_short;
  /* The program has collectives (or send/recv): its devices must meet, so per-device
   * executions (execute_device on a multi-device executable) are grouped into one launch. */
  bool has_collectives;
  /* Data the API layer derives once (output types, memory kinds, cost values ...), with its
   * destructor; set right after creation, before the executable is shared. */
  void *front;
  void (*front_free)(void *front);
};

struct cj_loaded {
  cj_object hdr;
  cj_client *client;   /* retained */
  cj_executable *exec; /* retained */
  int64_t num_replicas, num_partitions;
  int64_t *assignment;   /* num_replicas * num_partitions global device ids, replica-major */
  int ndevices;          /* this process's devices of the assignment (all in a single process) */
  cj_device **devices;   /* in argument-list order */
  cj_logical_id *logical; /* ndevices */
  /* Multi-process: where each grid position runs (xproc.proc_of owned here); xproc.ops is NULL
   * when every device of the assignment is in this process. */
  cj_xproc xproc;
  void *assignment_proto; /* serialized xla.DeviceAssignmentProto */
  size_t assignment_proto_len;
  atomic_bool deleted;
  /* Per-device executions of a program with collectives that wait for their peers (see
   * cj_loaded_execute): the open groups, oldest first, under groups_mu. */
  pthread_mutex_t groups_mu;
  struct exec_group *groups;
};

/* ---- compiling, serializing ---- */

/* Reads `code` (MLIR text or bytecode), verifies it and compiles it with `backend` under the
 * serialized CompileOptionsProto `options` (len 0: defaults). When `client` is given the device
 * assignment the options ask for is checked against it before compiling. Errors: INVALID_ARGUMENT
 * for unreadable options or programs and impossible assignments, the compiler's own code (e.g.
 * UNIMPLEMENTED naming an op) otherwise. */
CJ_MUST_USE cj_status cj_executable_compile(cj_backend *backend, cj_client *client, const void *code,
                                size_t len, const void *options, size_t options_len,
                                cj_executable **out);

/* The program forms PJRT_Program.format names: "mlir" (text or bytecode), "hlo" (a serialized
 * xla.HloModuleProto, or HLO text) and "hlo_with_config" (xla.HloModuleProtoWithConfig). */
typedef enum cj_program_format {
  CJ_PROGRAM_MLIR,
  CJ_PROGRAM_HLO,
  CJ_PROGRAM_HLO_WITH_CONFIG,
} cj_program_format;

/* cj_executable_compile for a program of the given form. */
CJ_MUST_USE cj_status cj_executable_compile_format(cj_backend *backend, cj_client *client,
                                       cj_program_format format, const void *code, size_t len,
                                       const void *options, size_t options_len,
                                       cj_executable **out);

/* A versioned byte form of ours: the backend's name, the compile options and the optimized
 * program text (malloc'ed; see executable.c). */
CJ_MUST_USE cj_status cj_executable_serialize(const cj_executable *e, void **out, size_t *len);
/* Reads cj_executable_serialize's bytes; corrupted or foreign bytes fail with INVALID_ARGUMENT.
 * `override_options` (NULL: none) replaces the stored compile options: it must ask for the same
 * replicas and partitions as the program was compiled for; its device assignment, if any, is
 * used when loading. */
CJ_MUST_USE cj_status cj_executable_deserialize(cj_backend *backend, const void *data, size_t len,
                                    const void *override_options, size_t override_len,
                                    cj_executable **out);

void cj_executable_retain(cj_executable *e);
void cj_executable_release(cj_executable *e); /* NULL is fine */
bool cj_executable_check(const void *p);
void cj_executable_set_front(cj_executable *e, void *front, void (*free_fn)(void *));

/* ---- loading ---- */

/* Puts `e` on client c. `options` (NULL: none), when given, are serialized compile options
 * whose device assignment (if any) replaces the executable's; their replica and partition counts
 * must match the program's. */
CJ_MUST_USE cj_status cj_loaded_create(cj_client *c, cj_executable *e, const void *options,
                           size_t options_len, cj_loaded **out);
void cj_loaded_retain(cj_loaded *l);
void cj_loaded_release(cj_loaded *l); /* NULL is fine */
/* Marks deleted (later executions fail) and releases the API's reference. */
void cj_loaded_destroy(cj_loaded *l);
bool cj_loaded_check(const void *p);
void cj_loaded_delete(cj_loaded *l);
bool cj_loaded_is_deleted(cj_loaded *l);

/* ---- executing ---- */

typedef struct cj_execute_options {
  /* Argument indices never to donate, even when the program allows it. */
  const int64_t *non_donatable;
  size_t num_non_donatable;
  /* FFI user data for the handlers the program calls (from the execute context; copied), or
   * NULL. At most CJ_EXEC_MAX_USER_DATA entries. */
  const cj_ffi_user_data_list *user_data;
  /* PJRT_ExecuteOptions.launch_id: per-device executions of one multi-device program that
   * share it (and the loaded executable) form one launch, matched in order (see below). */
  int64_t launch_id;
} cj_execute_options;
enum { CJ_EXEC_MAX_USER_DATA = 8 };

/* The checks cj_loaded_execute starts with, before it reads any argument: not deleted, the
 * device count (or execute_device: one of the executable's devices, unless it runs on one)
 * and the argument count fit the executable. */
CJ_MUST_USE cj_status cj_loaded_check_call(cj_loaded *l, cj_device *execute_device, size_t ndevices,
                               size_t nargs);

/* Runs the executable. args[d * nargs + i] is argument i of device d, where d indexes the
 * loaded executable's devices in order, or (execute_device != NULL, ndevices == 1) the given
 * device only.
 *
 * execute_device on a multi-device executable runs that device's share: the replica and
 * partition the device has in the assignment (a device outside it is INVALID_ARGUMENT). When the
 * program has collectives, the shares run by separate calls must meet: calls with the same
 * launch_id join one group, the n-th call for a device joining the n-th group of that launch_id
 * (so consecutive steps may reuse one id, launch_id 0 included), and a share starts once every
 * device of the assignment has joined its group. A share that waits longer than
 * CJRT_COLLECTIVE_TIMEOUT_MS (default 300000 ms) for its peers fails with DEADLINE_EXCEEDED
 * naming the devices that never came, and so does every member of that group. Grouped shares
 * never run on the calling thread. Programs without collectives run each share on its own.
 *
 * On success out[d * num_results + j]
 * receives output j of device d (new references, not ready yet) and, when out_done is not NULL,
 * out_done[d] a new reference to an event set when device d's share has finished (with its
 * failure, if any; the outputs then carry the same error). On failure nothing is written and
 * nothing is consumed or donated (donations decided before a failure are undone). */
CJ_MUST_USE cj_status cj_loaded_execute(cj_loaded *l, cj_device *execute_device, cj_buffer *const *args,
                            size_t ndevices, size_t nargs, const cj_execute_options *opts,
                            cj_buffer **out, cj_event **out_done);

/* PJRT_Device_PoisonExecution: makes the earliest unfinished execution share on device `d`
 * made with `launch_id` fail with `error` (consumed): its outputs and completion event carry it,
 * and a share that has not started yet does not run. Returns whether one was found (false when
 * every such execution has finished, or none was made). */
bool cj_device_poison(cj_device *d, int64_t launch_id, cj_status error);

#endif
