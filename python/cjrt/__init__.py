"""cjrt: run StableHLO on any PJRT plugin from Python, with numpy and DLPack.

    import numpy as np, cjrt
    client = cjrt.Client()                     # the cjrt plugin; or Client("path/to/plugin.so")
    exe = client.compile(open("examples/hello.mlir").read())
    prod, mm = exe(np.ones((2, 2), np.float32), np.eye(2, dtype=np.float32))
    print(np.asarray(prod))

Buffers speak DLPack both ways: np.from_dlpack(buf), torch.from_dlpack(buf) and
jax.dlpack.from_dlpack(buf) view a buffer's memory without copying (legacy "dltensor" capsules for
old consumers, DLPack 1.x versioned ones when the consumer passes max_version), and
client.from_dlpack(x) makes a buffer that views a numpy array, torch tensor or JAX array.

Everything goes through libcjrt (ctypes; no compiled extension). Objects keep what they use
alive (a buffer keeps its client, a client its plugin), and each native object is freed exactly
once, when its last Python reference (or DLPack consumer) lets go.
"""

import os

import numpy as np

from . import _dlpack, _dtypes
from ._lib import Array as _Array
from ._lib import CompileOptions as _CompileOptions
from ._lib import Value as _Value
from ._lib import lib as _lib

__all__ = ["Client", "Device", "Memory", "Executable", "Buffer", "CjrtError", "live_buffers",
           "format_array"]
__version__ = "0.1.0"

_ctypes = __import__("ctypes")
_c_void_p = _ctypes.c_void_p

_CODE_NAMES = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
               "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
               "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
               "UNAUTHENTICATED"]


class CjrtError(RuntimeError):
    """A failure reported by libcjrt or the plugin; `code` is the absl/PJRT code name."""

    def __init__(self, message, code="UNKNOWN"):
        super().__init__(message)
        self.code = code


def _check(err):
    """Raises the cjrt_error* `err` (and frees it) if it is not NULL."""
    if err:
        L = _lib()
        code = L.cjrt_error_code(err)
        msg = L.cjrt_error_message(err).decode("utf-8", "replace")
        L.cjrt_error_free(err)
        name = _CODE_NAMES[code] if 0 <= code < len(_CODE_NAMES) else "UNKNOWN"
        raise CjrtError(msg, name)


def _str(b):
    return b.decode("utf-8", "replace") if b is not None else ""


def _value_to_py(v):
    kind = v.kind
    if kind == 0:
        return _str(v.string_value)
    if kind == 1:
        return int(v.int64_value)
    if kind == 2:
        return [int(v.int64_list[i]) for i in range(v.size)]
    if kind == 3:
        return float(v.float_value)
    if kind == 4:
        return bool(v.bool_value)
    return None


def live_buffers():
    """How many native buffers are alive in this process (for leak checks)."""
    return int(_lib().cjrt_live_buffers())


def format_array(array):
    """numpy-style text of an array, as libcjrt (and `cjrt run`) prints it."""
    a = np.ascontiguousarray(array) if np.ndim(array) else np.array(array)
    code = _dtypes.from_numpy(a.dtype)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    dims = (_ctypes.c_int64 * max(1, a.ndim))(*a.shape)
    arr = _Array(code, a.ndim, dims, a.ctypes.data, a.nbytes)
    out = _c_void_p()
    _check(_lib().cjrt_array_format(_ctypes.byref(arr), _ctypes.byref(out)))
    try:
        return _ctypes.string_at(out.value).decode()
    finally:
        _lib().cjrt_free(out)


class Memory:
    """A memory space of a client (borrowed from it; lives as long as the client)."""

    def __init__(self, client, ptr):
        self._client = client
        self._ptr = ptr

    @property
    def id(self):
        return int(_lib().cjrt_memory_id(self._ptr))

    @property
    def kind(self):
        return _str(_lib().cjrt_memory_kind(self._ptr))

    @property
    def kind_id(self):
        return int(_lib().cjrt_memory_kind_id(self._ptr))

    @property
    def devices(self):
        L = _lib()
        return [self._client._device(L.cjrt_memory_device(self._ptr, i))
                for i in range(L.cjrt_memory_num_devices(self._ptr))]

    def __repr__(self):
        s = _str(_lib().cjrt_memory_to_string(self._ptr))
        return s or f"Memory(kind={self.kind!r}, id={self.id})"

    def __eq__(self, other):
        return isinstance(other, Memory) and other._ptr == self._ptr

    def __hash__(self):
        return hash(self._ptr)


