"""Element types: cjrt/PJRT codes <-> numpy dtypes (ml_dtypes for the types numpy lacks)."""

import numpy as np

try:  # optional: bfloat16, float8/6/4 and int4/2/1 arrays
    import ml_dtypes
except ImportError:  # pragma: no cover - exercised only without ml_dtypes
    ml_dtypes = None

# PJRT_Buffer_Type code -> (short name, numpy dtype name, ml_dtypes attribute or None)
_TABLE = {
    1: ("pred", "bool", None),
    2: ("s8", "int8", None),
    3: ("s16", "int16", None),
    4: ("s32", "int32", None),
    5: ("s64", "int64", None),
    6: ("u8", "uint8", None),
    7: ("u16", "uint16", None),
    8: ("u32", "uint32", None),
    9: ("u64", "uint64", None),
    10: ("f16", "float16", None),
    11: ("f32", "float32", None),
    12: ("f64", "float64", None),
    13: ("bf16", None, "bfloat16"),
    14: ("c64", "complex64", None),
    15: ("c128", "complex128", None),
    16: ("f8e5m2", None, "float8_e5m2"),
    17: ("f8e4m3fn", None, "float8_e4m3fn"),
    18: ("f8e4m3b11fnuz", None, "float8_e4m3b11fnuz"),
    19: ("f8e5m2fnuz", None, "float8_e5m2fnuz"),
    20: ("f8e4m3fnuz", None, "float8_e4m3fnuz"),
    21: ("s4", None, "int4"),
    22: ("u4", None, "uint4"),
    24: ("s2", None, "int2"),
    25: ("u2", None, "uint2"),
    26: ("f8e4m3", None, "float8_e4m3"),
    27: ("f8e3m4", None, "float8_e3m4"),
    28: ("f8e8m0fnu", None, "float8_e8m0fnu"),
    29: ("f4e2m1fn", None, "float4_e2m1fn"),
    30: ("s1", None, "int1"),
    31: ("u1", None, "uint1"),
    32: ("f6e2m3fn", None, "float6_e2m3fn"),
    33: ("f6e3m2fn", None, "float6_e3m2fn"),
}

_code_to_np = {}
_np_to_code = {}
for _code, (_short, _npname, _ml) in _TABLE.items():
    _dt = None
    if _npname is not None:
        _dt = np.dtype(_npname)
    elif ml_dtypes is not None and hasattr(ml_dtypes, _ml):
        _dt = np.dtype(getattr(ml_dtypes, _ml))
    if _dt is not None:
        _code_to_np[_code] = _dt
        _np_to_code[_dt] = _code


def name_of(code):
    entry = _TABLE.get(code)
    return entry[0] if entry else f"type{code}"


def to_numpy(code):
    """The numpy dtype of a PJRT element type code."""
    try:
        return _code_to_np[code]
    except KeyError:
        entry = _TABLE.get(code)
        if entry and entry[2] and ml_dtypes is None:
            raise TypeError(f"cjrt: element type {entry[0]} needs the ml_dtypes package") from None
        raise TypeError(f"cjrt: element type {name_of(code)} has no numpy dtype") from None


def from_numpy(dtype):
    """The PJRT element type code of a numpy dtype (native byte order)."""
    dt = np.dtype(dtype)
    if dt.byteorder == ">" or (dt.byteorder == "=" and not np.little_endian):
        dt = dt.newbyteorder("<")
    try:
        return _np_to_code[dt]
    except KeyError:
        raise TypeError(f"cjrt: numpy dtype {dt} has no PJRT element type") from None


def all_codes():
    """Every element type code that has a numpy dtype here."""
    return sorted(_code_to_np)
