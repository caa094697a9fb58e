/* Runs test programs through the CPU backend without the verifier, for the quantized convolution
 * cases (tests/ops_conv/quant_cases): their quantized operands come from an
 * optimization_barrier whose result type is written as the quantized type of its storage
 * values, which the verifier rightly refuses, but which lets a test feed exact storage values
 * to the convolution before uniform_quantize exists. Each file holds one function without
 * arguments whose check ops fail the execution on a mismatch.
 *
 * usage: test_conv_unverified FILE...   (exit 0 when every file compiles, runs and checks) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/files.h"

#include "base/threadpool.h"
#include "frontend/frontend.h"
#include "runtime/backend.h"
#include "runtime/compile.h"

static int run_file(const char *path, cj_threadpool *pool) {
  size_t len = 0;
  char *text = tc_read_file(path, &len);
  if (!text) {
    fprintf(stderr, "%s: cannot read\n", path);
    return 0;
  }
  cj_module *m = NULL;
  cj_status st = cj_parse_mlir_text(text, len, path, &m);
  free(text);
  cj_compiled *p = NULL;
  cj_backend *b = cj_backend_cpu();
  if (!st) {
    cj_compile_options o = {1, 1, NULL, false, false};
    st = cj_compile_module(b, m, &o, &p); /* consumes the module */
  } else {
    cj_module_free(m);
  }
  if (!st) {
    const cj_program_info *in = &p->info;
    void *res[8] = {0};
    for (int32_t j = 0; j < in->num_results && j < 8; j++) res[j] = calloc(1, in->results[j].nbytes + 64);
    cj_exec_args a;
    memset(&a, 0, sizeof a);
    a.results = res;
    a.pool = pool;
    st = b->vt->execute(b, p->program, &a);
    for (int j = 0; j < 8; j++) free(res[j]);
    cj_compiled_free(p);
  }
  if (st) {
    fprintf(stderr, "FAIL %s: %s\n", path, cj_status_message(st));
    cj_status_free(st);
    return 0;
  }
  printf("pass %s\n", path);
  return 1;
}

int main(int argc, char **argv) {
  cj_status st = NULL;
  cj_threadpool *pool = cj_pool_create(0, &st);
  cj_status_free(st);
  int fails = 0;
  for (int i = 1; i < argc; i++) fails += !run_file(argv[i], pool);
  cj_pool_destroy(pool);
  printf("%d of %d files passed\n", argc - 1 - fails, argc - 1);
  return fails ? 1 : 0;
}