class Device:
    """A device of a client (borrowed from it; lives as long as the client)."""

    def __init__(self, client, ptr):
        self._client = client
        self._ptr = ptr

    @property
    def client(self):
        return self._client

    @property
    def id(self):
        return int(_lib().cjrt_device_id(self._ptr))

    @property
    def process_index(self):
        return int(_lib().cjrt_device_process_index(self._ptr))

    @property
    def local_hardware_id(self):
        v = int(_lib().cjrt_device_local_hardware_id(self._ptr))
        return None if v < 0 else v

    @property
    def is_addressable(self):
        return bool(_lib().cjrt_device_is_addressable(self._ptr))

    @property
    def kind(self):
        return _str(_lib().cjrt_device_kind(self._ptr))

    @property
    def platform(self):
        return self._client.platform

    @property
    def attributes(self):
        L = _lib()
        out = {}
        for i in range(L.cjrt_device_num_attributes(self._ptr)):
            v = L.cjrt_device_attribute(self._ptr, i).contents
            out[_str(v.name)] = _value_to_py(v)
        return out

    @property
    def memories(self):
        L = _lib()
        return [Memory(self._client, L.cjrt_device_memory(self._ptr, i))
                for i in range(L.cjrt_device_num_memories(self._ptr))]

    def default_memory(self):
        m = _lib().cjrt_device_default_memory(self._ptr)
        return Memory(self._client, m) if m else None

    def memory_stats(self):
        """{'bytes_in_use': n} when the plugin reports it."""
        n = _ctypes.c_int64()
        _check(_lib().cjrt_device_bytes_in_use(self._ptr, _ctypes.byref(n)))
        return {"bytes_in_use": int(n.value)}

    def __str__(self):
        s = _str(_lib().cjrt_device_debug_string(self._ptr))
        return s or repr(self)

    def __repr__(self):
        s = _str(_lib().cjrt_device_to_string(self._ptr))
        return s or f"Device(id={self.id})"

    def __eq__(self, other):
        return isinstance(other, Device) and other._ptr == self._ptr

    def __hash__(self):
        return hash(self._ptr)


class _Handle:
    """Owns one native reference; frees it exactly once (close() or garbage collection)."""

    __slots__ = ("ptr", "free")

    def __init__(self, ptr, free):
        self.ptr = ptr
        self.free = free

    def close(self):
        ptr, self.ptr = self.ptr, None
        if ptr:
            self.free(ptr)

    def __del__(self):
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


def _packaged_plugin():
    """The plugin an installed wheel ships in jax_plugins/cjrt/ (beside this package), or None
    (then libcjrt's own search applies: the plugin next to libcjrt, then by name)."""
    site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(site, "jax_plugins", "cjrt", "pjrt_c_api_cjrt_plugin.so")
    return path if os.path.isfile(path) else None


