#!/usr/bin/env python3
"""JAX programs on cjrt and on XLA:CPU, measured in the same run: compile time and run time of
each, and the ratios (cjrt / XLA:CPU: below 1 means cjrt is faster).

Workloads (the models are python/tests/jax/jaxmodels.py, plain jax.numpy):
  mlp_train     MLP 784-512-512-10, batch 128: forward, softmax cross-entropy, grad, SGD
  conv_train    conv net (two 3x3 conv + relu + 2x2 avg pool, dense), 28x28x1, batch 32: SGD step
  transformer   transformer block (causal 8-head attention, layer norm, GELU MLP), d=256,
                128 tokens, batch 4: SGD step
  scan_rnn      RNN over 256 steps (lax.scan), hidden 64, batch 8: SGD step
  tiny          lambda x: x * 2 + 1 on 4 floats: the per-call overhead of a jitted function

Method: for each platform, compile time is `lowered.compile()` (the backend's compile of the
module JAX sends, plus JAX's own work around it: serializing the module, building the executable
wrapper), from a fresh jit and lowering each repetition so no in-memory cache answers; the
minimum of --compile-reps. Run time is one call plus
block_until_ready, median over at least --min-time seconds after warm-up calls, with the same
inputs committed to the platform's first device (no donation, so every call is alike).

Threads: both platforms size their thread pools from the process's CPU affinity (XLA:CPU's
Eigen and thunk pools through tsl's NumSchedulableCPUs, cjrt's pool through sched_getaffinity),
so --threads N pins this process to N CPUs before JAX starts and both use N threads (default:
every CPU the process may use). Each platform has 1 device here (cpu_device_count=1 and
jax_num_cpu_devices=1) so neither splits the machine between devices.

usage: PYTHONPATH=python python bench/jax_bench.py [--plugin PATH] [--threads N]
           [--min-time S] [--only NAME ...] [--json FILE]
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--plugin", default=None,
                    help="pjrt_c_api_cjrt_plugin.so (default: what jax_plugins.cjrt finds: "
                         "$CJRT_JAX_PLUGIN_PATH, the installed package's, build/'s)")
    ap.add_argument("--threads", type=int, default=None, help="CPUs for both platforms")
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds of timed runs per case")
    ap.add_argument("--compile-reps", type=int, default=3)
    ap.add_argument("--only", nargs="+", default=None, help="workload names")
    ap.add_argument("--json", default=None, help="also write the results here")
    return ap.parse_args()


def pin(threads):
    cpus = sorted(os.sched_getaffinity(0))
    if threads:
        if threads > len(cpus):
            sys.exit(f"jax_bench: --threads {threads} but only {len(cpus)} CPUs are available")
        cpus = cpus[:threads]
        os.sched_setaffinity(0, cpus)
    return len(cpus)


def workloads(jax, jnp, np, models):
    def train(loss, params, batch):
        return models.sgd_step(loss), (params,) + tuple(batch)

    out = {}
    out["mlp_train"] = lambda: train(models.mlp_loss, models.mlp_init((784, 512, 512, 10)),
                                      models.mlp_batch(128, 784, 10))
    out["conv_train"] = lambda: train(
        models.conv_loss, models.conv_init(cin=1, c1=16, c2=32, hw=28),
        models.conv_batch(n=32, hw=28, cin=1))

    def tfm():
        p, heads = models.tfm_split(models.tfm_init(d=256, heads=8, ff=1024))
        loss = lambda p, x, y: models.tfm_loss(dict(p, heads=heads), x, y)
        return train(loss, p, models.tfm_batch(b=4, t=128, d=256))
    out["transformer"] = tfm
    out["scan_rnn"] = lambda: train(models.rnn_loss, models.rnn_init(d_in=16, d_h=64),
                                     models.rnn_batch(t=256, b=8, d_in=16))
    out["tiny"] = lambda: (lambda x: x * 2 + 1, (np.arange(4, dtype=np.float32),))
    return out


def measure(jax, fn, args, dev, min_time, compile_reps):
    args = jax.device_put(args, dev)
    compile_s = []
    compiled = None
    for _ in range(compile_reps):
        # a new function object each time: JAX caches lowerings and executables per function
        lowered = jax.jit(lambda *a: fn(*a)).lower(*args)
        t0 = time.perf_counter()
        compiled = lowered.compile()
        compile_s.append(time.perf_counter() - t0)
    out = compiled(*args)
    jax.block_until_ready(out)
    for _ in range(3):
        jax.block_until_ready(compiled(*args))
    times = []
    t_end = time.perf_counter() + min_time
    while time.perf_counter() < t_end or len(times) < 5:
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t0)
    return min(compile_s), statistics.median(times), len(times), out


def fmt_time(s):
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def main():
    args = parse_args()
    nthreads = pin(args.threads)
    os.environ.setdefault("CJRT_CPU_DEVICE_COUNT", "1")
    if args.plugin:
        os.environ["CJRT_JAX_PLUGIN_PATH"] = os.path.abspath(args.plugin)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.join(ROOT, "python", "tests", "jax"))
    import numpy as np
    import jax
    import jax.numpy as jnp
    import jaxmodels as models

    jax.config.update("jax_num_cpu_devices", 1)
    try:
        cj = jax.devices("cjrt")[0]
    except RuntimeError as e:
        sys.exit(f"jax_bench: the cjrt platform is not available ({e}); build the plugin or "
                 "pass --plugin")
    xla = jax.devices("cpu")[0]
    print(f"jax {jax.__version__}, jaxlib {jax.lib.__version__}; {nthreads} threads for each "
          f"platform; cjrt: {cj.client.platform_version.splitlines()[-1]}")
    table = []
    for name, make in workloads(jax, jnp, np, models).items():
        if args.only and name not in args.only:
            continue
        fn, fargs = make()
        row = {"workload": name}
        outs = {}
        for label, dev in (("cjrt", cj), ("xla", xla)):
            try:
                c, r, n, out = measure(jax, fn, fargs, dev, args.min_time, args.compile_reps)
                row[f"{label}_compile_s"], row[f"{label}_run_s"], row[f"{label}_runs"] = c, r, n
                outs[label] = out
            except Exception as e:  # an unsupported op: say so, go on
                msg = str(e).splitlines()[0][:160]
                row[f"{label}_error"] = f"{type(e).__name__}: {msg}"
        if len(outs) == 2:
            diff = max(float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
                       for a, b in zip(jax.tree.leaves(outs["cjrt"]), jax.tree.leaves(outs["xla"])))
            row["max_abs_diff"] = diff
            row["compile_ratio"] = row["cjrt_compile_s"] / row["xla_compile_s"]
            row["run_ratio"] = row["cjrt_run_s"] / row["xla_run_s"]
        table.append(row)
        print(f"  {name}: " + ", ".join(f"{k}={fmt_time(v) if k.endswith('_s') else v}"
                                        for k, v in row.items() if k != "workload"), flush=True)

    print("\n| workload | compile cjrt | compile XLA:CPU | ratio | run cjrt | run XLA:CPU | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in table:
        if "run_ratio" in r:
            print(f"| {r['workload']} | {fmt_time(r['cjrt_compile_s'])} | "
                  f"{fmt_time(r['xla_compile_s'])} | {r['compile_ratio']:.2f} | "
                  f"{fmt_time(r['cjrt_run_s'])} | {fmt_time(r['xla_run_s'])} | "
                  f"{r['run_ratio']:.2f} |")
        else:
            err = r.get("cjrt_error") or r.get("xla_error")
            print(f"| {r['workload']} | - | {fmt_time(r.get('xla_compile_s'))} | - | - | "
                  f"{fmt_time(r.get('xla_run_s'))} | - |  cjrt: {err}")
    print("\nratio = cjrt / XLA:CPU (below 1: cjrt is faster)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": nthreads, "jax": jax.__version__, "rows": table}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
