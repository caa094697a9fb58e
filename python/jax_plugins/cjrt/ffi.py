"""XLA FFI on cjrt, for JAX: custom call handlers and host callbacks.

Custom calls.  ``jax.ffi.register_ffi_target(name, capsule, platform="cjrt")`` hands the
handler to jaxlib's ``xla_client.register_custom_call_target``, which queues it until a handler
for the platform is known. ``install(library_path)`` registers that handler for "cjrt": it
passes each target to the plugin through the plugin's PJRT FFI extension
(``PJRT_FFI_Extension.register_handler``), read here with ctypes from the PJRT_Api that the
library's ``GetPjrtApi`` returns (the same process-wide registry JAX's client uses). Only typed
FFI handlers (``api_version=1``, the default of ``register_ffi_target``) are accepted, and of a
handler bundle only its execute stage.

Host callbacks (``jax.pure_callback``, ``jax.experimental.io_callback``, ``jax.debug.print`` /
``jax.debug.callback``).  On cpu, JAX lowers them to ``custom_call @xla_ffi_python_cpu_callback``
carrying an index into the executable's list of Python callables, and jaxlib hands that list to
the handler through the execution's FFI context, but only for the platforms XLA itself
implements (the C API client's ``platform_id`` must be cpu, cuda, rocm or sycl), so on a
plugin the list never arrives. For cjrt the package therefore lowers them its own way, with the
same semantics (tokens for ordered effects, side effects, result checks):

- ``emit_python_callback`` (``jax._src.callback``, re-exported by ``jax.interpreters.mlir``) is
  wrapped: for platform cjrt it emits ``custom_call @cjrt_python_callback`` with an attribute
  ``callback_id`` naming the callable in this module's table; other platforms are untouched.
- The handler of ``cjrt_python_callback`` is a ctypes function registered through the same FFI
  extension: it reads the call frame (buffers as numpy arrays, tokens as None), calls the
  callable and writes its results back; an exception becomes an FFI error, so the execution
  fails with the exception's text.
- The lowering rules JAX registers only for named platforms (``debug_callback``,
  ``debug_print``, checkify's ``check``) are registered for cjrt as the cpu ones.

The callables stay in the table for the life of the process (one entry per lowering of a
callback); JAX also keeps them with the executable (``host_callbacks``), which keeps executables
with callbacks out of the persistent compilation cache, where the ids would mean nothing.
"""

import ctypes
import itertools
import logging
import threading

import numpy as np

PLATFORM = "cjrt"
CALLBACK_TARGET = "cjrt_python_callback"

_log = logging.getLogger(__name__)

# ---------------------------------------------------------------- PJRT: the FFI extension

_PJRT_EXTENSION_TYPE_FFI = 5


class _ExtensionBase(ctypes.Structure):
    pass


_ExtensionBase._fields_ = [("struct_size", ctypes.c_size_t), ("type", ctypes.c_int),
                           ("next", ctypes.POINTER(_ExtensionBase))]


class _RegisterHandlerArgs(ctypes.Structure):  # version 3 of the extension
    _fields_ = [("struct_size", ctypes.c_size_t), ("target_name", ctypes.c_char_p),
                ("target_name_size", ctypes.c_size_t), ("handler", ctypes.c_void_p),
                ("platform_name", ctypes.c_char_p), ("platform_name_size", ctypes.c_size_t),
                ("traits", ctypes.c_uint32)]


_REGISTER_ARGS_SIZE = _RegisterHandlerArgs.traits.offset + 4
_REGISTER_FN = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_RegisterHandlerArgs))


class _ErrorArgs(ctypes.Structure):  # PJRT_Error_Message_Args / PJRT_Error_Destroy_Args
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("error", ctypes.c_void_p), ("message", ctypes.c_void_p),
                ("message_size", ctypes.c_size_t)]


_ERROR_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(_ErrorArgs))
# PJRT_Api: struct_size, extension_start, pjrt_api_version (24 bytes), then the slots:
# PJRT_Error_Destroy, PJRT_Error_Message, ...
_API_EXTENSION_START, _API_ERROR_DESTROY, _API_ERROR_MESSAGE = 8, 40, 48


