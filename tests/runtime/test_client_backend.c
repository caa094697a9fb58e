/* cjrt: the client takes its devices from the backend (runtime/backend.h): the device kind, the
 * default device count and the memory kinds. A stand-in backend with one memory kind, three
 * devices and its own kind string, then the CPU backend, whose devices must stay as they were
 * (one per core, kind "cpu", three memories with XLA's CPU client numbering). */
#include <stdlib.h>
#include <string.h>

#include "../common/check.h"
#include "base/threadpool.h"
#include "runtime/backend.h"
#include "runtime/client.h"

static int fake_count(cj_backend *b) {
  (void)b;
  return 3;
}
static void *fake_alloc(cj_backend *b, int32_t device, cj_memory_kind kind, size_t n) {
  (void)b, (void)device, (void)kind;
  return aligned_alloc(64, (n + 63) / 64 * 64);
}
static void fake_free(cj_backend *b, int32_t device, cj_memory_kind kind, void *p) {
  (void)b, (void)device, (void)kind;
  free(p);
}

static const cj_backend_vtable fake_vt = {
    .name = "fake",
    .device_kind = "fake-accelerator",
    .default_device_count = fake_count,
    .memory_kinds = CJ_MEMORY_KIND_BIT(CJ_MEMORY_DEVICE),
    .alloc = fake_alloc,
    .free = fake_free,
};
static cj_backend fake = {&fake_vt};

static void test_fake_backend(void) {
  cj_client *c = NULL;
  cj_status st = cj_client_create(&fake, NULL, &c);
  CHECK_MSG(st == NULL, "%s", cj_status_message(st));
  cj_status_free(st);
  if (!c) return;
  CHECK_EQ_INT(c->ndevices, 3);
  CHECK_EQ_STR(cj_client_device_kind(c), "fake-accelerator");
  CHECK_EQ_INT(c->nmemories, 3);
  for (int i = 0; i < c->ndevices; i++) {
    cj_device *d = c->devices[i];
    CHECK_EQ_INT(d->nmemories, 1);
    CHECK(d->memories[0]->kind == CJ_MEMORY_DEVICE);
    CHECK_EQ_INT(d->memories[0]->id, i * CJ_MEMORY_KIND_COUNT);
    CHECK(c->memories[i] == d->memories[0]);
    CHECK(strstr(d->debug_string, "fake-accelerator") != NULL);
  }
  cj_client_release(c);
  /* the runtime keeps its option to override the count */
  cj_client_options o = {5, 0, 1};
  st = cj_client_create(&fake, &o, &c);
  CHECK(st == NULL);
  cj_status_free(st);
  if (c) CHECK_EQ_INT(c->ndevices, 5);
  cj_client_release(c);
  /* no backend: an error, not a default picked below the PJRT layer */
  c = NULL;
  st = cj_client_create(NULL, NULL, &c);
  CHECK(st != NULL && c == NULL);
  cj_status_free(st);
}

static void test_cpu_backend(void) {
  cj_client *c = NULL;
  cj_status st = cj_client_create(cj_backend_cpu(), NULL, &c);
  CHECK(st == NULL);
  cj_status_free(st);
  if (!c) return;
  CHECK_EQ_INT(c->ndevices, cj_num_cores());
  CHECK_EQ_STR(cj_client_device_kind(c), "cpu");
  CHECK_EQ_INT(c->nmemories, c->ndevices * 3);
  for (int i = 0; i < c->ndevices; i++) {
    cj_device *d = c->devices[i];
    CHECK_EQ_INT(d->nmemories, 3);
    for (int k = 0; k < 3; k++) {
      CHECK_EQ_INT((int)d->memories[k]->kind, k);
      CHECK_EQ_INT(d->memories[k]->id, i * 3 + k);
      CHECK(c->memories[i * 3 + k] == d->memories[k]);
    }
  }
  cj_client_release(c);
}

int main(void) {
  test_fake_backend();
  test_cpu_backend();
  return check_report("runtime_client_backend");
}
