/* TensorFlow's C API, found at run time in the process that loaded the plugin. TensorFlow's
 * Python package loads libtensorflow_framework.so.2 (where TF_SetStatus, TF_TensorData and
 * TF_TensorByteSize live); it is searched globally first, then by name if it is loaded already
 * (RTLD_NOLOAD: never loaded by us). Nothing here is linked, so the plugin loads without it. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tfnpd/tfnpd.h"

typedef void set_status_fn(TF_Status *, int, const char *);
typedef void *tensor_data_fn(const TF_Tensor *);
typedef size_t tensor_size_fn(const TF_Tensor *);
typedef TF_Status *new_status_fn(void);
typedef void delete_status_fn(TF_Status *);

static struct {
  set_status_fn *set_status;
  tensor_data_fn *tensor_data;
  tensor_size_fn *tensor_size;
  new_status_fn *new_status;
  delete_status_fn *delete_status;
} tf;
static pthread_once_t tf_once = PTHREAD_ONCE_INIT;

static void *find(void *lib, const char *name) {
  void *p = dlsym(RTLD_DEFAULT, name);
  if (!p && lib) p = dlsym(lib, name);
  return p;
}

static void tf_init(void) {
  /* A handle from RTLD_NOLOAD only names a library already loaded; it is kept (the reference
   * it adds lives as long as the process, like TensorFlow itself). */
  void *lib = dlopen("libtensorflow_framework.so.2", RTLD_LAZY | RTLD_NOLOAD);
  /* dlsym returns void*; POSIX makes the conversion to a function pointer valid. */
  *(void **)&tf.set_status = find(lib, "TF_SetStatus");
  *(void **)&tf.tensor_data = find(lib, "TF_TensorData");
  *(void **)&tf.tensor_size = find(lib, "TF_TensorByteSize");
  *(void **)&tf.new_status = find(lib, "TF_NewStatus");
  *(void **)&tf.delete_status = find(lib, "TF_DeleteStatus");
}

bool tfnpd_set_status(TF_Status *status, cj_code code, const char *message) {
  pthread_once(&tf_once, tf_init);
  if (!tf.set_status || !status) {
    if (code != CJ_OK)
      fprintf(stderr, "cjrt tfnpd: %s (%s)\n", message,
              status ? "TF_SetStatus not found in the process" : "no TF_Status given");
    return false;
  }
  tf.set_status(status, (int)code, message);
  return true;
}

void tfnpd_report(TF_Status *status, cj_status st) {
  (void)tfnpd_set_status(status, cj_status_code(st), st ? cj_status_message(st) : "");
  cj_status_free(st);
}

cj_status tfnpd_tensor_bytes(const TF_Tensor *t, const char *what, void **data, size_t *size) {
  pthread_once(&tf_once, tf_init);
  if (!tf.tensor_data || !tf.tensor_size)
    return cj_status_make(CJ_FAILED_PRECONDITION,
                          "%s: TF_TensorData/TF_TensorByteSize not found in the process "
                          "(is TensorFlow loaded?)",
                          what);
  if (!t) return cj_status_make(CJ_INVALID_ARGUMENT, "%s is NULL", what);
  *data = tf.tensor_data(t);
  *size = tf.tensor_size(t);
  if (!*data && *size)
    return cj_status_make(CJ_INVALID_ARGUMENT, "%s has %zu bytes but no data", what, *size);
  return NULL;
}

bool tfnpd_take_cxx_status(TF_Status *status, uintptr_t rep) {
  /* Clear what *status holds (TF_SetStatus frees it), then hand it the representation. */
  if (!status || !tfnpd_set_status(status, CJ_OK, "")) return false;
  memcpy(status, &rep, sizeof rep);
  return true;
}

void tfnpd_discard_cxx_status(uintptr_t rep) {
  pthread_once(&tf_once, tf_init);
  if (!tf.new_status || !tf.delete_status) return; /* not TensorFlow: nothing of its to free */
  TF_Status *s = tf.new_status();
  if (s && tfnpd_take_cxx_status(s, rep)) tf.delete_status(s);
}
