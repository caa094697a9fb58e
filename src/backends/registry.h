/* cjrt: the backends this build has, by name (src/backends/registry.c).
 *
 * A layer of its own above the backends (cj_backends links cj_cpu and cj_reference), so that
 * the runtime, which only knows runtime/backend.h, never depends on a backend: whoever creates a
 * client (the PJRT layer, the `cjrt` tools) picks its backend here.
 */
#ifndef CJ_BACKENDS_REGISTRY_H
#define CJ_BACKENDS_REGISTRY_H

#include "base/status.h"
#include "runtime/backend.h"

/* A backend by name ("cpu", "reference"), NULL if unknown. */
cj_backend *cj_backend_by_name(const char *name);
/* The known names as one line ("cpu, reference"). */
const char *cj_backend_names(void);
/* The backend a client uses: `name` if given (non-empty), else $CJRT_BACKEND if set, else the
 * CPU backend. An unknown name is an INVALID_ARGUMENT error listing the known ones. */
CJ_MUST_USE cj_status cj_backend_select(const char *name, cj_backend **out);

#endif
