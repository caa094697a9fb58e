#!/usr/bin/env python3
"""Model benchmark suite: JAX programs written the way users write them (flax linen and nnx,
optax, equinox, plain jax.numpy; bench/zoo/), each checked on cjrt against XLA:CPU and then
timed on both in the same process.

Method, per workload (the workload is a function and its inputs; bench/zoo/__init__.py):
  1. make the inputs (model parameters are initialized on XLA:CPU, then held as host arrays)
     and commit them to each platform's first device; a train step with an Adam-like
     optimizer is first advanced 2 steps on XLA:CPU (a mid-training step; see bench/zoo);
  2. compile on each platform --compile-reps times, each from a fresh jax.jit so no cache
     answers (as bench/jax_bench.py: `lowered.compile()`, the backend's compile plus JAX's work
     around it); the minimum is reported;
  3. run once on each and compare cjrt's outputs with XLA:CPU's (dtype tolerance of
     python/tests/jax/jaxcheck.py, scaled where the workload says why; reconstructions for
     non-unique linear algebra outputs). An error or a mismatch on cjrt makes the row FAIL with
     the first line of the message, and the suite goes on;
  4. (not with --check-only) warm up, then time calls in interleaved rounds (cjrt, XLA:CPU,
     cjrt, XLA:CPU, ...; each call is one dispatch + block_until_ready) until --min-time
     seconds of rounds and at least 5 rounds; the medians are reported, and their ratio.

The ratios are cjrt / XLA:CPU (below 1: cjrt is faster). The summary line gives the geometric
mean of the run ratios over the workloads that ran on both, and the worst.

Threads: both platforms size their thread pools from the process's CPU affinity, so --threads N
pins the process to N CPUs before JAX starts (as bench/jax_bench.py); default: all it may use.

usage: PYTHONPATH=python CJRT_JAX_PLUGIN_PATH=build/pjrt_c_api_cjrt_plugin.so \\
         python bench/models.py [--threads N] [--only PATTERN ...] [--min-time S]
                                [--compile-reps N] [--json FILE] [--check-only] [--list]
(the bench environment: bench/requirements-bench.txt)
"""
import argparse
import fnmatch
import json
import math
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--plugin", default=None,
                    help="pjrt_c_api_cjrt_plugin.so (default: $CJRT_JAX_PLUGIN_PATH, else what "
                         "jax_plugins.cjrt finds)")
    ap.add_argument("--threads", type=int, default=None, help="CPUs for both platforms")
    ap.add_argument("--only", nargs="+", default=None,
                    help="workload name patterns (fnmatch; a plain word matches as a substring)")
    ap.add_argument("--min-time", type=float, default=0.5,
                    help="seconds of interleaved timed rounds per workload (default 0.5)")
    ap.add_argument("--compile-reps", type=int, default=2)
    ap.add_argument("--json", default=None, help="also write the rows here")
    ap.add_argument("--check-only", action="store_true", help="correctness only, no timing")
    ap.add_argument("--list", action="store_true", help="list the workloads and what they do")
    return ap.parse_args()


def pin(threads):
    cpus = sorted(os.sched_getaffinity(0))
    if threads:
        if threads > len(cpus):
            sys.exit(f"models: --threads {threads} but only {len(cpus)} CPUs are available")
        cpus = cpus[:threads]
        os.sched_setaffinity(0, cpus)
    return len(cpus)


def selected(wls, patterns):
    if not patterns:
        return wls
    out = []
    for w in wls:
        for p in patterns:
            if fnmatch.fnmatchcase(w.name, p) or (not any(c in p for c in "*?[") and p in w.name):
                out.append(w)
                break
    return out


def first_line(e):
    s = str(e).strip().splitlines()
    msg = s[0] if s else ""
    # JAX's runtime errors put the useful part after "INTERNAL: " / "UNIMPLEMENTED: " etc.
    return f"{type(e).__name__}: {msg}"[:200]


