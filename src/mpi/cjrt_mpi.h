/* cjrt: the interface of the optional MPI module (libcjrt_mpi.so), which the plugin dlopens when a
 * client spans several processes (runtime/topology_mp.c). The plugin never links libmpi: it loads
 * and runs single-process without MPI installed.
 *
 * Plain C with no cjrt types: the module is built against mpi.h alone. Every function returns 0
 * on success, or nonzero with a NUL-terminated message written into err (errlen bytes).
 * Ranks are MPI_COMM_WORLD ranks. Collective calls block the calling thread; every rank of the
 * group must make the same calls in the same order. Element types are cj_dtype numbers
 * (= PJRT_Buffer_Type), reduction ops CJ_XRED_* numbers (runtime/backend.h).
 */
#ifndef CJRT_MPI_H
#define CJRT_MPI_H

#include <stddef.h>
#include <stdint.h>

#define CJRT_MPI_ABI 2
#define CJRT_MPI_ENTRY "cjrt_mpi_get_module"

typedef struct cjrt_mpi_module {
  int abi; /* CJRT_MPI_ABI */
  /* Initializes MPI (MPI_THREAD_MULTIPLE) unless the host program did; reports this process's
   * world rank and the world size. Calling it again is harmless. */
  int (*init)(int *rank, int *size, char *err, size_t errlen);
  /* Gathers byte blocks of the ranks[0..n) group, in that order; see cj_xproc_ops.allgatherv.
   * Each (group, ranks) pair gets its own communicator, so different groups may run at once
   * from different threads. */
  int (*allgatherv)(uint64_t group, const int32_t *ranks, int32_t n, const void *send,
                    size_t send_bytes, void *recv, const size_t *recv_bytes, char *err,
                    size_t errlen);
  /* Reduces over ranks[0..n); *supported = 0 (and 0 returned) for a dtype/op MPI lacks. */
  int (*allreduce)(uint64_t group, const int32_t *ranks, int32_t n, const void *send, void *recv,
                   int64_t count, int dtype, int op, int *supported, char *err, size_t errlen);
  /* The library name of the MPI implementation, for messages. */
  const char *(*library)(void);
} cjrt_mpi_module;

typedef const cjrt_mpi_module *(*cjrt_mpi_entry_fn)(void);

#endif
