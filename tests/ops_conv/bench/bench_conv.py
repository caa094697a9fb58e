#!/usr/bin/env python3
"""The 3x3 convolution layer of issue 4's benchmark (batch 32, 56x56, 64 -> 64 channels, NHWC,
HWIO weights, SAME padding, f32), through cjrt (`cjrt bench`) and XLA:CPU (jax.jit) in the same
run, both on every core of the machine. usage: bench_conv.py [--cjrt PATH] [--core] [--min-time S]
"""
import argparse, json, os, resource, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("--cjrt", default=os.path.join(HERE, "..", "..", "..", "build", "cjrt"))
ap.add_argument("--core", action="store_true")
ap.add_argument("--min-time", type=float, default=3.0)
ap.add_argument("--rounds", type=int, default=3)
a = ap.parse_args()
prog = os.path.join(HERE, "conv3x3_b32_56_64.mlir")
flops = 2.0 * 32 * 56 * 56 * 64 * 64 * 9


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cjrt_once():
    cmd = [a.cjrt, "bench", "--json", "--min-time", str(a.min_time)] + (["--core"] if a.core else []) + [prog]
    c0 = child_cpu()
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    cpu = child_cpu() - c0
    for line in out.splitlines():
        try:
            r = json.loads(line)
            # CPU seconds per execution (all threads; includes one warm-up run, compile and
            # argument generation, so slightly pessimistic)
            r["cpu_ms"] = cpu * 1e3 / (r["runs"] + 1)
            return r
        except ValueError:
            pass
    raise SystemExit("cjrt bench failed: " + out)


import jax, jax.numpy as jnp
jax.config.update("jax_platforms", "cpu")
rng = np.random.default_rng(0)
x = jax.device_put(rng.standard_normal((32, 56, 56, 64), dtype=np.float32))
w = jax.device_put(rng.standard_normal((3, 3, 64, 64), dtype=np.float32) * 0.05)
f = jax.jit(lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                     dimension_numbers=("NHWC", "HWIO", "NHWC")))
t0 = time.perf_counter()
f.lower(x, w).compile()
xla_compile = (time.perf_counter() - t0) * 1e3


def xla_once():
    jax.block_until_ready(f(x, w))
    ts = []
    t_end = time.perf_counter() + a.min_time
    c0 = time.process_time()
    while time.perf_counter() < t_end or len(ts) < 3:
        t = time.perf_counter()
        jax.block_until_ready(f(x, w))
        ts.append((time.perf_counter() - t) * 1e3)
    cpu = (time.process_time() - c0) * 1e3 / len(ts)
    ts.sort()
    return ts[0], ts[len(ts) // 2], cpu


print("wall ms per execution (min, median) and CPU ms per execution (all threads)")
print(f"{'round':>5} {'cjrt min':>9} {'cjrt med':>9} {'cjrt cpu':>9} {'xla min':>9} {'xla med':>9} "
      f"{'xla cpu':>9} {'med ratio':>9} {'cpu ratio':>9}")
best_c = best_x = 1e9
for r in range(a.rounds):  # interleaved, so both see the same machine load
    c = cjrt_once()
    xm, xd, xc = xla_once()
    best_c, best_x = min(best_c, c["min_ms"]), min(best_x, xm)
    print(f"{r:>5} {c['min_ms']:9.2f} {c['median_ms']:9.2f} {c['cpu_ms']:9.2f} {xm:9.2f} {xd:9.2f} "
          f"{xc:9.2f} {c['median_ms'] / xd:9.2f} {c['cpu_ms'] / xc:9.2f}")
print(f"cjrt compile {c.get('compile_ms', 0):.2f} ms, XLA compile {xla_compile:.1f} ms; "
      f"best cjrt {flops / best_c / 1e6:.0f} GFLOP/s, best XLA {flops / best_x / 1e6:.0f} GFLOP/s "
      f"({os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})")