class Engine:
    def __init__(self, jax, label, dev):
        self.jax, self.label, self.dev = jax, label, dev

    def compile(self, fn, args, reps):
        jax = self.jax
        times, compiled = [], None
        for _ in range(max(1, reps)):
            # a new function object each time: JAX caches lowerings and executables per function
            lowered = jax.jit(lambda *a: fn(*a)).lower(*args)
            t0 = time.perf_counter()
            compiled = lowered.compile()
            times.append(time.perf_counter() - t0)
        return compiled, min(times)


def run_workload(jax, wl, engines, opts):
    from zoo import x64_scope
    with x64_scope(wl):
        return _run_workload(jax, wl, engines, opts)


def _run_workload(jax, wl, engines, opts):
    row = {"workload": wl.name, "what": wl.what}
    missing = wl.missing()
    if missing:
        row["status"] = "SKIP"
        row["error"] = f"needs {', '.join(missing)} (pip install -r bench/requirements-bench.txt)"
        return row
    cpu = engines["xla"].dev
    try:
        with jax.default_device(cpu):
            fn, args = wl.make()
    except Exception as e:
        row["status"] = "ERROR"
        row["error"] = "make: " + first_line(e)
        return row
    state = {}
    from zoo import compare, warm_args
    for key in ("xla", "cjrt"):  # XLA:CPU first: a workload it cannot run is the bench's bug
        eng = engines[key]
        try:
            a = jax.device_put(args, eng.dev)
            compiled, ctime = eng.compile(fn, a, opts.compile_reps)
            if key == "xla" and wl.warm:  # a mid-training step: warm the optimizer state
                args = warm_args(wl, lambda x: compiled(*jax.device_put(x, eng.dev)), args)
                a = jax.device_put(args, eng.dev)
            out = jax.block_until_ready(compiled(*a))
        except Exception as e:
            row["status"] = "FAIL" if key == "cjrt" else "XLA-ERROR"
            row["error"] = first_line(e)
            if os.environ.get("CJRT_BENCH_TRACEBACK"):
                traceback.print_exc()
            return row
        row[f"{key}_compile_s"] = ctime
        state[key] = (compiled, a, out)
    try:
        compare(wl, state["cjrt"][2], state["xla"][2], args)
    except AssertionError as e:
        row["status"] = "FAIL"
        row["error"] = "mismatch: " + str(e).splitlines()[0][:300]
        return row
    except Exception as e:
        row["status"] = "FAIL"
        row["error"] = "check: " + first_line(e)
        return row
    row["status"] = "ok"
    row["compile_ratio"] = row["cjrt_compile_s"] / row["xla_compile_s"]
    if opts.check_only:
        return row
    calls = {k: (lambda c=state[k][0], a=state[k][1]: jax.block_until_ready(c(*a)))
             for k in ("cjrt", "xla")}
    for _ in range(2):  # warm-up
        for k in ("cjrt", "xla"):
            calls[k]()
    times = {"cjrt": [], "xla": []}
    t_end = time.perf_counter() + opts.min_time
    rounds = 0
    while (time.perf_counter() < t_end or rounds < 5) and rounds < 100000:
        for k in ("cjrt", "xla"):
            t0 = time.perf_counter()
            calls[k]()
            times[k].append(time.perf_counter() - t0)
        rounds += 1
    row["rounds"] = rounds
    for k in ("cjrt", "xla"):
        row[f"{k}_run_s"] = statistics.median(times[k])
    row["run_ratio"] = row["cjrt_run_s"] / row["xla_run_s"]
    del state
    return row


def ms(s):
    if s is None:
        return "-"
    v = s * 1e3
    return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:.0f}"


