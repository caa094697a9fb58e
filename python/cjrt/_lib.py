"""ctypes bindings to libcjrt (include/cjrt/*.h). Internal: use the classes in cjrt/__init__.py.

libcjrt is found, in order, at $CJRT_LIBRARY, inside this package (wheels that bundle it), next
to $CJRT_PLUGIN, in the source tree's build/ folder, in the dynamic linker's search path.
"""

import ctypes
import ctypes.util
import os
import threading

_c = ctypes
c_void_p = _c.c_void_p
c_char_p = _c.c_char_p
c_size_t = _c.c_size_t
c_int = _c.c_int
c_int64 = _c.c_int64
c_bool = _c.c_bool
c_uint32 = _c.c_uint32


class Value(_c.Structure):
    """cjrt_value."""

    _fields_ = [
        ("name", c_char_p),
        ("kind", c_int),
        ("string_value", c_char_p),
        ("int64_value", c_int64),
        ("int64_list", _c.POINTER(c_int64)),
        ("float_value", _c.c_float),
        ("bool_value", c_bool),
        ("size", c_size_t),
    ]


class ArgShape(_c.Structure):
    """cjrt_arg_shape."""

    _fields_ = [
        ("dtype", c_int),
        ("rank", c_size_t),
        ("dims", _c.POINTER(c_int64)),
    ]


class CompileOptions(_c.Structure):
    """cjrt_compile_options (every field of the C struct, in order: libcjrt reads them all)."""

    _fields_ = [
        ("num_replicas", c_int64),
        ("num_partitions", c_int64),
        ("device_ids", _c.POINTER(c_int64)),
        ("format", c_char_p),
        ("use_spmd_partitioning", c_bool),
        ("argument_shapes", _c.POINTER(ArgShape)),
        ("num_argument_shapes", c_size_t),
    ]


class Array(_c.Structure):
    """cjrt_array."""

    _fields_ = [
        ("dtype", c_int),
        ("rank", c_size_t),
        ("dims", _c.POINTER(c_int64)),
        ("data", c_void_p),
        ("nbytes", c_size_t),
    ]


