/* cjrt: the compile driver: the target-independent half of compiling, above every backend.
 *
 * cj_compile_module takes a parsed, verified (and, for multi-device programs, partitioned)
 * module and
 *   1. runs the compiler passes (compiler/compiler.h) with the backend's supports_op as the
 *      hook that says which ops it runs natively;
 *   2. prints the optimized program twice: generic MLIR (the fingerprint and the serialized
 *      form) and pretty MLIR (OptimizedProgram; generic when pretty printing fails);
 *   3. computes the fingerprint: two FNV-1a 64 hashes of the generic text and the compile
 *      options as written back (frontend/compile_options.h), stable across processes;
 *   4. inlines the calls kept for the printed program (cj_compile_late_inline) and checks every
 *      op left against supports_op, so that an unsupported op fails here, naming the op;
 *   5. hands the prepared module (its entry function alone) to the backend's `lower` slot;
 *   6. fills the common fields of the program's description (name, optimized text,
 *      fingerprint, replicas, partitions, device assignment) in its own copy of the backend's
 *      cj_program_info, so that no backend repeats them.
 *
 * It lives in runtime/ (not compiler/) because it needs what only the runtime sees together:
 * the backend's vtable, the compile options' wire form (for the fingerprint and the serialized
 * executable) and the frontend's reader (cj_compile_text). The compiler stays IR -> IR.
 *
 * Ownership: cj_compile_module consumes the module (freed before it returns, on success and on
 * error) and copies the options. A cj_compiled owns the backend's program, the texts and the
 * options copy; cj_compiled_free releases all of them (NULL is fine). info.* pointers live as
 * long as the cj_compiled.
 */
#ifndef CJ_RUNTIME_COMPILE_H
#define CJ_RUNTIME_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "frontend/compile_options.h"
#include "ir/ir.h"
#include "runtime/backend.h"

typedef struct cj_compiled {
  cj_backend *backend;
  cj_program *program;  /* the backend's, freed with backend->vt->program_free */
  cj_program_info info; /* the backend's description plus the common fields (see above) */
  char *text;           /* the optimized module, generic MLIR (what cj_compile_text reads) */
  size_t text_len;
  char *shown;          /* info.optimized_text, NUL-terminated */
  char *name;           /* info.name */
  cj_compile_options_storage opts; /* a copy of the options compiled under (opts.opts) */
} cj_compiled;

/* Compiles module m (consumed) for `backend` under `opts` (NULL: one replica, one partition). */
CJ_MUST_USE cj_status cj_compile_module(cj_backend *backend, cj_module *m, const cj_compile_options *opts,
                            cj_compiled **out);

/* Parses `text` (a cj_compiled's text: generic MLIR, as a serialized executable carries it),
 * verifies it and compiles it as cj_compile_module does. */
CJ_MUST_USE cj_status cj_compile_text(cj_backend *backend, const char *text, size_t len,
                          const cj_compile_options *opts, cj_compiled **out);

void cj_compiled_free(cj_compiled *c);

#endif