class Plugin:
    """The plugin library's PJRT_Api and its FFI extension."""

    def __init__(self, library_path):
        self.lib = ctypes.CDLL(library_path)
        self.lib.GetPjrtApi.restype = ctypes.c_void_p
        self.api = self.lib.GetPjrtApi()
        if not self.api:
            raise RuntimeError(f"cjrt: GetPjrtApi of {library_path} returned NULL")
        ext = ctypes.cast(ctypes.c_void_p.from_address(self.api + _API_EXTENSION_START).value,
                          ctypes.POINTER(_ExtensionBase))
        self.ffi = None
        while ext:
            if ext.contents.type == _PJRT_EXTENSION_TYPE_FFI:
                self.ffi = ctypes.addressof(ext.contents)
                break
            ext = ext.contents.next
        if self.ffi is None:
            raise RuntimeError(f"cjrt: {library_path} has no PJRT FFI extension")
        fn = ctypes.c_void_p.from_address(self.ffi + 40).value  # register_handler
        self._register = _REGISTER_FN(fn)

    def _error_text(self, err):
        args = _ErrorArgs(ctypes.sizeof(_ErrorArgs), None, err, None, 0)
        _ERROR_FN(ctypes.c_void_p.from_address(self.api + _API_ERROR_MESSAGE).value)(
            ctypes.byref(args))
        text = ctypes.string_at(args.message, args.message_size).decode(errors="replace")
        destroy = _ErrorArgs(24, None, err, None, 0)
        _ERROR_FN(ctypes.c_void_p.from_address(self.api + _API_ERROR_DESTROY).value)(
            ctypes.byref(destroy))
        return text

    def register_handler(self, name, handler_address, platform=PLATFORM, traits=0):
        """Registers an XLA_FFI_Handler* for custom call target `name`; raises on refusal."""
        name_b, plat_b = name.encode(), platform.encode()
        args = _RegisterHandlerArgs(_REGISTER_ARGS_SIZE, name_b, len(name_b), handler_address,
                                    plat_b, len(plat_b), traits)
        err = self._register(ctypes.byref(args))
        if err:
            raise RuntimeError(self._error_text(err))


# The C API through a handle of our own: setting argtypes on ctypes.pythonapi's functions would
# change them for every other user in the process (cjrt's DLPack code declares them otherwise).
_capi = ctypes.PyDLL(None)
_get_name = _capi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]
_get_ptr = _capi.PyCapsule_GetPointer
_get_ptr.restype = ctypes.c_void_p
_get_ptr.argtypes = [ctypes.py_object, ctypes.c_char_p]


def capsule_pointer(capsule):
    """The pointer a PyCapsule holds (whatever its name)."""
    return _get_ptr(capsule, _get_name(capsule))


def _custom_call_handler(plugin):
    """jaxlib's CustomCallHandler signature: (name, fn, platform, api_version, traits)."""

    def register(name, fn, xla_platform_name, api_version=1, traits=0):
        if isinstance(name, bytes):
            name = name.decode()
        if api_version != 1:
            raise ValueError(
                f"cjrt: custom call target {name!r} has api_version={api_version}; cjrt runs "
                "typed XLA FFI handlers only (api_version=1, register_ffi_target's default)")
        if isinstance(fn, dict):
            stages = set(fn) - {"execute"}
            if "execute" not in fn or stages:
                raise ValueError(
                    f"cjrt: custom call target {name!r}: only an execute handler is supported "
                    f"(got stages {sorted(fn)})")
            fn = fn["execute"]
        plugin.register_handler(name, capsule_pointer(fn), xla_platform_name, int(traits))

    return register


# ---------------------------------------------------------------- the XLA FFI call frame

class _ByteSpan(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class _Buffer(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("dtype", ctypes.c_int), ("data", ctypes.c_void_p), ("rank", ctypes.c_int64),
                ("dims", ctypes.POINTER(ctypes.c_int64))]


class _Scalar(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("value", ctypes.c_void_p)]


class _List(ctypes.Structure):  # XLA_FFI_Args / XLA_FFI_Rets
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("size", ctypes.c_int64), ("types", ctypes.c_void_p),
                ("items", ctypes.POINTER(ctypes.POINTER(_Buffer)))]


class _Attrs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("size", ctypes.c_int64), ("types", ctypes.POINTER(ctypes.c_int)),
                ("names", ctypes.POINTER(ctypes.POINTER(_ByteSpan))),
                ("attrs", ctypes.POINTER(ctypes.c_void_p))]


class _CallFrame(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("api", ctypes.c_void_p), ("ctx", ctypes.c_void_p), ("stage", ctypes.c_int),
                ("args", _List), ("rets", _List), ("attrs", _Attrs),
                ("future", ctypes.c_void_p)]


class _ErrorCreateArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("message", ctypes.c_char_p), ("errc", ctypes.c_int)]


_ERROR_CREATE_FN = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(_ErrorCreateArgs))
_API_ERROR_CREATE = 48  # XLA_FFI_Api: struct_size, extension_start, api_version (24), internal
_XLA_TOKEN = 17
_XLA_ATTR_SCALAR = 3


