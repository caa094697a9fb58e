/* cjrt: the runtime drives a backend whose memory is not host memory and whose executions
 * finish on their own thread (runtime/backend.h: per-device alloc/free, copies naming the
 * device, copy_device_to_device, copy_to_device_async, execute_async). The stand-in wraps the CPU backend's compiler
 * and kernels, tags every allocation with its device and kind (so a free or copy naming the
 * wrong device is caught), counts the calls, and completes each execution from a thread of its
 * own after the runtime's call has returned. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/check.h"
#include "runtime/backend.h"
#include "runtime/buffer.h"
#include "runtime/client.h"
#include "runtime/event.h"
#include "runtime/executable.h"

typedef struct tag {
  uint32_t magic;
  int32_t device;
  cj_memory_kind kind;
} tag;
enum { TAG_MAGIC = 0x7a66ca11u, HDR = 64 };

static atomic_int n_alloc, n_free, n_to_dev, n_to_host, n_d2d, n_async, n_bad;
static atomic_int async_after_return; /* completions that came after execute_async returned */

static tag *tag_of(const void *p) { return (tag *)((char *)p - HDR); }

static void *fa_alloc(cj_backend *b, int32_t device, cj_memory_kind kind, size_t n) {
  (void)b;
  char *p = aligned_alloc(64, HDR + (n + 63) / 64 * 64);
  if (!p) return NULL;
  tag *t = (tag *)p;
  t->magic = TAG_MAGIC;
  t->device = device;
  t->kind = kind;
  atomic_fetch_add(&n_alloc, 1);
  return p + HDR;
}
static void fa_free(cj_backend *b, int32_t device, cj_memory_kind kind, void *p) {
  (void)b;
  if (!p) return;
  tag *t = tag_of(p);
  if (t->magic != TAG_MAGIC || t->device != device || t->kind != kind) atomic_fetch_add(&n_bad, 1);
  t->magic = 0;
  atomic_fetch_add(&n_free, 1);
  free(t);
}
static int fa_devices(cj_backend *b) {
  (void)b;
  return 2;
}
static cj_status fa_to_dev(cj_backend *b, int32_t device, void *dst, const void *src, size_t n) {
  (void)b;
  if (device < 0 || device >= 2) atomic_fetch_add(&n_bad, 1);
  memcpy(dst, src, n);
  atomic_fetch_add(&n_to_dev, 1);
  return NULL;
}
static cj_status fa_to_host(cj_backend *b, int32_t device, void *dst, const void *src, size_t n) {
  (void)b;
  if (device < 0 || device >= 2) atomic_fetch_add(&n_bad, 1);
  memcpy(dst, src, n);
  atomic_fetch_add(&n_to_host, 1);
  return NULL;
}
static int32_t last_d2d_src = -1, last_d2d_dst = -1;
static cj_status fa_d2d(cj_backend *b, int32_t dd, void *dst, int32_t sd, const void *src, size_t n) {
  (void)b;
  last_d2d_src = sd;
  last_d2d_dst = dd;
  memcpy(dst, src, n);
  atomic_fetch_add(&n_d2d, 1);
  return NULL;
}

/* copy_to_device_async: the copy happens on a thread of our own once the test opens the gate */
static atomic_int n_h2d_async;
static atomic_bool h2d_gate;
typedef struct h2d_job {
  void *dst;
  const void *src;
  size_t n;
  cj_backend_done done;
} h2d_job;

static void *h2d_main(void *arg) {
  h2d_job *j = arg;
  while (!atomic_load(&h2d_gate)) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  memcpy(j->dst, j->src, j->n);
  cj_backend_done done = j->done;
  free(j);
  done.fn(done.ctx, NULL);
  return NULL;
}

static void fa_to_dev_async(cj_backend *b, int32_t device, void *dst, const void *src, size_t n,
                            cj_backend_done done) {
  (void)b;
  if (device < 0 || device >= 2) atomic_fetch_add(&n_bad, 1);
  atomic_fetch_add(&n_h2d_async, 1);
  h2d_job *j = malloc(sizeof *j);
  pthread_t th;
  if (!j) {
    done.fn(done.ctx, cj_oom());
    return;
  }
  *j = (h2d_job){dst, src, n, done};
  if (pthread_create(&th, NULL, h2d_main, j) != 0) {
    free(j);
    done.fn(done.ctx, cj_status_make(CJ_INTERNAL, "pthread_create failed"));
    return;
  }
  pthread_detach(th);
}

/* execute_async: the CPU backend's kernels on a thread of our own, completing later */
typedef struct job {
  cj_backend *cpu;
  const cj_program *p;
  const cj_exec_args *args;
  cj_backend_done done;
  atomic_bool returned; /* execute_async has returned */
  bool fail;
} job;

