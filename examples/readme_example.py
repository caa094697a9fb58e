"""The README's Python example (run from the repository root with PYTHONPATH=python)."""
import numpy as np, cjrt  # noqa: E401

client = cjrt.Client()  # the cjrt plugin; or cjrt.Client("path/to/plugin.so", cpu_device_count=4)
exe = client.compile(open("examples/hello.mlir").read())
prod, mm = exe(np.array([[1, 2], [3, 4]], np.float32), np.array([[10, 20], [30, 40]], np.float32))
print(np.asarray(prod), np.from_dlpack(mm), sep="\n")  # a copy, and a zero-copy view
