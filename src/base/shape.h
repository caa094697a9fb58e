/* cjrt: a static array shape (element type and dimensions), as programs describe their
 * arguments and results (runtime/backend.h) and compile options carry argument layouts
 * (frontend/compile_options.h). Owned by whoever holds it; dims are borrowed. */
#ifndef CJ_BASE_SHAPE_H
#define CJ_BASE_SHAPE_H

#include <stddef.h>
#include <stdint.h>

#include "base/dtype.h"

typedef struct cj_shape {
  cj_dtype dtype;
  int32_t rank;
  const int64_t *dims; /* rank entries */
  size_t nbytes;       /* dense row-major size in bytes */
} cj_shape;

#endif