def print_table(rows, check_only):
    if check_only:
        print("\n| workload | status | compile XLA:CPU ms | compile cjrt ms | ratio | note |")
        print("|---|---|---:|---:|---:|---|")
    else:
        print("\n| workload | XLA:CPU ms | cjrt ms | run ratio | compile XLA:CPU ms | "
              "compile cjrt ms | compile ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        name = r["workload"]
        if r["status"] != "ok":
            if check_only:
                print(f"| {name} | {r['status']} | {ms(r.get('xla_compile_s'))} | - | - | "
                      f"{r['error']} |")
            else:
                print(f"| {name} | - | {r['status']}: {r['error']} | - | "
                      f"{ms(r.get('xla_compile_s'))} | - | - |")
            continue
        if check_only:
            print(f"| {name} | ok | {ms(r['xla_compile_s'])} | {ms(r['cjrt_compile_s'])} | "
                  f"{r['compile_ratio']:.2f} | |")
        else:
            print(f"| {name} | {ms(r['xla_run_s'])} | {ms(r['cjrt_run_s'])} | "
                  f"{r['run_ratio']:.2f} | {ms(r['xla_compile_s'])} | {ms(r['cjrt_compile_s'])} | "
                  f"{r['compile_ratio']:.2f} |")


def summary(rows, check_only):
    ok = [r for r in rows if r["status"] == "ok"]
    bad = [r for r in rows if r["status"] not in ("ok", "SKIP")]
    skip = [r for r in rows if r["status"] == "SKIP"]
    parts = [f"{len(ok)} ok, {len(bad)} failed, {len(skip)} skipped of {len(rows)}"]
    geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
    if ok:
        parts.append(f"compile geomean {geo([r['compile_ratio'] for r in ok]):.2f}")
        if not check_only:
            w = max(ok, key=lambda r: r["run_ratio"])
            parts.append(f"run geomean {geo([r['run_ratio'] for r in ok]):.2f}, worst "
                         f"{w['run_ratio']:.2f} ({w['workload']})")
    return "; ".join(parts)


def main():
    opts = parse_args()
    nthreads = pin(opts.threads)  # before JAX (and its thread pools) start
    os.environ.setdefault("CJRT_CPU_DEVICE_COUNT", "1")
    if opts.plugin:
        os.environ["CJRT_JAX_PLUGIN_PATH"] = os.path.abspath(opts.plugin)
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.join(ROOT, "python", "tests", "jax"))
    import zoo

    wls = selected(zoo.all_workloads(), opts.only)
    if opts.list:
        for w in wls:
            print(f"{w.name:32s} {w.what}")
        return 0
    if not wls:
        sys.exit(f"models: no workload matches {opts.only}")
    import jax

    jax.config.update("jax_num_cpu_devices", 1)
    try:
        cj = jax.devices("cjrt")[0]
    except RuntimeError as e:
        sys.exit(f"models: the cjrt platform is not available ({e}); build the plugin and set "
                 "CJRT_JAX_PLUGIN_PATH or pass --plugin")
    engines = {"cjrt": Engine(jax, "cjrt", cj), "xla": Engine(jax, "xla", jax.devices("cpu")[0])}
    print(f"jax {jax.__version__}, jaxlib {jax.lib.__version__}; {nthreads} threads for each "
          f"platform; cjrt: {cj.client.platform_version.splitlines()[-1]}; "
          f"{'check only' if opts.check_only else f'min-time {opts.min_time} s'}", flush=True)
    rows = []
    t_all = time.perf_counter()
    for w in wls:
        t0 = time.perf_counter()
        r = run_workload(jax, w, engines, opts)
        rows.append(r)
        if r["status"] == "ok" and not opts.check_only:
            detail = (f"xla {ms(r['xla_run_s'])} ms, cjrt {ms(r['cjrt_run_s'])} ms, "
                      f"ratio {r['run_ratio']:.2f}, {r['rounds']} rounds")
        else:
            detail = r["status"] + (f": {r['error']}" if "error" in r else "")
        print(f"  {w.name}: {detail} [{time.perf_counter() - t0:.1f} s]", flush=True)
    print_table(rows, opts.check_only)
    print("\nratio = cjrt / XLA:CPU (below 1: cjrt is faster); run times are medians of "
          "interleaved calls")
    print(f"summary: {summary(rows, opts.check_only)} [{time.perf_counter() - t_all:.0f} s]")
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"threads": nthreads, "jax": jax.__version__,
                       "check_only": opts.check_only, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