class Client:
    """A PJRT client of a plugin.

    plugin: a path to a PJRT plugin .so, or a name looked up as pjrt_c_api_NAME_plugin.so,
    libNAME.so, ... (None: $CJRT_PLUGIN, else the plugin an installed wheel ships, else the cjrt
    plugin next to libcjrt).
    options: client create options, e.g. cpu_device_count=4 (int, float, bool, str, list of int).
    """

    def __init__(self, plugin=None, **options):
        L = _lib()
        plug = _c_void_p()
        if plugin is not None:
            plugin = os.fspath(plugin)
        elif not os.environ.get("CJRT_PLUGIN"):
            plugin = _packaged_plugin()
        _check(L.cjrt_plugin_open(plugin.encode() if plugin else None, _ctypes.byref(plug)))
        self._plugin = _Handle(plug.value, L.cjrt_plugin_close)
        vals = (_Value * max(1, len(options)))()
        keep = []
        for i, (name, value) in enumerate(options.items()):
            v = vals[i]
            nb = name.encode()
            keep.append(nb)
            v.name = nb
            if isinstance(value, bool):
                v.kind, v.bool_value, v.size = 4, value, 1
            elif isinstance(value, int):
                v.kind, v.int64_value, v.size = 1, value, 1
            elif isinstance(value, float):
                v.kind, v.float_value, v.size = 3, value, 1
            elif isinstance(value, str):
                sb = value.encode()
                keep.append(sb)
                v.kind, v.string_value, v.size = 0, sb, len(sb)
            elif isinstance(value, (list, tuple)) and all(isinstance(x, int) for x in value):
                arr = (_ctypes.c_int64 * max(1, len(value)))(*value)
                keep.append(arr)
                v.kind, v.int64_list, v.size = 2, arr, len(value)
            else:
                raise TypeError(f"cjrt: option {name}={value!r}: values are int, float, bool, str "
                                "or a list of ints")
        client = _c_void_p()
        _check(L.cjrt_client_create(self._plugin.ptr, vals, len(options), _ctypes.byref(client)))
        self._handle = _Handle(client.value, L.cjrt_client_free)
        self._ptr = client.value
        self._devices = {}

    def _device(self, ptr):
        d = self._devices.get(ptr)
        if d is None:
            d = self._devices[ptr] = Device(self, ptr)
        return d

    def close(self):
        """Drops this object's reference (buffers and executables keep the client alive)."""
        self._handle.close()
        self._plugin.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def plugin_path(self):
        return _str(_lib().cjrt_plugin_path(self._plugin.ptr))

    @property
    def api_version(self):
        L = _lib()
        return (L.cjrt_plugin_api_major(self._plugin.ptr), L.cjrt_plugin_api_minor(self._plugin.ptr))

    @property
    def plugin_attributes(self):
        L = _lib()
        out = {}
        for i in range(L.cjrt_plugin_num_attributes(self._plugin.ptr)):
            v = L.cjrt_plugin_attribute(self._plugin.ptr, i).contents
            out[_str(v.name)] = _value_to_py(v)
        return out

    @property
    def platform(self):
        return _str(_lib().cjrt_client_platform_name(self._ptr))

    @property
    def platform_version(self):
        return _str(_lib().cjrt_client_platform_version(self._ptr))

    @property
    def process_index(self):
        return int(_lib().cjrt_client_process_index(self._ptr))

    @property
    def devices(self):
        """Every device (addressable or not)."""
        L = _lib()
        return [self._device(L.cjrt_client_device(self._ptr, i))
                for i in range(L.cjrt_client_num_devices(self._ptr))]

    @property
    def addressable_devices(self):
        L = _lib()
        return [self._device(L.cjrt_client_addressable_device(self._ptr, i))
                for i in range(L.cjrt_client_num_addressable_devices(self._ptr))]

    local_devices = addressable_devices

    @property
    def memories(self):
        L = _lib()
        return [Memory(self, L.cjrt_client_memory(self._ptr, i))
                for i in range(L.cjrt_client_num_memories(self._ptr))]

    def _device_ptr(self, device):
        if device is None:
            return None
        if isinstance(device, Device):
            if device._client is not self:
                raise ValueError("cjrt: that device belongs to another client")
            return device._ptr
        if isinstance(device, int):
            for d in self.devices:
                if d.id == device:
                    return d._ptr
            raise ValueError(f"cjrt: no device with id {device}")
        raise TypeError("cjrt: device is a cjrt.Device or a device id")

    def compile(self, program, *, device=None, format=None):
        """Compiles MLIR text (str), MLIR bytes (text or bytecode) or a file (os.PathLike).

        format: the PJRT program format, None for "mlir" (text or bytecode); "hlo" for an
        xla.HloModuleProto (serialized) or HLO text, "hlo_with_config" for an
        xla.HloModuleProtoWithConfig."""
        if isinstance(program, os.PathLike):
            with open(program, "rb") as f:
                program = f.read()
        if isinstance(program, str):
            program = program.encode()
        if not isinstance(program, (bytes, bytearray, memoryview)):
            raise TypeError("cjrt: compile() takes MLIR text, bytes, or a path")
        code = bytes(program)
        opts = None
        keep = None
        if device is not None:
            did = device.id if isinstance(device, Device) else int(device)
            keep = (_ctypes.c_int64 * 1)(did)
            opts = _ctypes.byref(_CompileOptions(1, 1, keep, None, False))
        if format is not None:
            if not isinstance(format, str) or not format:
                raise TypeError("cjrt: compile(format=...) takes a PJRT format name such as 'hlo'")
            fmt = format.encode()
            if opts is None:
                o = _CompileOptions(1, 1, None, fmt, False)
            else:
                o = _CompileOptions(1, 1, keep, fmt, False)
            opts = _ctypes.byref(o)
        exe = _c_void_p()
        _check(_lib().cjrt_compile(self._ptr, code, len(code), opts, _ctypes.byref(exe)))
        del keep
        return Executable(self, exe.value)

    def put(self, array, device=None):
        """Copies a numpy array (or anything np.asarray takes) into a new buffer."""
        if isinstance(array, Buffer):
            if device is None or self._device_ptr(device) == _lib().cjrt_buffer_device(array._ptr):
                return array
            return array.copy_to_device(device)
        a = np.asarray(array)
        if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and not np.little_endian):
            a = a.astype(a.dtype.newbyteorder("<"))
        code = _dtypes.from_numpy(a.dtype)
        dims = (_ctypes.c_int64 * max(1, a.ndim))(*a.shape)
        strides = None
        if a.ndim and not a.flags.c_contiguous and a.size:
            strides = (_ctypes.c_int64 * a.ndim)(*a.strides)
        out = _c_void_p()
        _check(_lib().cjrt_buffer_from_host(self._ptr, self._device_ptr(device), code, dims, a.ndim,
                                            a.ctypes.data if a.size else None, strides,
                                            _ctypes.byref(out)))
        return Buffer(self, out.value)

    def from_dlpack(self, x, device=None, copy=None):
        """A buffer from any DLPack producer (numpy, torch, JAX, another cjrt buffer, or a capsule),
        viewing its memory without copying where the layout allows (dense row-major host memory
        the plugin can view); otherwise copied. copy=False refuses to copy, copy=True always
        copies."""
        if copy:
            return self.put(np.from_dlpack(x) if hasattr(x, "__dlpack__") else x, device)
        if hasattr(x, "__dlpack__"):
            if hasattr(x, "__dlpack_device__"):
                dev_type, dev_id = x.__dlpack_device__()
                if int(dev_type) not in (1, 3, 11, 13):
                    raise BufferError(f"cjrt: the tensor is on DLPack device ({int(dev_type)}, "
                                      f"{dev_id}), not in host memory")
            try:
                capsule = x.__dlpack__(max_version=(1, 1))
            except TypeError:
                capsule = x.__dlpack__()  # producers from before DLPack 1.0 (numpy 1.24, torch 1.x)
        else:
            capsule = x
        managed, versioned = _dlpack.open_capsule(capsule)
        out = _c_void_p()
        copied = _ctypes.c_bool()
        _check(_lib().cjrt_buffer_from_dlpack(self._ptr, self._device_ptr(device), managed, versioned,
                                              _ctypes.byref(out), _ctypes.byref(copied)))
        _dlpack.mark_consumed(capsule, versioned)  # the buffer owns the tensor now
        buf = Buffer(self, out.value)
        buf._copied_on_import = bool(copied.value)
        if copy is False and copied.value:
            raise BufferError("cjrt: the tensor's layout or memory cannot be viewed without a copy")
        return buf


