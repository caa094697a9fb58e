"""Writes the .npy files test_loader_arrays reads (run with numpy and ml_dtypes installed):
    python tests/loader/data/make_data.py tests/loader/data"""
import os
import sys

import ml_dtypes
import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def save(name, a):
    np.save(os.path.join(out, name), a)


save("f32_2x3.npy", np.arange(6, dtype=np.float32).reshape(2, 3) + np.float32(0.5))
save("i64_fortran.npy", np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3)))
save("i32_be.npy", np.array([1, -2, 70000], dtype=">i4"))
save("c64_be.npy", np.array([1 + 2j, 3 - 4j], dtype=">c8"))
save("bool.npy", np.array([True, False, True]))
save("scalar_f64.npy", np.array(2.5))
save("empty_0x3.npy", np.zeros((0, 3), np.float32))
save("bf16.npy", np.array([1.0, 2.5], dtype=ml_dtypes.bfloat16))
save("f8e5m2.npy", np.array([1.0, -2.0], dtype=ml_dtypes.float8_e5m2))
save("f8e4m3fn.npy", np.array([1.0, 0.5], dtype=ml_dtypes.float8_e4m3fn))
save("strings.npy", np.array(["abc", "de"]))
save("record.npy", np.zeros(2, dtype=[("a", "<i4")]))
save("datetime.npy", np.zeros(2, dtype="M8[s]"))
with open(os.path.join(out, "truncated.npy"), "wb") as f:
    np.save(f, np.arange(100, dtype=np.float64))
with open(os.path.join(out, "truncated.npy"), "r+b") as f:
    f.truncate(128 + 40)
with open(os.path.join(out, "not_npy.txt"), "w") as f:
    f.write("this is not a .npy file\n")