# name: (restype, argtypes)
_PROTOS = {
    "cjrt_error_code": (c_int, [c_void_p]),
    "cjrt_error_message": (c_char_p, [c_void_p]),
    "cjrt_error_free": (None, [c_void_p]),
    "cjrt_code_name": (c_char_p, [c_int]),
    "cjrt_free": (None, [c_void_p]),
    "cjrt_dtype_name": (c_char_p, [c_int]),
    "cjrt_dtype_size": (c_size_t, [c_int]),
    "cjrt_dtype_from_name": (c_int, [c_char_p]),
    "cjrt_api_major": (c_int, []),
    "cjrt_api_minor": (c_int, []),
    "cjrt_plugin_open": (c_void_p, [c_char_p, _c.POINTER(c_void_p)]),
    "cjrt_plugin_close": (None, [c_void_p]),
    "cjrt_plugin_path": (c_char_p, [c_void_p]),
    "cjrt_plugin_api_major": (c_int, [c_void_p]),
    "cjrt_plugin_api_minor": (c_int, [c_void_p]),
    "cjrt_plugin_num_attributes": (c_size_t, [c_void_p]),
    "cjrt_plugin_attribute": (_c.POINTER(Value), [c_void_p, c_size_t]),
    "cjrt_client_create": (c_void_p, [c_void_p, _c.POINTER(Value), c_size_t, _c.POINTER(c_void_p)]),
    "cjrt_client_free": (None, [c_void_p]),
    "cjrt_client_platform_name": (c_char_p, [c_void_p]),
    "cjrt_client_platform_version": (c_char_p, [c_void_p]),
    "cjrt_client_process_index": (c_int, [c_void_p]),
    "cjrt_client_num_devices": (c_size_t, [c_void_p]),
    "cjrt_client_device": (c_void_p, [c_void_p, c_size_t]),
    "cjrt_client_num_addressable_devices": (c_size_t, [c_void_p]),
    "cjrt_client_addressable_device": (c_void_p, [c_void_p, c_size_t]),
    "cjrt_client_num_memories": (c_size_t, [c_void_p]),
    "cjrt_client_memory": (c_void_p, [c_void_p, c_size_t]),
    "cjrt_device_id": (c_int64, [c_void_p]),
    "cjrt_device_process_index": (c_int, [c_void_p]),
    "cjrt_device_local_hardware_id": (c_int, [c_void_p]),
    "cjrt_device_is_addressable": (c_bool, [c_void_p]),
    "cjrt_device_kind": (c_char_p, [c_void_p]),
    "cjrt_device_debug_string": (c_char_p, [c_void_p]),
    "cjrt_device_to_string": (c_char_p, [c_void_p]),
    "cjrt_device_num_attributes": (c_size_t, [c_void_p]),
    "cjrt_device_attribute": (_c.POINTER(Value), [c_void_p, c_size_t]),
    "cjrt_device_num_memories": (c_size_t, [c_void_p]),
    "cjrt_device_memory": (c_void_p, [c_void_p, c_size_t]),
    "cjrt_device_default_memory": (c_void_p, [c_void_p]),
    "cjrt_device_bytes_in_use": (c_void_p, [c_void_p, _c.POINTER(c_int64)]),
    "cjrt_memory_id": (c_int, [c_void_p]),
    "cjrt_memory_kind": (c_char_p, [c_void_p]),
    "cjrt_memory_kind_id": (c_int, [c_void_p]),
    "cjrt_memory_debug_string": (c_char_p, [c_void_p]),
    "cjrt_memory_to_string": (c_char_p, [c_void_p]),
    "cjrt_memory_num_devices": (c_size_t, [c_void_p]),
    "cjrt_memory_device": (c_void_p, [c_void_p, c_size_t]),
    "cjrt_compile": (c_void_p, [c_void_p, c_void_p, c_size_t, _c.POINTER(CompileOptions), _c.POINTER(c_void_p)]),
    "cjrt_executable_free": (None, [c_void_p]),
    "cjrt_executable_name": (c_char_p, [c_void_p]),
    "cjrt_executable_num_outputs": (c_size_t, [c_void_p]),
    "cjrt_executable_num_devices": (c_size_t, [c_void_p]),
    "cjrt_executable_device": (c_void_p, [c_void_p, c_size_t]),
    "cjrt_executable_output_dtype": (c_int, [c_void_p, c_size_t]),
    "cjrt_executable_output_dims": (_c.POINTER(c_int64), [c_void_p, c_size_t, _c.POINTER(c_int)]),
    "cjrt_executable_fingerprint": (c_char_p, [c_void_p]),
    "cjrt_execute": (c_void_p, [c_void_p, _c.POINTER(c_void_p), c_size_t, _c.POINTER(c_void_p), c_size_t]),
    "cjrt_buffer_from_host": (c_void_p, [c_void_p, c_void_p, c_int, _c.POINTER(c_int64), c_size_t, c_void_p,
                                         _c.POINTER(c_int64), _c.POINTER(c_void_p)]),
    "cjrt_buffer_retain": (c_void_p, [c_void_p]),
    "cjrt_buffer_free": (None, [c_void_p]),
    "cjrt_buffer_dtype": (c_int, [c_void_p]),
    "cjrt_buffer_rank": (c_size_t, [c_void_p]),
    "cjrt_buffer_dims": (_c.POINTER(c_int64), [c_void_p]),
    "cjrt_buffer_nbytes": (c_size_t, [c_void_p]),
    "cjrt_buffer_device": (c_void_p, [c_void_p]),
    "cjrt_buffer_await": (c_void_p, [c_void_p]),
    "cjrt_buffer_to_host": (c_void_p, [c_void_p, c_void_p, c_size_t]),
    "cjrt_buffer_copy_to_device": (c_void_p, [c_void_p, c_void_p, _c.POINTER(c_void_p)]),
    "cjrt_buffer_is_on_cpu": (c_void_p, [c_void_p, _c.POINTER(c_bool)]),
    "cjrt_buffer_unsafe_pointer": (c_void_p, [c_void_p, _c.POINTER(_c.c_size_t)]),
    "cjrt_buffer_delete": (c_void_p, [c_void_p]),
    "cjrt_buffer_is_deleted": (c_bool, [c_void_p]),
    "cjrt_live_buffers": (c_int64, []),
    "cjrt_buffer_to_dlpack": (c_void_p, [c_void_p, c_bool, c_uint32, _c.POINTER(c_void_p)]),
    "cjrt_buffer_from_dlpack": (c_void_p, [c_void_p, c_void_p, c_void_p, c_bool, _c.POINTER(c_void_p),
                                           _c.POINTER(c_bool)]),
    "cjrt_array_format": (c_void_p, [_c.POINTER(Array), _c.POINTER(c_void_p)]),
    "cjrt_array_parse": (c_void_p, [c_char_p, c_int, _c.POINTER(Array)]),
    "cjrt_array_free": (None, [_c.POINTER(Array)]),
    "cjrt_npy_read_mem": (c_void_p, [c_void_p, c_size_t, c_int, c_char_p, _c.POINTER(Array)]),
    "cjrt_npy_write_mem": (c_void_p, [_c.POINTER(Array), c_bool, _c.POINTER(c_void_p), _c.POINTER(c_size_t)]),
}

_lock = threading.Lock()
_lib = None
_tried = []


def _candidates():
    env = os.environ.get("CJRT_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libcjrt.so")
    plugin = os.environ.get("CJRT_PLUGIN")
    if plugin and os.sep in plugin:
        yield os.path.join(os.path.dirname(os.path.abspath(plugin)), "libcjrt.so")
    root = os.path.dirname(os.path.dirname(here))  # python/cjrt -> repository root
    for build in ("build", "build-asan"):
        yield os.path.join(root, build, "libcjrt.so")
    found = ctypes.util.find_library("cjrt")
    if found:
        yield found
    yield "libcjrt.so"


def lib():
    """The loaded libcjrt, with prototypes set (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        errors = []
        for cand in _candidates():
            if os.sep in cand and not os.path.exists(cand):
                errors.append(f"{cand} (absent)")
                continue
            try:
                handle = ctypes.CDLL(cand)
            except OSError as e:
                errors.append(f"{cand} ({e})")
                continue
            for name, (res, args) in _PROTOS.items():
                fn = getattr(handle, name)
                fn.restype = res
                fn.argtypes = args
            _lib = handle
            _lib._cjrt_path = cand
            return _lib
        _tried[:] = errors
        raise ImportError(
            "cjrt: cannot load libcjrt.so (build it with scripts/build.sh, or set CJRT_LIBRARY to "
            "its path); tried: " + "; ".join(errors))
