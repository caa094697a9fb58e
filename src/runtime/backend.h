/* cjrt: the interface between the runtime (clients, buffers, executables) and a backend (the CPU
 * backend in src/cpu/ now; the reference interpreter in src/reference/; CUDA later).
 *
 * Who calls what. The runtime and its compile driver (runtime/compile.h) call the slots below;
 * a backend never calls back into the runtime, the compiler, the frontend or PJRT, and includes
 * only this header, runtime/ffi.h (the custom-call registry, part of the same interface), ir/
 * and base/. The build enforces it (cj_cpu links cj_backend_api, not cj_runtime).
 *
 * Devices. A client asks its backend what devices look like: device_kind (the
 * PJRT_DeviceDescription kind string), default_device_count (how many devices a client gets when
 * its options do not say; the runtime may still override the count), memory_kinds (which memory
 * kinds each device offers; CJ_MEMORY_DEVICE always, it is the default memory).
 *
 * Compiling. The runtime's compile driver does everything that does not depend on the target:
 * the compiler passes (asking supports_op which ops the backend runs natively), printing the
 * optimized program, the fingerprint, inlining the calls kept for printing, and the check that
 * every op left is supported (naming the op when not). It then calls `lower` with the prepared
 * module: `main` is its entry function and the only function left. The backend turns it into
 * its own executable form (a cj_program) and describes it (program_info). The driver copies
 * that description and fills the common fields itself (name, num_replicas, num_partitions,
 * device_assignment, fingerprint, optimized_text/len): a backend may leave them zero.
 * Serializing a program is the runtime's too: a versioned envelope holding the backend's name,
 * the compile options and the optimized program text, which deserializing compiles again
 * through the driver. A backend therefore needs neither the frontend nor the compiler.
 * (Before this interface had `lower`, backends had `compile` (passes included),
 * program_serialize and program_deserialize slots; those are gone.)
 *
 * Ownership: cj_backend objects are static singletons (cj_backend_cpu()). A cj_program is owned by
 * whoever lowered it (the driver's cj_compiled) and freed with vt->program_free; its
 * cj_program_info lives as long as the program. `lower` borrows the module (the driver frees it
 * after lower returns: copy what the program keeps) and the options (they live as long as the
 * program). Programs are immutable after lowering and may be executed from many threads at once
 * (each execution brings its own scratch through the backend's own pooling).
 */
#ifndef CJ_RUNTIME_BACKEND_H
#define CJ_RUNTIME_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/compile_options.h"
#include "base/dtype.h"
#include "base/shape.h"
#include "base/status.h"
#include "base/threadpool.h"
#include "ir/ir.h"

typedef struct cj_backend cj_backend;

/* The memory kinds a device may offer (PJRT_Memory_Kind strings: cj_memory_kind_name in
 * runtime/client.h). Memory ids are device index * CJ_MEMORY_KIND_COUNT + kind. */
typedef enum cj_memory_kind {
  CJ_MEMORY_DEVICE = 0,
  CJ_MEMORY_PINNED_HOST = 1,
  CJ_MEMORY_UNPINNED_HOST = 2,
  CJ_MEMORY_KIND_COUNT = 3,
} cj_memory_kind;
#define CJ_MEMORY_KIND_BIT(k) (1u << (unsigned)(k))

typedef struct cj_program cj_program;
typedef struct cj_launch cj_launch;

/* What a compiled program looks like from outside. Everything lives as long as the program. */
typedef struct cj_program_info {
  /* Filled by the runtime's compile driver (a backend may leave them zero): name,
   * num_replicas, num_partitions, device_assignment, fingerprint, optimized_text/len. */
  const char *name;            /* the module name, or "main" */
  int32_t num_args, num_results;
  const cj_shape *args;        /* num_args */
  const cj_shape *results;     /* num_results */
  /* result_donor[i] = the argument index whose storage result i may reuse when the caller
   * donates it (from jax.buffer_donor / tf.aliasing_output), or -1. */
  const int32_t *result_donor;
  int64_t num_replicas, num_partitions;
  const int64_t *device_assignment; /* num_replicas * num_partitions global device ids, or NULL */
  uint64_t fingerprint[2];     /* stable across processes: a hash of the program and options */
  /* GetCostAnalysis */
  double flops, bytes_accessed, transcendentals;
  /* GetCompiledMemoryStats / SizeOfGeneratedCodeInBytes */
  int64_t temp_bytes, constant_bytes, code_bytes;
  /* OptimizedProgram: the module after compilation, as MLIR text */
  const char *optimized_text;
  size_t optimized_len;
} cj_program_info;

