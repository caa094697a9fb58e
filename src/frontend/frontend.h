/* cjrt: the front ends: bytes from a framework or a file into an IR module.
 *
 *   mlir_text.c      textual MLIR (pretty and generic forms), one module or `// -----` splits
 *   mlir_bytecode.c  the MLIR bytecode container (versions 0..6)
 *   vhlo.c           the VHLO dialect inside bytecode, mapped onto our StableHLO IR
 *   compile_options.c  xla.CompileOptionsProto (protobuf wire format) -> cj_compile_options
 *   hlo_proto.c      xla.HloModuleProto / HloModuleProtoWithConfig (protobuf wire format)
 *   hlo_text.c       HLO text (`HloModule ...`, as XLA's ToString / as_hlo_text() prints it)
 *   hlo_lower.c      either of those (hlo.h) lowered into our StableHLO IR
 *
 * Ownership: a returned module is owned by the caller (cj_module_free). On error nothing is
 * returned and nothing leaks. Input bytes are borrowed for the duration of the call only.
 * Errors name the file, line and column (text) or byte offset (bytecode) and what was wrong:
 *   "prog.mlir:3:17: expected ',' or ']' in dense literal"
 */
#ifndef CJ_FRONTEND_FRONTEND_H
#define CJ_FRONTEND_FRONTEND_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "ir/ir.h"

/* ---- text (src/frontend/mlir_text.c) ---- */

/* Parses one module. A file of bare top-level ops (no `module`) is an implicit module. Text that
 * holds `// -----` separators is an error here (use cj_parse_mlir_text_split). The result is not
 * verified (call cj_verify_module). `filename` is used in messages and op positions. */
CJ_MUST_USE cj_status cj_parse_mlir_text(const char *text, size_t len, const char *filename, cj_module **out);

/* Splits on lines that are exactly `// -----` and parses each piece; *out receives a malloc'ed
 * array of *n modules (each cj_module_free'd by the caller, then free() the array). Positions keep
 * the line numbers of the whole file. If a piece fails, the status names it and *out is NULL. */
CJ_MUST_USE cj_status cj_parse_mlir_text_split(const char *text, size_t len, const char *filename,
                                   cj_module ***out, size_t *n);

/* Parses a single attribute or type written in MLIR syntax into module m (used by the bytecode
 * reader for attributes stored in their textual form). */
CJ_MUST_USE cj_status cj_parse_attr_text(cj_module *m, const char *text, size_t len, const cj_attr **out);
CJ_MUST_USE cj_status cj_parse_type_text(cj_module *m, const char *text, size_t len, const cj_type **out);

/* ---- bytecode (src/frontend/mlir_bytecode.c, vhlo.c) ---- */

/* True if the bytes start with the MLIR bytecode magic "ML\xEFR". */
int cj_is_mlir_bytecode(const void *data, size_t len);

/* Reads a StableHLO portable artifact (VHLO in MLIR bytecode) or plain MLIR bytecode of the
 * stablehlo/func/chlo/sdy dialects. An artifact newer than we support fails naming both
 * versions. */
CJ_MUST_USE cj_status cj_read_mlir_bytecode(const void *data, size_t len, const char *filename,
                                cj_module **out);

/* The StableHLO versions the reader supports (PJRT_Plugin_Attributes advertises them). */
void cj_stablehlo_version_current(int64_t out[3]); /* 1.20.0 */
void cj_stablehlo_version_minimum(int64_t out[3]); /* 0.9.0 */

/* ---- HLO (src/frontend/hlo_*.c) ---- */

typedef enum cj_hlo_format {
  CJ_HLO_PROTO,             /* PJRT format "hlo": a serialized xla.HloModuleProto (HLO text, which
                             * starts with `HloModule`, is recognized and accepted too) */
  CJ_HLO_PROTO_WITH_CONFIG, /* PJRT format "hlo_with_config": xla.HloModuleProtoWithConfig */
  CJ_HLO_TEXT,              /* HLO text */
} cj_hlo_format;

/* Reads an HLO module and lowers it into a StableHLO module: the entry computation becomes
 * func.func @main (its parameters the arguments; a tuple root gives one result per leaf), called
 * computations become regions or are inlined, and tuples are flattened. Not verified (call
 * cj_verify_module). An opcode without a StableHLO counterpart fails naming the instruction:
 *   "hlo: instruction %x (opcode infeed) in computation %main is not supported" */
CJ_MUST_USE cj_status cj_read_hlo_program(const void *data, size_t len, cj_hlo_format format,
                              const char *filename, cj_module **out);

/* ---- either ---- */

/* Text or bytecode, told apart by the magic bytes. */
CJ_MUST_USE cj_status cj_read_program(const void *data, size_t len, const char *filename, cj_module **out);

#endif
