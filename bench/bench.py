#!/usr/bin/env python3
"""cjrt's benchmark against its peers, measured in the same run.

The workloads (issue 4) are StableHLO programs in bench/workloads/ (exported from JAX by
bench/export_workloads.py, so every engine computes the same function):

  matmul_2048     2048x2048 f32 matmul
  mlp_train_step  an MLP training step, 784-1024-1024-10, batch 256 (forward, softmax
                  cross-entropy, backward, SGD; parameters donated)
  ew_chain_16m    tanh(a * x + b) * c over 16M floats (a, b, c scalars)
  reduce_16m      the sum of 16M floats
  tiny_add        a 4-element add: the per-execute overhead
  conv3x3_layer   a 3x3 convolution layer: 8x56x56x64 NHWC input, 64 output channels, SAME
                  padding, bias and relu

cjrt runs them through `cjrt bench` (the PJRT plugin's C API, or --core for the in-process
backend); in the same run XLA:CPU runs the same functions under jax.jit (JAX from PyPI),
numpy runs equivalent code, and PyTorch too when it is installed. Times are per execution
(median; compile times separately for cjrt and XLA).

Fairness: every engine gets the same number of threads (--threads, default all cores): the
process is pinned to that many CPUs (sched_setaffinity, inherited by cjrt), and OMP / OpenBLAS /
MKL thread counts and torch.set_num_threads are set to it. numpy's OpenBLAS is told the core
type (OPENBLAS_CORETYPE=SkylakeX when the CPU has AVX-512 and nothing else was set), because
OpenBLAS builds misdetect some virtual CPUs and then run their slow generic kernels.

usage: python3 bench/bench.py [--cjrt PATH] [--core] [--threads N] [--min-time S]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = ["matmul_2048", "mlp_train_step", "conv3x3_layer", "ew_chain_16m", "reduce_16m", "tiny_add"]


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cjrt", default=None, help="the cjrt command (default: ../build/cjrt)")
    ap.add_argument("--plugin", default=None, help="the PJRT plugin for cjrt bench")
    ap.add_argument("--core", action="store_true", help="run cjrt in-process (no plugin)")
    ap.add_argument("--threads", type=int, default=0, help="threads for every engine (default: all cores)")
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds per measurement")
    ap.add_argument("--only", default=None, help="comma-separated workload names")
    ap.add_argument("--torch-python", default="/usr/bin/python3",
                    help="when torch is not importable here, the interpreter that runs the torch "
                         "column in a subprocess (default: Debian's python3, which has "
                         "python3-torch; scripts/setup.sh installs it)")
    ap.add_argument("--torch-only", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args()


def setup_threads(n):
    cpus = sorted(os.sched_getaffinity(0))
    if n <= 0 or n > len(cpus):
        n = len(cpus)
    os.sched_setaffinity(0, cpus[:n])
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = str(n)
    if "OPENBLAS_CORETYPE" not in os.environ:
        try:
            flags = open("/proc/cpuinfo").read()
            if " avx512f" in flags:
                os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
        except OSError:
            pass
    return n


def timeit(fn, min_time):
    fn()  # warm-up
    times = []
    start = time.perf_counter()
    while len(times) < 3 or time.perf_counter() - start < min_time:
        a = time.perf_counter()
        fn()
        times.append(time.perf_counter() - a)
        if len(times) >= 100000:
            break
    times.sort()
    return times[len(times) // 2] * 1e3


def run_cjrt(args, names, threads):
    exe = args.cjrt or os.path.join(HERE, "..", "build", "cjrt")
    cmd = [exe, "bench", "--json", "--threads", str(threads), "--min-time", str(args.min_time)]
    if args.core:
        cmd.append("--core")
    if args.plugin:
        cmd += ["--plugin", args.plugin]
    cmd += [os.path.join(HERE, "workloads", n + ".mlir") for n in names]
    out = {}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    except OSError as e:
        print(f"cjrt: {e}", file=sys.stderr)
        return out
    if p.stderr.strip():
        print(p.stderr.strip(), file=sys.stderr)
    for line in p.stdout.splitlines():
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if not r.get("error"):
            out[r["program"].replace(".mlir", "")] = r
    return out


# ---- the workloads in JAX / numpy / torch ----

def data(np):
    rng = np.random.default_rng(0)
    f = np.float32
    d = {
        "a": rng.standard_normal((2048, 2048), dtype=f) * 0.1,
        "b": rng.standard_normal((2048, 2048), dtype=f) * 0.1,
        "params": [rng.standard_normal(s, dtype=f) * 0.05 for s in
                   [(784, 1024), (1024,), (1024, 1024), (1024,), (1024, 10), (10,)]],
        "x": rng.standard_normal((256, 784), dtype=f),
        "y": np.eye(10, dtype=f)[rng.integers(0, 10, 256)],
        "v": rng.standard_normal(16 * 1024 * 1024, dtype=f),
        "t1": np.ones(4, f), "t2": np.ones(4, f),
        "cx": rng.standard_normal((8, 56, 56, 64), dtype=f),
        "cw": rng.standard_normal((3, 3, 64, 64), dtype=f) * 0.05,
        "cb": rng.standard_normal((64,), dtype=f) * 0.1,
    }
    return d


def jax_workloads(d, min_time):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    cpu = jax.devices("cpu")[0]

    def mlp_loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h = jax.nn.relu(x @ w1 + b1)
        h = jax.nn.relu(h @ w2 + b2)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(h @ w3 + b3) * y, axis=-1))

    def train_step(params, x, y):
        loss, g = jax.value_and_grad(mlp_loss)(params, x, y)
        return tuple(p - 0.01 * gp for p, gp in zip(params, g)), loss

    res = {}

    def bench(name, fn, args, donate=()):
        t0 = time.perf_counter()
        compiled = jax.jit(fn, donate_argnums=donate).lower(*args).compile()
        compile_ms = (time.perf_counter() - t0) * 1e3
        state = {"args": args}

        def step():
            out = compiled(*state["args"])
            jax.block_until_ready(out)
            if donate:  # feed the new parameters back, as a training loop does
                state["args"] = (out[0],) + tuple(state["args"][1:])

        res[name] = {"compile_ms": compile_ms, "ms": timeit(step, min_time)}

    put = lambda a: jax.device_put(a, cpu)
    bench("matmul_2048", lambda a, b: a @ b, (put(d["a"]), put(d["b"])))
    bench("mlp_train_step", train_step,
          (tuple(put(p) for p in d["params"]), put(d["x"]), put(d["y"])), donate=(0,))
    bench("conv3x3_layer", lambda x, w, b: jax.nn.relu(jax.lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + b),
        (put(d["cx"]), put(d["cw"]), put(d["cb"])))
    f = jnp.float32
    bench("ew_chain_16m", lambda x, a, b, c: jnp.tanh(a * x + b) * c,
          (put(d["v"]), f(0.7), f(-0.2), f(1.3)))
    bench("reduce_16m", lambda x: jnp.sum(x), (put(d["v"]),))
    bench("tiny_add", lambda x, y: x + y, (put(d["t1"]), put(d["t2"])))
    return res


def numpy_workloads(np, d, min_time):
    res = {}
    a, b = d["a"], d["b"]
    res["matmul_2048"] = timeit(lambda: a @ b, min_time)
    params = [p.copy() for p in d["params"]]
    x, y = d["x"], d["y"]

    def train_step():
        w1, b1, w2, b2, w3, b3 = params
        z1 = x @ w1 + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2 + b2
        h2 = np.maximum(z2, 0)
        z3 = h2 @ w3 + b3
        m = z3.max(axis=1, keepdims=True)
        e = np.exp(z3 - m)
        s = e.sum(axis=1, keepdims=True)
        p = e / s
        g3 = (p * y.sum(axis=1, keepdims=True) - y) / x.shape[0]
        gw3 = h2.T @ g3
        gb3 = g3.sum(axis=0)
        g2 = (g3 @ w3.T) * (z2 > 0)
        gw2 = h1.T @ g2
        gb2 = g2.sum(axis=0)
        g1 = (g2 @ w2.T) * (z1 > 0)
        gw1 = x.T @ g1
        gb1 = g1.sum(axis=0)
        for prm, g in zip(params, (gw1, gb1, gw2, gb2, gw3, gb3)):
            prm -= np.float32(0.01) * g

    res["mlp_train_step"] = timeit(train_step, min_time)
    cx, cw, cb = d["cx"], d["cw"], d["cb"]

    def conv():  # im2col: a (N*H*W, 9*C) x (9*C, K) matmul over the padded input's windows
        xp = np.pad(cx, ((0, 0), (1, 1), (1, 1), (0, 0)))
        n, h, w, c = cx.shape
        cols = np.stack([xp[:, i:i + h, j:j + w, :] for i in range(3) for j in range(3)], axis=3)
        y = cols.reshape(n * h * w, 9 * c) @ cw.reshape(9 * c, -1)
        return np.maximum(y.reshape(n, h, w, -1) + cb, 0)

    res["conv3x3_layer"] = timeit(conv, min_time)
    v = d["v"]
    a32, b32, c32 = np.float32(0.7), np.float32(-0.2), np.float32(1.3)
    res["ew_chain_16m"] = timeit(lambda: np.tanh(a32 * v + b32) * c32, min_time)
    res["reduce_16m"] = timeit(lambda: v.sum(), min_time)
    t1, t2 = d["t1"], d["t2"]
    res["tiny_add"] = timeit(lambda: t1 + t2, min_time)
    return res


def torch_workloads(d, threads, min_time):
    import torch
    torch.set_num_threads(threads)
    res = {}
    a, b = torch.from_numpy(d["a"]), torch.from_numpy(d["b"])
    res["matmul_2048"] = timeit(lambda: a @ b, min_time)
    params = [torch.from_numpy(p.copy()).requires_grad_(True) for p in d["params"]]
    x, y = torch.from_numpy(d["x"]), torch.from_numpy(d["y"])

    def train_step():
        w1, b1, w2, b2, w3, b3 = params
        h = torch.relu(x @ w1 + b1)
        h = torch.relu(h @ w2 + b2)
        loss = -(torch.log_softmax(h @ w3 + b3, dim=-1) * y).sum(-1).mean()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= 0.01 * g

    res["mlp_train_step"] = timeit(train_step, min_time)
    cx = torch.from_numpy(d["cx"]).permute(0, 3, 1, 2).contiguous()  # NCHW, torch's layout
    cw = torch.from_numpy(d["cw"]).permute(3, 2, 0, 1).contiguous()  # OIHW
    cb = torch.from_numpy(d["cb"])
    with torch.no_grad():
        res["conv3x3_layer"] = timeit(
            lambda: torch.relu(torch.nn.functional.conv2d(cx, cw, cb, padding=1)), min_time)
    v = torch.from_numpy(d["v"])
    res["ew_chain_16m"] = timeit(lambda: torch.tanh(0.7 * v - 0.2) * 1.3, min_time)
    res["reduce_16m"] = timeit(lambda: v.sum(), min_time)
    t1, t2 = torch.from_numpy(d["t1"]), torch.from_numpy(d["t2"])
    res["tiny_add"] = timeit(lambda: t1 + t2, min_time)
    return res


def torch_column(args, d, threads):
    """PyTorch's times: in this process when torch imports here, else from --torch-python (the
    .venv has numpy 2 and no torch; Debian's python3 has torch 1.13 with numpy 1.24), which
    rebuilds the same-shaped data and runs under the same CPU affinity and thread settings."""
    try:
        return torch_workloads(d, threads, args.min_time)
    except ImportError:
        pass
    py = args.torch_python
    if not py or not os.path.exists(py) or os.path.realpath(py) == os.path.realpath(sys.executable):
        print("PyTorch is not installed: no torch column", file=sys.stderr)
        return None
    cmd = [py, os.path.abspath(__file__), "--torch-only", "--threads", str(threads),
           "--min-time", str(args.min_time)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
        res = json.loads(p.stdout.strip().splitlines()[-1])
        print(f"torch: measured by {py} (torch there, not in this interpreter)")
        return res
    except (OSError, ValueError, IndexError, subprocess.SubprocessError) as e:
        print(f"PyTorch unavailable here and through {py}: {e}", file=sys.stderr)
        return None


def main():
    args = parse_args()
    threads = setup_threads(args.threads)
    names = args.only.split(",") if args.only else WORKLOADS
    import numpy as np  # after the thread settings
    if args.torch_only:  # the torch column for a parent run without torch (see torch_column)
        print(json.dumps(torch_workloads(data(np), threads, args.min_time)))
        return
    print(f"threads: {threads} for every engine; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    cj = run_cjrt(args, names, threads)
    d = data(np)
    peers = {}
    try:
        xla = jax_workloads(d, args.min_time)
        peers["XLA:CPU"] = {k: v["ms"] for k, v in xla.items()}
        xla_compile = {k: v["compile_ms"] for k, v in xla.items()}
    except Exception as e:  # jax missing or failing: say so, go on
        print(f"XLA:CPU (jax) unavailable: {e}", file=sys.stderr)
        xla_compile = {}
    peers["numpy"] = numpy_workloads(np, d, args.min_time)
    t = torch_column(args, d, threads)
    if t:
        peers["torch"] = t
    cols = list(peers)
    head = f"{'workload':<16} {'cjrt compile':>12} {'cjrt exec':>11} {'XLA compile':>12}"
    for c in cols:
        head += f" {c + ' exec':>13}"
    for c in cols:
        head += f" {'cjrt/' + c:>13}"
    print(head)
    print("-" * len(head))
    for n in names:
        r = cj.get(n)
        cjm = r["median_ms"] if r else None
        cjc = f"{r['compile_ms']:.2f} ms" if r else "n/a"
        cje = f"{cjm:.4f} ms" if r else "n/a"
        line = f"{n:<16} {cjc:>12} {cje:>11}"
        xc = f"{xla_compile[n]:.1f} ms" if n in xla_compile else "n/a"
        line += f" {xc:>12}"
        for c in cols:
            v = peers[c].get(n)
            cell = f"{v:.4f} ms" if v is not None else "n/a"
            line += f" {cell:>13}"
        for c in cols:
            v = peers[c].get(n)
            cell = f"{cjm / v:.2f}x" if (v and cjm) else "n/a"
            line += f" {cell:>13}"
        print(line)
    print("(times are medians per execution; cjrt/peer < 1 means cjrt is faster)")


if __name__ == "__main__":
    main()
