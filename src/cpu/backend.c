/* cjrt: the CPU backend's vtable. Memory and copies are real; compile and execute are filled in
 * by the compiler/executor work (until then they return UNIMPLEMENTED). */
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"

static void *cpu_alloc(cj_backend *b, size_t bytes) {
  (void)b;
  size_t n = (bytes + 63) & ~(size_t)63;
  return aligned_alloc(64, n ? n : 64);
}

static void cpu_free(cj_backend *b, void *p) {
  (void)b;
  free(p);
}

static cj_status cpu_copy(cj_backend *b, void *dst, const void *src, size_t n) {
  (void)b;
  if (n) memmove(dst, src, n);
  return NULL;
}

static bool cpu_supports_op(cj_backend *b, const cj_op *op, const char **why) {
  (void)b;
  (void)op;
  if (why) *why = "the CPU executor is not built yet";
  return false;
}

static cj_status cpu_compile(cj_backend *b, cj_module *m, const cj_compile_options *opts,
                             cj_program **out) {
  (void)b;
  (void)opts;
  cj_module_free(m);
  *out = NULL;
  return cj_unimplemented("compilation is not implemented by cjrt yet");
}

static const cj_program_info *cpu_program_info(const cj_program *p) {
  (void)p;
  return NULL;
}

static void cpu_program_free(cj_program *p) { (void)p; }

static cj_status cpu_program_serialize(const cj_program *p, void **out, size_t *len) {
  (void)p;
  *out = NULL;
  *len = 0;
  return cj_unimplemented("program serialization is not implemented by cjrt yet");
}

static cj_status cpu_program_deserialize(cj_backend *b, const void *data, size_t len,
                                         cj_program **out) {
  (void)b;
  (void)data;
  (void)len;
  *out = NULL;
  return cj_unimplemented("program deserialization is not implemented by cjrt yet");
}

static cj_status cpu_launch_create(cj_backend *b, const cj_program *p, int32_t n, cj_launch **out) {
  (void)b;
  (void)p;
  (void)n;
  *out = NULL;
  return NULL;
}

static void cpu_launch_destroy(cj_launch *l) { (void)l; }
static void cpu_launch_abort(cj_launch *l, cj_status why) {
  (void)l;
  cj_status_free(why);
}

static cj_status cpu_execute(cj_backend *b, const cj_program *p, const cj_exec_args *args) {
  (void)b;
  (void)p;
  (void)args;
  return cj_unimplemented("execution is not implemented by cjrt yet");
}

static const cj_backend_vtable cpu_vtable = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_device = cpu_copy,
    .copy_to_host = cpu_copy,
    .supports_op = cpu_supports_op,
    .compile = cpu_compile,
    .program_info = cpu_program_info,
    .program_free = cpu_program_free,
    .program_serialize = cpu_program_serialize,
    .program_deserialize = cpu_program_deserialize,
    .launch_create = cpu_launch_create,
    .launch_destroy = cpu_launch_destroy,
    .launch_abort = cpu_launch_abort,
    .execute = cpu_execute,
};

static cj_backend cpu_backend = {&cpu_vtable};

cj_backend *cj_backend_cpu(void) { return &cpu_backend; }
