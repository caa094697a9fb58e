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
} cj_exec_args;

typedef struct cj_backend_vtable {
  const char *name; /* "cpu" */

  /* Devices (see the header comment). */
  const char *device_kind;                 /* "cpu" */
  int (*default_device_count)(cj_backend *b); /* >= 1 */
  unsigned memory_kinds;                   /* CJ_MEMORY_KIND_BIT(kind) of each offered kind */

  /* True when device memory is ordinary host memory the caller may read and write directly
   * (PJRT_Buffer_IsOnCpu, zero-copy host buffers, DLPack views). */
  bool memory_is_host;

  /* Device memory. Alignment is at least 64 bytes. NULL on out-of-memory. */
  void *(*alloc)(cj_backend *b, size_t bytes);
  void (*free)(cj_backend *b, void *p);
  /* Copies between host and device memory (memcpy on the CPU backend). */
  cj_status (*copy_to_device)(cj_backend *b, void *dst, const void *src, size_t n);
  cj_status (*copy_to_host)(cj_backend *b, void *dst, const void *src, size_t n);

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
   * meet. Created by the runtime before starting the devices, destroyed after all finished. */
  cj_status (*launch_create)(cj_backend *b, const cj_program *p, int32_t ndevices,
                             cj_launch **out);
  void (*launch_destroy)(cj_launch *l);
  /* Cancels a launch: collectives still waiting on peers fail instead of blocking forever
   * (called when one device's execution failed). */
  void (*launch_abort)(cj_launch *l, cj_status why);

  /* Runs one device's share synchronously on the calling thread (which the runtime chooses:
   * a worker, so that Execute stays asynchronous). */
  cj_status (*execute)(cj_backend *b, const cj_program *p, const cj_exec_args *args);
} cj_backend_vtable;

struct cj_backend {
  const cj_backend_vtable *vt;
};

/* The CPU backend (src/cpu/). */
cj_backend *cj_backend_cpu(void);

#endif