/* Cross-process collectives (multi-process clients): what a backend needs to reach devices of
 * other processes. The runtime fills it (runtime/topology_mp.c, over the MPI module); the backend
 * only calls the operations. Processes are named by their process index (PJRT node_id).
 * Operations return NULL or a status naming what failed; they block the calling thread and must
 * be called in the same order by every process of `procs` (sorted, distinct, self included). */
typedef struct cj_xproc_ops {
  /* `group` names the device group (equal in every process, different for different groups):
   * groups over the same processes may exchange at the same time without mixing their data.
   * Every process of procs[0..n) contributes send (send_bytes); recv receives the contributions
   * of procs in order, recv_bytes[i] bytes from procs[i], back to back. */
  cj_status (*allgatherv)(void *ctx, uint64_t group, const int32_t *procs, int32_t n,
                          const void *send, size_t send_bytes, void *recv,
                          const size_t *recv_bytes);
  /* Element-wise reduction of `count` elements of dtype `dt` with CJ_XRED_* `op` over procs;
   * send == recv is allowed (in place). *done = false (and NULL) when this pair of op and dtype
   * is not supported: the caller then gathers and reduces itself. */
  cj_status (*allreduce)(void *ctx, uint64_t group, const int32_t *procs, int32_t n,
                         const void *send, void *recv, int64_t count, cj_dtype dt, int op,
                         bool *done);
} cj_xproc_ops;
enum { CJ_XRED_SUM, CJ_XRED_PROD, CJ_XRED_MAX, CJ_XRED_MIN, CJ_XRED_AND, CJ_XRED_OR, CJ_XRED_XOR };

/* Where the devices of one multi-process execution live: grid position (replica * partitions +
 * partition) -> process index. Owned by the loaded executable. */
typedef struct cj_xproc {
  const cj_xproc_ops *ops;
  void *ctx;
  int32_t self;            /* this process */
  int32_t ngrid;           /* num_replicas * num_partitions */
  const int32_t *proc_of;  /* ngrid entries */
} cj_xproc;

/* One device's share of one execution. */
typedef struct cj_exec_args {
  int32_t replica, partition;   /* this device's place in the device assignment */
  void *const *args;            /* num_args device pointers (read-only unless donated) */
  void *const *results;         /* num_results device pointers the program writes. A result
                                 * whose donor argument was donated gets that argument's
                                 * pointer (the caller decides; see result_donor). */
  cj_launch *launch;            /* shared by the devices of one multi-device execution (for
                                 * collectives); NULL when only one device runs */
  cj_threadpool *pool;          /* the client's pool, for parallel kernels; may be NULL */
  /* FFI user data of this execution (a cj_ffi_user_data_list, runtime/ffi.h), or NULL */
  const struct cj_ffi_user_data_list *ffi_user_data;
  /* Multi-process executions: where the other devices of the grid live; NULL when every device
   * of the execution is in this process. */
  const cj_xproc *xproc;
} cj_exec_args;

/* The completion callback of an asynchronous backend operation (see execute_async). */
typedef struct cj_backend_done {
  void (*fn)(void *ctx, cj_status st); /* st: NULL on success, else owned by fn */
  void *ctx;
} cj_backend_done;