def _xla_dtypes():
    import ml_dtypes

    table = {1: np.bool_, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.uint8,
             7: np.uint16, 8: np.uint32, 9: np.uint64, 10: np.float16, 11: np.float32,
             12: np.float64, 15: np.complex64, 16: ml_dtypes.bfloat16, 18: np.complex128}
    for code, name in ((19, "float8_e5m2"), (20, "float8_e4m3fn"), (21, "int4"), (22, "uint4"),
                       (23, "float8_e4m3b11fnuz"), (24, "float8_e5m2fnuz"),
                       (25, "float8_e4m3fnuz"), (26, "int2"), (27, "uint2"),
                       (28, "float8_e4m3"), (29, "float8_e3m4"), (32, "float4_e2m1fn"),
                       (33, "float8_e8m0fnu")):
        if hasattr(ml_dtypes, name):
            table[code] = getattr(ml_dtypes, name)
    return {k: np.dtype(v) for k, v in table.items()}


_DTYPES = None
_callbacks = {}
_callback_ids = itertools.count(1)
_callbacks_lock = threading.Lock()


def _array_of(buf):
    dtype = _DTYPES.get(buf.dtype)
    if dtype is None:
        raise TypeError(f"cjrt callback: XLA element type {buf.dtype} has no numpy dtype")
    shape = tuple(buf.dims[k] for k in range(buf.rank))
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return np.zeros(shape, dtype)
    raw = (ctypes.c_char * (n * dtype.itemsize)).from_address(buf.data)
    return np.frombuffer(raw, dtype).reshape(shape)


def _attr_u64(frame, name):
    attrs = frame.attrs
    for i in range(attrs.size):
        span = attrs.names[i].contents
        if ctypes.string_at(span.ptr, span.len).decode() == name:
            if attrs.types[i] != _XLA_ATTR_SCALAR:
                break
            scalar = ctypes.cast(attrs.attrs[i], ctypes.POINTER(_Scalar)).contents
            return ctypes.c_uint64.from_address(scalar.value).value
    raise ValueError(f"cjrt callback: the call has no integer attribute {name!r}")


def _run_callback(frame):
    cid = _attr_u64(frame, "callback_id")
    with _callbacks_lock:
        fn = _callbacks.get(cid)
    if fn is None:
        raise RuntimeError(f"cjrt callback: no Python callback with id {cid} in this process")
    args = []
    for i in range(frame.args.size):
        buf = frame.args.items[i].contents
        args.append(None if buf.dtype == _XLA_TOKEN else _array_of(buf).copy())
    outs = fn(*args)
    rets = [frame.rets.items[j].contents for j in range(frame.rets.size)]
    if len(outs) != len(rets):
        raise RuntimeError(f"cjrt callback: {len(outs)} results for {len(rets)} outputs")
    for j, (out, buf) in enumerate(zip(outs, rets)):
        if buf.dtype == _XLA_TOKEN:
            continue
        dst = _array_of(buf)
        val = np.asarray(out)
        if val.shape != dst.shape or val.dtype != dst.dtype:
            raise RuntimeError(
                f"cjrt callback: result {j} is {val.dtype}{list(val.shape)}, expected "
                f"{dst.dtype}{list(dst.shape)}")
        if dst.size:
            dst[...] = val


def _ffi_error(frame, message):
    args = _ErrorCreateArgs(ctypes.sizeof(_ErrorCreateArgs), None, message.encode(errors="replace"),
                            2)  # UNKNOWN, as jaxlib's callbacks report exceptions
    create = _ERROR_CREATE_FN(ctypes.c_void_p.from_address(frame.api + _API_ERROR_CREATE).value)
    return create(ctypes.byref(args))


@ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
def _callback_handler(frame_address):
    frame = _CallFrame.from_address(frame_address)
    try:
        _run_callback(frame)
        return None
    except BaseException as e:  # every error goes back to the runtime as an FFI error
        import traceback

        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        return _ffi_error(frame, f"CpuCallback error calling callback: {text}")


# ---------------------------------------------------------------- lowering for cjrt

def _register_callable(fn):
    with _callbacks_lock:
        cid = next(_callback_ids)
        _callbacks[cid] = fn
    return cid


