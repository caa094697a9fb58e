#!/usr/bin/env python3
"""Reductions on cjrt and on XLA:CPU, measured interleaved in one process: run time of each and
the ratio (cjrt / XLA:CPU: below 1 means cjrt is faster).

Cases: sum, max, min, prod, argmax, mean, var, logsumexp over each axis of a 1024x1024 and a
32x32x32x32 f32 array; softmax and layer norm over the last axis of both; bf16 sums (jnp.sum,
which computes in f32, and lax.reduce in bf16) over each axis of a 1024x1024 bf16 array.

Method: one jit per case and platform, inputs committed to the platform's device; after
warm-up, rounds alternate one cjrt call and one XLA:CPU call (each with block_until_ready) until
--min-time seconds have passed per case; the median of each platform's times is reported.
Threads as in jax_bench.py (--threads pins the process; both platforms size their pools from
it). Also reports the largest relative difference of the two results.

usage: PYTHONPATH=python python bench/reduce_bench.py [--plugin PATH] [--threads N]
           [--min-time S] [--only SUBSTRING ...]
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from jax_bench import fmt_time, pin  # noqa: E402


def cases(jax, jnp, np):
    from jax import lax
    ops = {
        "sum": lambda x, a: jnp.sum(x, axis=a),
        "max": lambda x, a: jnp.max(x, axis=a),
        "min": lambda x, a: jnp.min(x, axis=a),
        "prod": lambda x, a: jnp.prod(x, axis=a),
        "argmax": lambda x, a: jnp.argmax(x, axis=a),
        "mean": lambda x, a: jnp.mean(x, axis=a),
        "var": lambda x, a: jnp.var(x, axis=a),
        "logsumexp": lambda x, a: jax.nn.logsumexp(x, axis=a),
    }

    def layer_norm(x):
        m = jnp.mean(x, axis=-1, keepdims=True)
        v = jnp.var(x, axis=-1, keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5)

    rng = np.random.default_rng(0)
    out = []
    for shape in [(1024, 1024), (32, 32, 32, 32)]:
        # values near 1 so that products stay finite
        x = (1.0 + 1e-4 * rng.standard_normal(shape)).astype(np.float32)
        tag = "x".join(map(str, shape))
        for name, f in ops.items():
            for ax in range(len(shape)):
                out.append((f"{name} {tag} axis {ax}", (lambda f, ax: lambda v: f(v, ax))(f, ax), x))
        out.append((f"softmax {tag} last", lambda v: jax.nn.softmax(v, axis=-1), x))
        out.append((f"layernorm {tag} last", layer_norm, x))
    xb = rng.standard_normal((1024, 1024)).astype(jnp.bfloat16)
    for ax in range(2):
        out.append((f"sum bf16 1024x1024 axis {ax}", (lambda ax: lambda v: jnp.sum(v, axis=ax))(ax), xb))
        out.append((f"lax.reduce add bf16 1024x1024 axis {ax}",
                    (lambda ax: lambda v: lax.reduce(v, np.array(0, v.dtype), lax.add, (ax,)))(ax), xb))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin", default=None)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--only", nargs="+", default=None)
    args = ap.parse_args()
    nthreads = pin(args.threads)
    os.environ.setdefault("CJRT_CPU_DEVICE_COUNT", "1")
    if args.plugin:
        os.environ["CJRT_JAX_PLUGIN_PATH"] = os.path.abspath(args.plugin)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import numpy as np
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_num_cpu_devices", 1)
    cj, xla = jax.devices("cjrt")[0], jax.devices("cpu")[0]
    print(f"jax {jax.__version__}; {nthreads} threads; "
          f"cjrt: {cj.client.platform_version.splitlines()[-1]}")
    print("| case | cjrt | XLA:CPU | ratio | max rel diff |")
    print("|---|---:|---:|---:|---:|")
    ratios = []
    for name, f, x in cases(jax, jnp, np):
        if args.only and not any(s in name for s in args.only):
            continue
        fns, xs, outs = {}, {}, {}
        for label, dev in (("cj", cj), ("xla", xla)):
            xs[label] = jax.device_put(x, dev)
            fns[label] = jax.jit(f)
            outs[label] = np.asarray(jax.block_until_ready(fns[label](xs[label])))
            for _ in range(3):
                jax.block_until_ready(fns[label](xs[label]))
        times = {"cj": [], "xla": []}
        t_end = time.perf_counter() + args.min_time
        while time.perf_counter() < t_end or len(times["cj"]) < 5:
            for label in ("cj", "xla"):
                t0 = time.perf_counter()
                jax.block_until_ready(fns[label](xs[label]))
                times[label].append(time.perf_counter() - t0)
        tc, tx = statistics.median(times["cj"]), statistics.median(times["xla"])
        a, b = outs["cj"].astype(np.float64), outs["xla"].astype(np.float64)
        diff = float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))
        ratios.append(tc / tx)
        print(f"| {name} | {fmt_time(tc)} | {fmt_time(tx)} | {tc / tx:.2f} | {diff:.1e} |",
              flush=True)
    if ratios:
        geo = float(np.exp(np.mean(np.log(ratios))))
        print(f"\ngeometric mean ratio {geo:.2f}; worst {max(ratios):.2f} "
              "(cjrt / XLA:CPU, below 1: cjrt is faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
