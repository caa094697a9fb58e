#!/usr/bin/env python3
"""Transcendental micro benchmark through JAX: cjrt against XLA:CPU, interleaved in one process.

For each function (jnp.exp, log, ..., jax.nn.sigmoid, jax.nn.gelu) and dtype and size, one jitted
call per platform on the same inputs (committed to each platform's first device), then timed
calls in interleaved rounds (cjrt, XLA:CPU, cjrt, ...; each a dispatch + block_until_ready) until
--min-time seconds and at least 5 rounds; the medians and their ratio cjrt / XLA:CPU are printed
(below 1: cjrt is faster), with how far cjrt's values are from XLA:CPU's ("=" bit-identical, else
the largest difference in ulps of the dtype, NaNs compared as NaNs).

usage: PYTHONPATH=python CJRT_JAX_PLUGIN_PATH=build/pjrt_c_api_cjrt_plugin.so \\
         python bench/vmath_jax.py [--threads 1] [--only exp,log] [--sizes 1024,65536,1048576]
                                   [--dtypes f32,bf16,f64] [--min-time 0.3]
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def functions(jax, jnp):
    """name -> (function, number of array operands, input range (lo, hi))"""
    return {
        "exp": (jnp.exp, 1, (-80, 80)),
        "log": (jnp.log, 1, (1e-3, 1e3)),
        "logistic": (jax.nn.sigmoid, 1, (-20, 20)),
        "tanh": (jnp.tanh, 1, (-10, 10)),
        "erf": (jax.scipy.special.erf, 1, (-4, 4)),
        "log1p": (jnp.log1p, 1, (-0.9, 10)),
        "expm1": (jnp.expm1, 1, (-5, 5)),
        "sqrt": (jnp.sqrt, 1, (0, 100)),
        "rsqrt": (jax.lax.rsqrt, 1, (1e-3, 100)),
        "pow": (jnp.power, 2, (0.1, 10)),
        "sin": (jnp.sin, 1, (-10, 10)),
        "cos": (jnp.cos, 1, (-10, 10)),
        "gelu_tanh": (lambda x: jax.nn.gelu(x, approximate=True), 1, (-6, 6)),
        "gelu_erf": (lambda x: jax.nn.gelu(x, approximate=False), 1, (-6, 6)),
    }


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--plugin", default=None, help="pjrt_c_api_cjrt_plugin.so")
    ap.add_argument("--threads", type=int, default=1, help="CPUs for both platforms (default 1)")
    ap.add_argument("--only", default=None, help="comma-separated function names")
    ap.add_argument("--sizes", default="1024,65536,1048576")
    ap.add_argument("--dtypes", default="f32", help="comma-separated: f32, bf16, f64")
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="cpu (default): the process's CPU time, all its threads (robust on a "
                         "loaded machine, where wall time counts the time others hold the CPU); "
                         "wall: elapsed time")
    ap.add_argument("--batch-time", type=float, default=0.02,
                    help="seconds of back-to-back calls per platform per round (default 0.02): "
                         "XLA:CPU's pool threads spin a while after a parallel op and, pinned to "
                         "the same CPUs, slow whatever runs next; batches confine that to the "
                         "first call of each")
    return ap.parse_args()


def ulp_diff(np, a, b):
    """the largest difference of a and b in ulps of their dtype (0: bit-identical up to NaN)"""
    a = np.asarray(a)
    b = np.asarray(b)
    ut = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
    bits = 8 * a.dtype.itemsize

    def line(v):  # the bit patterns on a monotone line: negative floats descend
        u = v.view(ut).astype(np.uint64)
        mag = (u & np.uint64((1 << (bits - 1)) - 1)).astype(np.float64)
        return np.where((u >> np.uint64(bits - 1)) != 0, -mag, mag)

    d = np.abs(line(a) - line(b))
    d[np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))] = 0
    return float(d.max()) if d.size else 0.0


def main():
    opts = parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    if opts.threads:
        os.sched_setaffinity(0, cpus[:opts.threads])
    os.environ.setdefault("CJRT_CPU_DEVICE_COUNT", "1")
    if opts.plugin:
        os.environ["CJRT_JAX_PLUGIN_PATH"] = os.path.abspath(opts.plugin)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import jax
    import jax.numpy as jnp
    import numpy as np

    jax.config.update("jax_num_cpu_devices", 1)
    jax.config.update("jax_enable_x64", True)
    cj = jax.devices("cjrt")[0]
    xl = jax.devices("cpu")[0]
    fns = functions(jax, jnp)
    names = opts.only.split(",") if opts.only else list(fns)
    unknown = [n for n in names if n not in fns]
    if unknown:
        sys.exit(f"unknown function(s) {', '.join(unknown)}; known: {', '.join(fns)}")
    dts = {"f32": np.float32, "f64": np.float64, "bf16": jnp.bfloat16}
    rng = np.random.default_rng(0)
    print(f"jax {jax.__version__}; {len(os.sched_getaffinity(0))} threads; ratio = cjrt / XLA:CPU")
    print(f"{'function':10s} {'dtype':5s} {'n':>8s} {'xla us':>9s} {'cjrt us':>9s} {'ratio':>6s}  diff")
    logs = []
    for name in names:
        fn, arity, (lo, hi) = fns[name]
        for dn in opts.dtypes.split(","):
            dt = dts[dn]
            for n in (int(s) for s in opts.sizes.split(",")):
                host = [rng.uniform(lo, hi, n).astype(np.float64).astype(dt) for _ in range(arity)]
                res, calls = {}, {}
                for key, dev in (("xla", xl), ("cjrt", cj)):
                    args = [jax.device_put(h, dev) for h in host]
                    f = jax.jit(fn).lower(*args).compile()
                    res[key] = np.asarray(f(*args))
                    calls[key] = (f, args)
                diff = ulp_diff(np, res["cjrt"], res["xla"])
                times = {"xla": [], "cjrt": []}
                reps = {}
                for key in times:  # warm up, and calls per batch
                    f, args = calls[key]
                    f(*args).block_until_ready()
                    t0 = time.perf_counter()
                    f(*args).block_until_ready()
                    reps[key] = max(1, int(opts.batch_time / max(time.perf_counter() - t0, 1e-6)))
                clock = time.process_time if opts.clock == "cpu" else time.perf_counter
                t_end = time.perf_counter() + opts.min_time
                while time.perf_counter() < t_end or len(times["xla"]) < 5:
                    for key in ("cjrt", "xla"):
                        f, args = calls[key]
                        t0 = clock()
                        for _ in range(reps[key]):
                            f(*args).block_until_ready()
                        times[key].append((clock() - t0) / reps[key])
                tx = statistics.median(times["xla"])
                tc = statistics.median(times["cjrt"])
                logs.append(np.log(tc / tx))
                print(f"{name:10s} {dn:5s} {n:8d} {tx * 1e6:9.1f} {tc * 1e6:9.1f} {tc / tx:6.2f}  "
                      f"{'=' if diff == 0 else f'{diff:g} ulp'}", flush=True)
    if logs:
        print(f"geomean ratio {float(np.exp(np.mean(logs))):.2f} over {len(logs)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