def _wrap_emit(original):
    """emit_python_callback for platform cjrt; every other platform gets JAX's own."""
    from jax._src import core, dtypes
    from jax._src import ffi as jax_ffi
    from jax._src.interpreters import mlir
    import dataclasses

    def emit(ctx, callback, token, operands, operand_avals, result_avals, *,
             has_side_effect, partitioned=False, sharding=None, **kwargs):
        platforms = ctx.module_context.platforms
        if len(platforms) != 1 or platforms[0] != PLATFORM:
            return original(ctx, callback, token, operands, operand_avals, result_avals,
                            has_side_effect=has_side_effect, partitioned=partitioned,
                            sharding=sharding, **kwargs)
        if partitioned and result_avals:
            raise ValueError("Partitioned callback not supported with return values.")

        def wrapped(*args):
            outs = callback(*args)
            if len(outs) != len(result_avals):
                raise RuntimeError(
                    "Mismatched number of outputs from callback. "
                    f"Expected: {len(result_avals)}, Actual: {len(outs)}")
            outs = tuple(dtypes.canonicalize_value(np.asarray(a)) for a in outs)
            for i, (v, aval) in enumerate(zip(outs, result_avals)):
                if v.shape != aval.shape:
                    raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                                       f"Expected: {aval.shape}, Actual: {v.shape}")
                if v.dtype != aval.dtype:
                    raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                                       f"Expected: {aval.dtype}, Actual: {v.dtype}")
            return outs

        host_fn = wrapped
        if token:
            def host_fn(tok, *args):
                return (tok, *wrapped(*args))

            operands = [token, *operands]
            if sharding is not None and len(ctx.avals_out) > 0 and \
                    type(sharding).__name__ == "SdyArrayList":
                # Shardy wants one sharding per result: the token's first (as JAX does on cpu)
                first = sharding.shardings[0]
                sharding = type(sharding)((
                    type(first)(mesh_shape=(), dim_shardings=(),
                                logical_device_ids=first.logical_device_ids),
                    *sharding.shardings))
            ctx = dataclasses.replace(ctx, avals_in=[core.abstract_token, *ctx.avals_in],
                                      avals_out=[core.abstract_token, *ctx.avals_out])
        ctx.module_context.add_host_callback(host_fn)  # kept with the executable
        cid = _register_callable(host_fn)
        op = jax_ffi.build_ffi_lowering_function(CALLBACK_TARGET,
                                                 has_side_effect=has_side_effect)(
            ctx, *operands, callback_id=np.uint64(cid))
        if sharding is not None:
            import inspect

            if len(inspect.signature(mlir.set_sharding).parameters) == 3:  # JAX >= 0.8
                mlir.set_sharding(ctx.module_context, op, sharding)
            else:
                mlir.set_sharding(op, sharding)
        results = list(op.results)
        if token:
            token, *results = results
        return results, token, host_fn

    emit.__wrapped__ = original
    emit.__name__ = "emit_python_callback"
    return emit


def _register_lowerings():
    """The cpu rules of the primitives JAX lowers only for named platforms, for cjrt too."""
    from jax._src.interpreters import mlir

    done = []
    cpu = mlir._platform_specific_lowerings["cpu"]
    prims = []
    try:
        from jax._src import debugging

        prims += [getattr(debugging, n) for n in ("debug_callback_p", "debug_print_p")
                  if hasattr(debugging, n)]
    except Exception:  # pragma: no cover
        pass
    try:
        from jax._src import checkify

        prims.append(checkify.check_p)
    except Exception:  # pragma: no cover
        pass
    for prim in prims:
        entry = cpu.get(prim)
        if entry is None:
            continue
        rule = getattr(entry, "rule", entry)
        kw = {}
        if hasattr(entry, "inline"):
            kw["inline"] = entry.inline
        if getattr(entry, "cacheable", True) is False:
            kw["cacheable"] = False
        try:
            mlir.register_lowering(prim, rule, platform=PLATFORM, **kw)
        except TypeError:
            mlir.register_lowering(prim, rule, platform=PLATFORM)
        done.append(prim.name)
    return done


_installed = []


def install(library_path):
    """Routes jax.ffi registrations for platform cjrt and JAX's host callbacks to the plugin at
    `library_path`. Idempotent; returns what it set up."""
    global _DTYPES
    if _installed:
        return list(_installed)
    from jaxlib import xla_client
    from jax._src import callback as jax_callback
    from jax.interpreters import mlir as public_mlir

    plugin = Plugin(library_path)
    _DTYPES = _xla_dtypes()
    plugin.register_handler(CALLBACK_TARGET, ctypes.cast(_callback_handler, ctypes.c_void_p).value)
    xla_client.register_custom_call_handler(PLATFORM, _custom_call_handler(plugin))
    _installed.append("ffi_targets")
    original = jax_callback.emit_python_callback
    if getattr(original, "__wrapped__", None) is None:
        emit = _wrap_emit(original)
        jax_callback.emit_python_callback = emit
        if getattr(public_mlir, "emit_python_callback", None) is original:
            public_mlir.emit_python_callback = emit
    _installed.append("host_callbacks")
    _installed.extend(_register_lowerings())
    return list(_installed)
