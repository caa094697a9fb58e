"""Compiling and executing through the Python bindings (skipped while the plugin cannot compile),
and the README's Python example."""
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import cjrt

# (not imported from conftest: python/tests/jax has a conftest of its own, and pytest keeps one
# module named "conftest" at a time)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


def hello_inputs():
    a = np.array([[1, 2], [3, 4]], np.float32)
    b = np.array([[10, 20], [30, 40]], np.float32)
    return a, b

WANT_PROD = np.array([[11, 44], [99, 176]], np.float32)
WANT_MM = np.array([[70, 100], [150, 220]], np.float32)


def test_hello_with_numpy(hello, no_leaks):
    a, b = hello_inputs()
    assert hello.num_outputs == 2 and len(hello.devices) == 1
    prod, mm = hello(a, b)
    np.testing.assert_array_equal(np.asarray(prod), WANT_PROD)
    np.testing.assert_array_equal(np.from_dlpack(mm), WANT_MM)
    assert prod.shape == (2, 2) and prod.dtype == np.float32
    shapes = hello.output_shapes
    assert shapes == [(np.dtype(np.float32), (2, 2))] * 2
    del prod, mm


def test_hello_with_buffers_and_repeats(client, hello, no_leaks):
    a, b = (client.put(x) for x in hello_inputs())
    for _ in range(20):
        prod, mm = hello(a, b)
        np.testing.assert_array_equal(np.asarray(prod), WANT_PROD)
    # outputs feed back in as inputs
    p2, _ = hello(prod, mm)
    np.testing.assert_array_equal(np.asarray(p2), (WANT_PROD + WANT_MM) * WANT_PROD)
    del a, b, prod, mm, p2


def test_dlpack_inputs(client, hello, no_leaks):
    a, b = hello_inputs()
    va, vb = client.from_dlpack(a), client.from_dlpack(b)  # zero-copy views as arguments
    prod, _ = hello(va, vb)
    np.testing.assert_array_equal(np.asarray(prod), WANT_PROD)
    del va, vb, prod, _


def test_on_another_device(client, hello):
    d1 = client.devices[1]
    exe = client.compile(open(os.path.join(EXAMPLES, "hello.mlir")).read(), device=d1)
    assert exe.devices == [d1]
    prod, _ = exe(*hello_inputs())
    assert prod.device == d1
    np.testing.assert_array_equal(np.asarray(prod), WANT_PROD)
    # buffers on device 0 are moved for it
    prod2, _ = exe(*(client.put(x) for x in hello_inputs()))
    np.testing.assert_array_equal(np.asarray(prod2), WANT_PROD)


def test_compile_from_path_and_bytes(client, hello):
    from pathlib import Path

    path = Path(EXAMPLES) / "hello.mlir"
    for program in (path, path.read_bytes()):
        prod, _ = client.compile(program)(*hello_inputs())
        np.testing.assert_array_equal(np.asarray(prod), WANT_PROD)


def test_bytecode_from_jax(client, hello):
    """A StableHLO portable artifact (VHLO in MLIR bytecode) as jax.export writes it."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    spec = jax.ShapeDtypeStruct((2, 2), jnp.float32)
    exported = jax.export.export(jax.jit(lambda a, b: ((a + b) * a, a @ b)), platforms=["cpu"])(spec, spec)
    bc = exported.mlir_module_serialized
    assert bc[:4] == b"ML\xefR"
    exe = client.compile(bc)
    prod, mm = exe(*hello_inputs())
    np.testing.assert_array_equal(np.asarray(prod), WANT_PROD)
    np.testing.assert_array_equal(np.asarray(mm), WANT_MM)
    del prod, mm


def test_errors(client, hello):
    a, b = hello_inputs()
    with pytest.raises(cjrt.CjrtError) as e:
        client.compile("func.func @main(%x: tensor<f32>) -> tensor<f32> {\n  %y = stablehlo.bogus %x\n")
    assert "PJRT_Client_Compile" in str(e.value)
    with pytest.raises(cjrt.CjrtError):
        hello(a)  # one argument short
    with pytest.raises(cjrt.CjrtError):
        hello(a.astype(np.int32), b)  # wrong type
    with pytest.raises(cjrt.CjrtError):
        hello(np.ones((3, 1), np.float32), b)  # wrong shape
    with pytest.raises(TypeError):
        client.compile(42)


def test_freed_exactly_once(client, hello):
    gc.collect()
    before = cjrt.live_buffers()
    a, b = hello_inputs()
    outs = [hello(a, b) for _ in range(10)]
    views = [np.from_dlpack(o[1]) for o in outs]
    del outs
    gc.collect()
    assert cjrt.live_buffers() == before + 10  # the views hold the second outputs
    for v in views:
        np.testing.assert_array_equal(v, WANT_MM)
    del views, v
    gc.collect()
    assert cjrt.live_buffers() == before


def test_readme_python_example(hello):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python") + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "readme_example.py")], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "[[ 11.  44.]\n [ 99. 176.]]\n[[ 70. 100.]\n [150. 220.]]\n"