static void *job_main(void *arg) {
  job *j = arg;
  while (!atomic_load(&j->returned)) { /* a device that works after the call returned */
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  atomic_fetch_add(&async_after_return, 1);
  cj_status st = j->fail ? cj_status_make(CJ_INTERNAL, "the stand-in device failed on purpose")
                         : j->cpu->vt->execute(j->cpu, j->p, j->args);
  cj_backend_done done = j->done;
  free(j);
  done.fn(done.ctx, st);
  return NULL;
}

static atomic_bool fail_next;
static void fa_execute_async(cj_backend *b, const cj_program *p, const cj_exec_args *args,
                             cj_backend_done done) {
  (void)b;
  atomic_fetch_add(&n_async, 1);
  job *j = calloc(1, sizeof *j);
  pthread_t th;
  if (!j) {
    done.fn(done.ctx, cj_oom());
    return;
  }
  j->cpu = cj_backend_cpu();
  j->p = p;
  j->args = args;
  j->done = done;
  j->fail = atomic_exchange(&fail_next, false);
  atomic_init(&j->returned, false);
  if (pthread_create(&th, NULL, job_main, j) != 0) {
    free(j);
    done.fn(done.ctx, cj_status_make(CJ_INTERNAL, "pthread_create failed"));
    return;
  }
  pthread_detach(th);
  atomic_store(&j->returned, true); /* j may be freed from here on: not touched again */
}

static cj_backend_vtable fa_vt;
static cj_backend fa = {&fa_vt};

static void setup_vtable(void) {
  fa_vt = *cj_backend_cpu()->vt; /* the CPU backend's compiler, programs and launches */
  fa_vt.name = "async-stand-in";
  fa_vt.default_device_count = fa_devices;
  fa_vt.memory_kinds = CJ_MEMORY_KIND_BIT(CJ_MEMORY_DEVICE) | CJ_MEMORY_KIND_BIT(CJ_MEMORY_PINNED_HOST);
  fa_vt.memory_is_host = false;
  fa_vt.alloc = fa_alloc;
  fa_vt.free = fa_free;
  fa_vt.copy_to_device = fa_to_dev;
  fa_vt.copy_to_host = fa_to_host;
  fa_vt.copy_device_to_device = fa_d2d;
  fa_vt.copy_to_device_async = fa_to_dev_async;
  fa_vt.execute = NULL; /* only execute_async may be used */
  fa_vt.execute_async = fa_execute_async;
}

static const char prog[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %c = stablehlo.constant dense<1.5> : tensor<4xf32>\n"
    "  %y = stablehlo.multiply %x, %c : tensor<4xf32>\n"
    "  return %y : tensor<4xf32>\n"
    "}\n";

static bool wait_ok(cj_event *e, const char *what) {
  cj_status st = cj_event_wait(e);
  bool ok = st == NULL;
  CHECK_MSG(ok, "%s: %s", what, cj_status_message(st));
  cj_status_free(st);
  return ok;
}

/* Runs x * 1.5 on device 0; returns the output (or NULL), with the completion in *done. */
static cj_buffer *run_once(cj_loaded *l, cj_buffer *x, cj_event **done) {
  cj_buffer *out = NULL;
  *done = NULL;
  cj_status st = cj_loaded_execute(l, NULL, &x, 1, 1, NULL, &out, done);
  CHECK_MSG(st == NULL, "execute: %s", cj_status_message(st));
  cj_status_free(st);
  return out;
}

static void test_async_backend(void) {
  setup_vtable();
  cj_client *c = NULL;
  cj_status st = cj_client_create(&fa, NULL, &c);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  if (!c) return;
  CHECK_EQ_INT(c->ndevices, 2);
  CHECK(!cj_client_memory_is_host(c));
  cj_executable *e = NULL;
  cj_loaded *l = NULL;
  st = cj_executable_compile(&fa, c, prog, strlen(prog), NULL, 0, &e);
  if (!st) st = cj_loaded_create(c, e, NULL, 0, &l);
  CHECK_MSG(st == NULL, "compile: %s", cj_status_message(st));
  cj_status_free(st);
  float in[4] = {1, -2, 3.5f, 0}, out_h[4] = {0}, moved[4] = {0};
  int64_t dims[1] = {4};
  cj_buffer *x = NULL;
  st = cj_buffer_from_host(c->devices[0]->memories[0], CJ_F32, dims, 1, in, NULL,
                           CJ_HOST_COPY_DURING_CALL, NULL, &x);
  CHECK(st == NULL);
  cj_status_free(st);
  CHECK(atomic_load(&n_to_dev) >= 1); /* not host memory: the bytes went through the backend */
  cj_event *done = NULL;
  cj_buffer *y = l && x ? run_once(l, x, &done) : NULL;
  if (y && wait_ok(done, "execution")) {
    CHECK_EQ_INT(atomic_load(&n_async), 1);
    CHECK_EQ_INT(atomic_load(&async_after_return), 1);
    cj_event *rd = NULL;
    st = cj_buffer_to_host(y, out_h, NULL, &rd);
    CHECK(st == NULL);
    cj_status_free(st);
    if (rd && wait_ok(rd, "to host"))
      for (int i = 0; i < 4; i++) CHECK(out_h[i] == in[i] * 1.5f);
    cj_event_release(rd);
    /* a copy to device 1's memory is one device-to-device copy, from 0 to 1 */
    cj_buffer *z = NULL;
    st = cj_buffer_copy_to_memory(y, c->devices[1]->memories[0], &z);
    CHECK(st == NULL);
    cj_status_free(st);
    rd = NULL;
    if (z) st = cj_buffer_to_host(z, moved, NULL, &rd);
    CHECK(st == NULL);
    cj_status_free(st);
    if (rd && wait_ok(rd, "copy to device 1")) {
      CHECK_EQ_INT(atomic_load(&n_d2d), 1);
      CHECK_EQ_INT(last_d2d_src, 0);
      CHECK_EQ_INT(last_d2d_dst, 1);
      CHECK(memcmp(moved, out_h, sizeof moved) == 0);
    }
    cj_event_release(rd);
    cj_buffer_destroy(z);
  }
  cj_event_release(done);
  cj_buffer_destroy(y);
  /* a share the device fails: the outputs and the completion event carry its error */
  atomic_store(&fail_next, true);
  y = l && x ? run_once(l, x, &done) : NULL;
  if (y) {
    st = cj_event_wait(done);
    CHECK(st != NULL && strstr(cj_status_message(st), "failed on purpose") != NULL);
    cj_status_free(st);
    cj_event *rd = NULL;
    st = cj_buffer_ready_event(y, &rd);
    CHECK(st == NULL);
    cj_status_free(st);
    st = rd ? cj_event_wait(rd) : NULL;
    CHECK(st != NULL);
    cj_status_free(st);
    cj_event_release(rd);
  }
  cj_event_release(done);
  cj_buffer_destroy(y);
  cj_buffer_destroy(x);

  /* data the caller keeps until the transfer is done goes through the asynchronous copy: the
   * buffer (and the caller's done event) stay pending until the copy lands, and an execution
   * that takes the buffer waits for it */
  float in2[4] = {2, 4, -8, 0.25f}, out2[4] = {0};
  cj_event *host_done = NULL;
  x = NULL;
  st = cj_buffer_from_host(c->devices[0]->memories[0], CJ_F32, dims, 1, in2, NULL,
                           CJ_HOST_COPY_UNTIL_DONE, &host_done, &x);
  CHECK(st == NULL && x && host_done);
  cj_status_free(st);
  CHECK_EQ_INT(atomic_load(&n_h2d_async), 1);
  y = NULL;
  done = NULL;
  if (x && host_done) {
    CHECK(!cj_event_is_ready(host_done));
    y = l ? run_once(l, x, &done) : NULL;
    CHECK(done == NULL || !cj_event_is_ready(done)); /* waits for its argument */
    atomic_store(&h2d_gate, true);
    CHECK(wait_ok(host_done, "host transfer"));
    if (y && wait_ok(done, "execution after the transfer")) {
      cj_event *rd = NULL;
      st = cj_buffer_to_host(y, out2, NULL, &rd);
      CHECK(st == NULL);
      cj_status_free(st);
      if (rd && wait_ok(rd, "to host"))
        for (int i = 0; i < 4; i++) CHECK(out2[i] == in2[i] * 1.5f);
      cj_event_release(rd);
    }
  }
  atomic_store(&h2d_gate, true);
  cj_event_release(host_done);
  cj_event_release(done);
  cj_buffer_destroy(y);
  cj_buffer_destroy(x);
  cj_loaded_destroy(l);
  cj_executable_release(e);
  cj_client_release(c);
  CHECK_EQ_INT(atomic_load(&n_bad), 0);
  CHECK_EQ_INT(atomic_load(&n_alloc), atomic_load(&n_free)); /* everything given back */
  CHECK(atomic_load(&n_to_host) >= 2);
}

int main(void) {
  test_async_backend();
  return check_report("runtime_backend_async");
}
