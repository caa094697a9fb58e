/* The README's C example: load a PJRT plugin, compile examples/hello.mlir, run it, read a result.
 * Build: cc readme_example.c -Iinclude -Lbuild -lcjrt (or `pkg-config --cflags --libs cjrt`);
 * run from the repository root: ./readme_example [PLUGIN: a path or a name; default "cjrt"] */
#include <stdio.h>

#include "cjrt/cjrt.h"

int main(int argc, char **argv) {
  float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, out[4];
  int64_t dims[2] = {2, 2};
  cjrt_plugin *p = NULL;
  cjrt_client *c = NULL;
  cjrt_executable *e = NULL;
  cjrt_buffer *in[2] = {NULL, NULL}, *res[2] = {NULL, NULL};

  cjrt_error *err = cjrt_plugin_open(argc > 1 ? argv[1] : "cjrt", &p);
  if (!err) err = cjrt_client_create(p, NULL, 0, &c);
  if (!err) err = cjrt_compile_file(c, "examples/hello.mlir", NULL, &e);
  if (!err) err = cjrt_buffer_from_host(c, NULL, CJRT_F32, dims, 2, a, NULL, &in[0]);
  if (!err) err = cjrt_buffer_from_host(c, NULL, CJRT_F32, dims, 2, b, NULL, &in[1]);
  if (!err) err = cjrt_execute(e, in, 2, res, 2);
  if (!err) err = cjrt_buffer_to_host(res[0], out, sizeof out);
  if (!err) printf("(a + b) * a = [[%g, %g], [%g, %g]]\n", out[0], out[1], out[2], out[3]);

  if (err) fprintf(stderr, "readme_example: %s\n", cjrt_error_message(err));
  int rc = err ? 1 : 0;
  cjrt_error_free(err);
  for (int i = 0; i < 2; i++) {
    cjrt_buffer_free(in[i]);
    cjrt_buffer_free(res[i]);
  }
  cjrt_executable_free(e);
  cjrt_client_free(c);
  cjrt_plugin_close(p);
  return rc;
}
