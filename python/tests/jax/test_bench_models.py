"""The model benchmark suite's workloads (bench/zoo/, timed by bench/models.py), each run once
on cjrt and on XLA:CPU and compared: no timing here. A workload whose model library (flax,
optax, equinox: bench/requirements-bench.txt) is not installed is skipped, saying which."""
import os
import sys

import pytest

jax = pytest.importorskip("jax")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import zoo  # noqa: E402

WORKLOADS = zoo.all_workloads()


@pytest.mark.parametrize("wl", WORKLOADS, ids=[w.name for w in WORKLOADS])
def test_workload_matches_xla_cpu(wl, cj, cpu):
    with zoo.x64_scope(wl):
        _check_workload(wl, cj, cpu)


def _check_workload(wl, cj, cpu):
    missing = wl.missing()
    if missing:
        pytest.skip(f"{wl.name} needs {', '.join(missing)} (pip install -r "
                    "bench/requirements-bench.txt)")
    with jax.default_device(cpu):
        fn, args = wl.make()
    want_fn = jax.jit(fn)
    args = zoo.warm_args(wl, lambda a: want_fn(*jax.device_put(a, cpu)), args)
    want = jax.block_until_ready(want_fn(*jax.device_put(args, cpu)))
    got = jax.block_until_ready(jax.jit(fn)(*jax.device_put(args, cj)))
    for leaf in jax.tree.leaves(got):
        if isinstance(leaf, jax.Array):
            assert leaf.devices() == {cj}, f"an output is on {leaf.devices()}, not {cj}"
    zoo.compare(wl, got, want, args)


def test_suite_is_broad():
    """The suite keeps its breadth: at least 25 workloads, names unique, each described."""
    names = [w.name for w in WORKLOADS]
    assert len(names) >= 25
    assert len(set(names)) == len(names)
    assert all(w.what for w in WORKLOADS)


def test_compare_catches_a_wrong_leaf():
    """The check the workloads rely on: a leaf 1% off (or an index off by one) is a mismatch
    that names the leaf; the rounding-sized difference is not."""
    import numpy as np

    wl = zoo.Workload("t", "t", None)
    want = {"a": np.linspace(1, 2, 64, dtype=np.float32), "i": np.arange(4, dtype=np.int32)}
    zoo.compare(wl, {"a": want["a"] * (1 + 1e-6), "i": want["i"]}, want, ())
    with pytest.raises(AssertionError, match=r"\['a'\]"):
        zoo.compare(wl, {"a": want["a"] * 1.01, "i": want["i"]}, want, ())
    with pytest.raises(AssertionError, match=r"\['i'\]"):
        zoo.compare(wl, {"a": want["a"], "i": want["i"] + 1}, want, ())