typedef struct cj_backend_vtable {
  const char *name; /* "cpu" */

  /* Devices (see the header comment). */
  const char *device_kind;                 /* "cpu" */
  int (*default_device_count)(cj_backend *b); /* >= 1 */
  unsigned memory_kinds;                   /* CJ_MEMORY_KIND_BIT(kind) of each offered kind */

  /* True when device memory is ordinary host memory the caller may read and write directly
   * (PJRT_Buffer_IsOnCpu, zero-copy host buffers, DLPack views). */
  bool memory_is_host;

  /* Memory of one device: `device` is the device's index among this process's devices
   * (0-based, its local_hardware_id), `kind` one of memory_kinds (a GPU backend allocates
   * CJ_MEMORY_PINNED_HOST as page-locked host memory, CJ_MEMORY_DEVICE on the card). Alignment
   * is at least 64 bytes. NULL on out-of-memory. free gets the device and kind alloc got. */
  void *(*alloc)(cj_backend *b, int32_t device, cj_memory_kind kind, size_t bytes);
  void (*free)(cj_backend *b, int32_t device, cj_memory_kind kind, void *p);
  /* Copies between host memory and memory of `device` (memcpy on the CPU backend). */
  cj_status (*copy_to_device)(cj_backend *b, int32_t device, void *dst, const void *src, size_t n);
  cj_status (*copy_to_host)(cj_backend *b, int32_t device, void *dst, const void *src, size_t n);
  /* Optional: starts copying n bytes of host memory at src into dst on `device` and returns;
   * calls done.fn(done.ctx, st) once when the copy has finished (see execute_async for the
   * callback's rules). src stays valid until then. The runtime uses it for host buffers the
   * caller keeps alive until the transfer completes (PJRT's kImmutableUntilTransferCompletes):
   * the new buffer is pending until done.fn, and so is the caller's done-with-host event. */
  void (*copy_to_device_async)(cj_backend *b, int32_t device, void *dst, const void *src,
                               size_t n, cj_backend_done done);
  /* Optional: copies n bytes from src on src_device to dst on dst_device (the two may be the
   * same device), without a trip through host memory (a GPU backend: a peer copy). NULL: the
   * runtime stages the bytes through host memory with copy_to_host + copy_to_device. */
  cj_status (*copy_device_to_device)(cj_backend *b, int32_t dst_device, void *dst,
                                     int32_t src_device, const void *src, size_t n);

  /* Whether the backend can run `op` (consulted by the compiler before lowering, so that an
   * unsupported op fails at compile time naming the op). On false, *why says why. */
  bool (*supports_op)(cj_backend *b, const cj_op *op, const char **why);

  /* Lowers the prepared module m (see "Compiling" above; m and opts are borrowed) into the
   * backend's program. */
  cj_status (*lower)(cj_backend *b, cj_module *m, cj_op *main, const cj_compile_options *opts,
                     cj_program **out);
  /* The backend's description of its program: shapes, donation, cost, memory (the common
   * fields are the driver's, see cj_program_info). */
  const cj_program_info *(*program_info)(const cj_program *p);
  void (*program_free)(cj_program *p);

  /* A launch groups the per-device executions of one multi-device call so that collectives can
   * meet. Created by the runtime before starting the devices, destroyed after all finished.
   * `ndevices` is the program's whole grid (replicas x partitions), of which a multi-process
   * execution runs only this process's positions here. */
  cj_status (*launch_create)(cj_backend *b, const cj_program *p, int32_t ndevices,
                             cj_launch **out);
  void (*launch_destroy)(cj_launch *l);
  /* Cancels a launch: collectives still waiting on peers fail instead of blocking forever
   * (called when one device's execution failed). */
  void (*launch_abort)(cj_launch *l, cj_status why);

  /* Runs one device's share synchronously on the calling thread (which the runtime chooses:
   * a worker, so that Execute stays asynchronous). */
  cj_status (*execute)(cj_backend *b, const cj_program *p, const cj_exec_args *args);
  /* Optional, for backends whose devices run on their own (a GPU stream, a remote device):
   * starts one device's share and returns; the backend calls done.fn(done.ctx, st) exactly
   * once when the share has finished (st: NULL on success, else an error the callee owns),
   * from any thread, possibly before execute_async returns (the CPU backend would complete at
   * once). `args` and everything it points to stay valid until done.fn is called. When set,
   * the runtime calls it instead of `execute`; the device's completion event fires from
   * done.fn, so nothing blocks a runtime thread while the device works. A backend has at least
   * one of the two; tools that run a program in-process without a client (cjrt bench's and
   * cjrt conform's backend mode) need `execute`. */
  void (*execute_async)(cj_backend *b, const cj_program *p, const cj_exec_args *args,
                        cj_backend_done done);
} cj_backend_vtable;

struct cj_backend {
  const cj_backend_vtable *vt;
};

/* The CPU backend (src/cpu/). */
cj_backend *cj_backend_cpu(void);
/* The reference backend (src/reference/): a plain interpreter, slow but complete. */
cj_backend *cj_backend_reference(void);

#endif
