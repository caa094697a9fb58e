"""DLPack capsules, made and consumed with ctypes.pythonapi (no compiled extension).

The managed tensors themselves, and their deleters, are libcjrt's (cjrt_buffer_to_dlpack /
cjrt_buffer_from_dlpack): a deleter is plain C, so a consumer may call it from any thread without
Python. Only the capsule (the Python object that carries the pointer until a consumer takes it)
is made here. Capsule names follow the Python DLPack spec: "dltensor" for the legacy tensor,
"dltensor_versioned" for DLPack 1.x; a consumer renames the capsule to "used_..." when it takes
ownership, and the capsule's destructor then leaves the tensor alone.
"""

import ctypes

# a handle of our own: argtypes set on ctypes.pythonapi's functions would be shared with (and
# changed by) every other module of the process
_api = ctypes.PyDLL(None)

_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, _DESTRUCTOR]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.c_void_p, ctypes.c_void_p]

# Capsule names must stay valid for as long as any capsule uses them: module-level buffers.
_NAMES = {
    key: ctypes.create_string_buffer(value)
    for key, value in {
        "legacy": b"dltensor",
        "versioned": b"dltensor_versioned",
        "used_legacy": b"used_dltensor",
        "used_versioned": b"used_dltensor_versioned",
    }.items()
}


def _name(key):
    return ctypes.cast(_NAMES[key], ctypes.c_void_p)


# Offsets of `deleter` in DLManagedTensor (after the 48-byte DLTensor and manager_ctx) and in
# DLManagedTensorVersioned (after version and manager_ctx).
_DELETER_OFFSET = {"legacy": 56, "versioned": 16}


def _call_deleter(managed, kind):
    fn = ctypes.c_void_p.from_address(managed + _DELETER_OFFSET[kind]).value
    if fn:
        _DELETER(fn)(managed)


@_DESTRUCTOR
def _capsule_destructor(capsule):
    # Runs while the capsule is being freed: it must not touch the capsule as a Python object
    # (the argument is a raw address, so ctypes takes no reference to it).
    try:
        for kind in ("legacy", "versioned"):
            if _api.PyCapsule_IsValid(capsule, _name(kind)):
                managed = _api.PyCapsule_GetPointer(capsule, _name(kind))
                if managed:
                    _call_deleter(managed, kind)
                return
    except Exception:  # pragma: no cover - interpreter shutdown
        pass


def make_capsule(managed, versioned):
    """A capsule owning the managed tensor at address `managed` until a consumer takes it."""
    return _api.PyCapsule_New(managed, _name("versioned" if versioned else "legacy"),
                              _capsule_destructor)


def open_capsule(capsule):
    """(address of the managed tensor, versioned) of an unconsumed DLPack capsule."""
    addr = id(capsule)
    for kind in ("versioned", "legacy"):
        if _api.PyCapsule_IsValid(addr, _name(kind)):
            return _api.PyCapsule_GetPointer(addr, _name(kind)), kind == "versioned"
    raise BufferError("cjrt: not a DLPack capsule, or one that was already consumed")


def mark_consumed(capsule, versioned):
    """Renames the capsule so that its destructor leaves the tensor to its new owner."""
    if _api.PyCapsule_SetName(id(capsule), _name("used_versioned" if versioned else "used_legacy")):
        raise RuntimeError("cjrt: PyCapsule_SetName failed")