class Executable:
    """A compiled program. Call it with numpy arrays or buffers; it returns buffers (one, or a
    tuple when the program has several results)."""

    def __init__(self, client, ptr):
        self._client = client
        self._handle = _Handle(ptr, _lib().cjrt_executable_free)
        self._ptr = ptr

    @property
    def client(self):
        return self._client

    @property
    def name(self):
        return _str(_lib().cjrt_executable_name(self._ptr))

    @property
    def num_outputs(self):
        return int(_lib().cjrt_executable_num_outputs(self._ptr))

    @property
    def devices(self):
        L = _lib()
        return [self._client._device(L.cjrt_executable_device(self._ptr, i))
                for i in range(L.cjrt_executable_num_devices(self._ptr))]

    @property
    def fingerprint(self):
        f = _lib().cjrt_executable_fingerprint(self._ptr)
        return _str(f) if f is not None else None

    @property
    def output_shapes(self):
        """[(dtype, shape)] as the plugin reports them (None entries where it does not)."""
        L = _lib()
        out = []
        for i in range(self.num_outputs):
            rank = _ctypes.c_int()
            dims = L.cjrt_executable_output_dims(self._ptr, i, _ctypes.byref(rank))
            code = L.cjrt_executable_output_dtype(self._ptr, i)
            shape = tuple(dims[k] for k in range(rank.value)) if rank.value >= 0 else None
            dtype = _dtypes.to_numpy(code) if code else None
            out.append((dtype, shape))
        return out

    def __call__(self, *args):
        L = _lib()
        devs = self.devices
        if len(devs) != 1:
            raise CjrtError(f"cjrt: the executable runs on {len(devs)} devices; calling it runs one",
                            "INVALID_ARGUMENT")
        dev = devs[0]
        bufs = []
        for a in args:
            if isinstance(a, Buffer):
                if L.cjrt_buffer_device(a._ptr) != dev._ptr:
                    a = a.copy_to_device(dev)
            else:
                a = self._client.put(a, dev)
            bufs.append(a)
        n = self.num_outputs
        argv = (_c_void_p * max(1, len(bufs)))(*[b._ptr for b in bufs])
        outv = (_c_void_p * max(1, n))()
        _check(L.cjrt_execute(self._ptr, argv, len(bufs), outv, n))
        outs = tuple(Buffer(self._client, outv[i]) for i in range(n))
        return outs[0] if n == 1 else outs


