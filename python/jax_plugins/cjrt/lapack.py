"""SciPy's LAPACK and BLAS for the plugin's LAPACK kernels (src/cpu/k_lapack.c).

XLA:CPU's jaxlib runs its lapack_*_ffi custom calls with the routines of SciPy's
scipy.linalg.cython_lapack / cython_blas (the OpenBLAS in SciPy's wheel), whose entry points it
takes from those modules' ``__pyx_capi__`` capsules. The plugin links its own LAPACK (Debian's
OpenBLAS), which is older and slower and, for some routines (gees's Schur forms), takes other
paths: the same capsules installed in the plugin's routine table (k_lapack.h:
``cjrt_lapack_set_routine``) give cjrt XLA:CPU's results and speed.

The routines take Fortran's arguments by pointer with no hidden character lengths, as the
plugin's table expects; a capsule whose signature does not have the expected number of
arguments, or a SciPy built with 64-bit LAPACK integers, is left alone (the plugin keeps its
own routine). $CJRT_LAPACK=builtin keeps the plugin's own LAPACK for every routine.
"""

import ctypes
import logging
import os
import re

_log = logging.getLogger(__name__)

# Arguments of each routine (by its name less the type letter), as cython_lapack declares them;
# (real, complex) where they differ.
_ARGS = {"trsm": 11, "getrf": 6, "geqrf": 8, "geqp3": (9, 10), "orgqr": 9, "ungqr": 9,
         "potrf": 5, "gesdd": (14, 15), "gesvd": (14, 15), "syevd": 11, "heevd": 13,
         "gehrd": 9, "sytrd": 10, "hetrd": 10, "geev": 14, "gees": 15, "gtsv": 8}

# Routines the plugin keeps its own (Debian's single-threaded OpenBLAS) for: none. potrf is
# installed too, but the plugin runs its own for matrices of order > 64 (k_lapack.c,
# lk_plan_threads): measured on bench/models.py's cholesky (2-core machine, idle), SciPy's took
# 1.15 (one core) and 1.45 (both: SciPy's OpenBLAS starts its own threads on every call) times
# XLA:CPU's time on the f32[256,256] factor, against 1.08 and 0.99-1.20 with the plugin's; small
# ones (the batch of f32[16,16]) take SciPy's, as fast, with XLA:CPU's bits, and run the batch
# over the plugin's threads.
_KEEP_BUILTIN = set()

_installed = {}  # library path -> names installed there


def _nargs(capsule):
    """The argument count of a Cython C-API capsule, from its name ("void (char *, int *)")."""
    name = _capsule_name(capsule)
    m = re.fullmatch(r"void \((.*)\)", name.decode() if name else "")
    if not m:
        return -1
    return len(m.group(1).split(",")) if m.group(1).strip() else 0


def _capsule_name(capsule):
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    return get_name(capsule)


def _capsule_pointer(capsule):
    get_ptr = ctypes.pythonapi.PyCapsule_GetPointer
    get_ptr.restype = ctypes.c_void_p
    get_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get_ptr(capsule, _capsule_name(capsule))


def _scipy_modules():
    if os.environ.get("CJRT_LAPACK", "").strip().lower() in ("builtin", "plugin", "0", "off"):
        _log.debug("cjrt: CJRT_LAPACK=%s: the plugin keeps its own LAPACK",
                   os.environ["CJRT_LAPACK"])
        return None
    try:
        from scipy.linalg import cython_blas, cython_lapack
    except ImportError:
        _log.debug("cjrt: no SciPy; the plugin keeps its own LAPACK")
        return None
    for mod in (cython_blas, cython_lapack):
        size = getattr(mod, "_blas_int_size", None)
        if size is not None and size() != 4:
            _log.info("cjrt: SciPy's %s has %d-byte integers; the plugin keeps its own LAPACK",
                      mod.__name__, size())
            return None
    return cython_blas.__pyx_capi__, cython_lapack.__pyx_capi__


def install(library_path):
    """Installs SciPy's routines in the plugin at library_path (the library JAX loaded: a
    dlopen of the same file gives the same library, so its routine table is the one the
    platform's programs use). Returns the names installed (empty without SciPy, or with
    $CJRT_LAPACK=builtin). Idempotent per library."""
    if library_path in _installed:
        return list(_installed[library_path])
    mods = _scipy_modules()
    if mods is None or not library_path:
        return []
    blas, lapack = mods
    lib = ctypes.CDLL(library_path)
    name_of = lib.cjrt_lapack_routine_name
    name_of.restype, name_of.argtypes = ctypes.c_char_p, [ctypes.c_int]
    set_routine = lib.cjrt_lapack_set_routine
    set_routine.restype, set_routine.argtypes = ctypes.c_int, [ctypes.c_char_p, ctypes.c_void_p]
    done = []
    i = 0
    while (raw := name_of(i)) is not None:
        i += 1
        name = raw.decode()
        if name[1:] in _KEEP_BUILTIN:
            continue
        capi = blas if name.endswith("trsm") else lapack
        capsule = capi.get(name)
        want = _ARGS.get(name[1:], -1)
        if isinstance(want, tuple):
            want = want[name[0] in "cz"]
        if capsule is None:
            _log.info("cjrt: SciPy has no %s; the plugin keeps its own", name)
            continue
        if _nargs(capsule) != want:
            _log.warning("cjrt: SciPy's %s is %r, not the %d arguments expected; the plugin "
                         "keeps its own", name, _capsule_name(capsule), want)
            continue
        ptr = _capsule_pointer(capsule)
        if ptr and set_routine(raw, ptr) == 0:
            done.append(name)
    _installed[library_path] = done
    _log.debug("cjrt: %d LAPACK/BLAS routines from SciPy", len(done))
    return list(done)


def routine(library_path, name):
    """The entry point (an int) the plugin at library_path calls for routine `name`."""
    lib = ctypes.CDLL(library_path)
    fn = lib.cjrt_lapack_routine
    fn.restype, fn.argtypes = ctypes.c_void_p, [ctypes.c_char_p]
    return fn(name.encode())


def scipy_routine(name):
    """SciPy's entry point (an int) for routine `name`, or None."""
    mods = _scipy_modules()
    if mods is None:
        return None
    capsule = (mods[0] if name.endswith("trsm") else mods[1]).get(name)
    return None if capsule is None else _capsule_pointer(capsule)
