/* The positive control of tests/layering: what a backend may include is found with the include
 * paths of a cj_cpu source (its own headers, the backend interface, ir/ and base/). */
#include "base/status.h"
#include "cpu/program.h"
#include "ir/ir.h"
#include "runtime/backend.h"
#include "runtime/ffi.h"

int cjrt_layering_good_cpu;