class Buffer:
    """An array on a device. np.asarray(buf) copies it to the host; np.from_dlpack(buf) views it."""

    __array_priority__ = 100

    def __init__(self, client, ptr):
        self._client = client
        self._handle = _Handle(ptr, _lib().cjrt_buffer_free)
        self._ptr = ptr
        self._copied_on_import = False

    # ---- description ----
    @property
    def client(self):
        return self._client

    @property
    def dtype(self):
        return _dtypes.to_numpy(_lib().cjrt_buffer_dtype(self._ptr))

    @property
    def shape(self):
        L = _lib()
        rank = L.cjrt_buffer_rank(self._ptr)
        dims = L.cjrt_buffer_dims(self._ptr)
        return tuple(int(dims[i]) for i in range(rank))

    @property
    def ndim(self):
        return int(_lib().cjrt_buffer_rank(self._ptr))

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self):
        return int(_lib().cjrt_buffer_nbytes(self._ptr))

    @property
    def device(self):
        ptr = _lib().cjrt_buffer_device(self._ptr)
        return self._client._device(ptr) if ptr else None

    def __len__(self):
        if not self.ndim:
            raise TypeError("len() of a 0-d buffer")
        return self.shape[0]

    def __repr__(self):
        type_name = _str(_lib().cjrt_dtype_name(_lib().cjrt_buffer_dtype(self._ptr)))
        return f"cjrt.Buffer({type_name}{list(self.shape)}, device={self.device!r})"

    # ---- data ----
    def block_until_ready(self):
        _check(_lib().cjrt_buffer_await(self._ptr))
        return self

    def to_numpy(self):
        """A new numpy array with the buffer's contents."""
        out = np.empty(self.shape, dtype=self.dtype)
        _check(_lib().cjrt_buffer_to_host(self._ptr, out.ctypes.data if out.size else None, out.nbytes))
        return out

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("cjrt: np.asarray(buffer) copies; np.from_dlpack(buffer) views without copying")
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def copy_to_device(self, device):
        out = _c_void_p()
        _check(_lib().cjrt_buffer_copy_to_device(self._ptr, self._client._device_ptr(device),
                                                 _ctypes.byref(out)))
        return Buffer(self._client, out.value)

    def unsafe_buffer_pointer(self):
        p = _ctypes.c_size_t()
        _check(_lib().cjrt_buffer_unsafe_pointer(self._ptr, _ctypes.byref(p)))
        return int(p.value)

    def is_on_cpu(self):
        b = _ctypes.c_bool()
        _check(_lib().cjrt_buffer_is_on_cpu(self._ptr, _ctypes.byref(b)))
        return bool(b.value)

    def delete(self):
        """Frees the device memory now (PJRT_Buffer_Delete); the object remains, deleted."""
        _check(_lib().cjrt_buffer_delete(self._ptr))

    def is_deleted(self):
        return bool(_lib().cjrt_buffer_is_deleted(self._ptr))

    # ---- DLPack ----
    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: exported buffers live in host memory (checked on export)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(int(v) for v in dl_device) != (1, 0):
            raise BufferError(f"cjrt: buffers are exported to the CPU (1, 0), not {tuple(dl_device)}")
        if copy:  # a host copy, exported by numpy
            host = self.to_numpy()
            if max_version is not None:
                try:
                    return host.__dlpack__(max_version=max_version)
                except TypeError:  # numpy before 2.0 makes only legacy capsules
                    pass
            return host.__dlpack__()
        versioned = max_version is not None and int(max_version[0]) >= 1
        minor = int(max_version[1]) if versioned and int(max_version[0]) == 1 else (1 if versioned else 0)
        managed = _c_void_p()
        try:
            _check(_lib().cjrt_buffer_to_dlpack(self._ptr, versioned, minor, _ctypes.byref(managed)))
        except CjrtError as e:
            raise BufferError(str(e)) from None
        return _dlpack.make_capsule(managed.value, versioned)
