#!/usr/bin/env python3
"""Runs test files of JAX's own test suite (jax-ml/jax tests/) against the cjrt platform and
reports pass rates and the main causes of failure.

    tools/run_jax_suite.py JAX_CHECKOUT [--files lax_test.py ...] [--timeout 1200] ...

JAX_CHECKOUT is a checkout (or an extracted archive) of jax-ml/jax whose tests/ matches the
installed jax; this script fetches nothing. Take the tag of the installed release, e.g.
`git -C jax archive jax-v0.10.2 tests | tar -x -C DIR` for jax 0.10.2. The test files need
absl-py (pip install absl-py) besides jax and pytest; give extra import folders with
--pythonpath.

Each file runs in its own `python -m pytest` process with JAX_PLATFORMS=cjrt,cpu (cjrt is the
default backend, so JAX's test utilities see "cjrt" as the device under test; cpu is there for
the few tests that ask for it by name), the plugin registered by this repository's
jax_plugins.cjrt package, JAX_NUM_GENERATED_CASES cases per parameterized test, and a wall-clock
limit. Outcomes are streamed to OUT/<file>.jsonl by a small pytest plugin as each test finishes,
so a file cut off by its time limit still counts what ran, and a test that kills the process
(a crash in the plugin) is recorded as crashed (a failure) and the file goes on without it.
--platform cpu runs the same files on XLA:CPU for a baseline. Tests that need mpmath skip
without it (pip install mpmath).

    tools/run_jax_suite.py --compare OUT/cpu OUT/cjrt

compares two runs test by test: per file both runs' counts and the tests that pass on the
first but not on the second (tests the second never reached are left out).

The summary gives, per file, passed / failed / skipped and the pass rate passed / (passed +
failed), then the failures grouped by cause (the StableHLO op without a kernel, the custom call,
the primitive JAX has no lowering for, numerical mismatches, ...), most frequent first.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FILES = ["lax_test.py", "lax_numpy_test.py", "lax_control_flow_test.py", "random_test.py"]

REPORTER = r'''
"""pytest plugin written by tools/run_jax_suite.py: one JSON line per finished test."""
import json, os

_out = open(os.environ["CJRT_SUITE_REPORT"], "a", buffering=1)
_seen = set()


def _set_dut():
    """jax_test_dut is an absl-style flag that pytest never parses, so it is set here, once the
    test modules are imported: importing jax earlier (in pytest_configure) leaves
    jtu.capture_stdout blind to what jax.debug.print writes, on every platform."""
    dut = os.environ.get("CJRT_SUITE_DUT")
    if dut:
        import jax
        from jax._src import test_util  # noqa: F401 (defines jax_test_dut)
        jax.config.update("jax_test_dut", dut)


def _message(report):
    if report.longrepr is None:
        return ""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message
    if isinstance(report.longrepr, tuple):  # skips: (file, line, reason)
        return str(report.longrepr[2])
    return str(report.longrepr)[-2000:]


def pytest_collection_modifyitems(session, config, items):
    _set_dut()
    done_file = os.environ.get("CJRT_SUITE_DONE")
    if not done_file or not os.path.exists(done_file):
        return
    with open(done_file) as f:
        done = set(line.rstrip("\n") for line in f)
    keep = [it for it in items if it.nodeid not in done]
    gone = [it for it in items if it.nodeid in done]
    if gone:
        config.hook.pytest_deselected(items=gone)
        items[:] = keep


def pytest_runtest_logstart(nodeid, location):
    _out.write(json.dumps({"test": nodeid, "when": "start"}) + "\n")


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed") or (
            report.when == "teardown" and report.outcome == "failed"):
        key = (report.nodeid, report.when)
        if key in _seen:
            return
        _seen.add(key)
        outcome = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.outcome == "skipped" else "xpassed"
        _out.write(json.dumps({"test": report.nodeid, "when": report.when, "outcome": outcome,
                               "message": _message(report)[:4000],
                               "duration": round(report.duration, 4)}) + "\n")
'''

# (cause label, regex on the failure message); the first match names the cause. Group 1, when
# present, is appended to the label.
CAUSES = [
    ("crashed the test process", r"__CRASH__"),
    ("no CPU kernel yet for stablehlo.", r"stablehlo\.([a-z_]+) at [^:]*(?::\d+:\d+)?: the CPU backend has no kernel"),
    ("custom call not supported: @", r"custom_call @([\w.]+) is not supported"),
    ("no JAX lowering for non-cpu platforms: ", r"MLIR translation rule for primitive '(\w+)' not found"),
    ("JAX host callbacks need cpu/cuda/rocm/tpu", r"EmitPythonCallback` not supported"),
    ("SPMD partitioning (several partitions)", r"SPMD partitioning is not implemented"),
    ("compile: unsupported by cjrt: ", r"UNIMPLEMENTED: PJRT_Client_Compile: ([^:]+?) at "),
    ("compile error: ", r"(INVALID_ARGUMENT|UNIMPLEMENTED|INTERNAL): PJRT_Client_Compile"),
    ("execute error: ", r"(INVALID_ARGUMENT|UNIMPLEMENTED|INTERNAL|FAILED_PRECONDITION): .*Execute"),
    ("plugin error: ", r"JaxRuntimeError: ([A-Z_]+):"),
    ("numerical mismatch", r"Not equal to tolerance|Arrays are not (almost )?equal|not close|Mismatched elements"),
    ("dtype mismatch", r"dtype|DType"),
    ("other: ", r"^(\w+(?:Error|Exception))"),
]


def classify(msg):
    for label, rx in CAUSES:
        m = re.search(rx, msg, re.M)
        if m:
            return label + (m.group(1) if m.groups() and m.group(1) and label.endswith((" ", ".", "@")) else "")
    return "other"


def _read_rows(report):
    if not os.path.exists(report):
        return []
    with open(report) as f:
        return [json.loads(line) for line in f if line.strip()]


def run_file(args, name, out_dir, env):
    """Runs one test file; when the process dies (a crash in the plugin takes the interpreter
    with it), records the test that was running as "crashed" and starts again without the
    tests already done, until the file is through or its time is up."""
    path = os.path.join(args.jax, "tests", name)
    stem = name.replace(".py", "")
    report = os.path.join(out_dir, stem + ".jsonl")
    done_file = os.path.join(out_dir, stem + ".done")
    for f in (report, done_file):
        if os.path.exists(f):
            os.remove(f)
    env = dict(env, CJRT_SUITE_REPORT=report, CJRT_SUITE_DONE=done_file)
    cmd = [args.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "cjrt_suite_report",
           "-o", "addopts=", "--tb=line", "-W", "ignore::DeprecationWarning", path]
    if args.k:
        cmd[4:4] = ["-k", args.k]
    t0 = time.time()
    crashes = 0
    log = open(os.path.join(out_dir, stem + ".log"), "w")
    try:
        while True:
            left = args.timeout - (time.time() - t0)
            if left <= 0:
                status = f"time limit {args.timeout}s reached"
                break
            try:
                p = subprocess.run(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   timeout=left, cwd=os.path.join(args.jax, "tests"))
            except subprocess.TimeoutExpired:
                status = f"time limit {args.timeout}s reached"
                break
            if 0 <= p.returncode <= 5:
                status = f"exit {p.returncode}"
                break
            # died: the last test started without an outcome is the one that crashed
            rows = _read_rows(report)
            finished = {r["test"] for r in rows if r["when"] != "start"}
            started = [r["test"] for r in rows if r["when"] == "start"]
            culprit = next((t for t in reversed(started) if t not in finished), None)
            if culprit is None or crashes >= args.max_crashes:
                status = f"exit {p.returncode} (crashed{', gave up' if culprit else ''})"
                break
            crashes += 1
            with open(report, "a") as f:
                f.write(json.dumps({"test": culprit, "when": "call", "outcome": "crashed",
                                    "message": f"__CRASH__ the test process died (exit "
                                               f"{p.returncode}) in this test",
                                    "duration": 0}) + "\n")
            with open(done_file, "w") as f:
                f.write("\n".join(sorted(finished | {culprit})) + "\n")
            log.write(f"\n== cjrt_suite: {culprit} crashed the process (exit {p.returncode}); "
                      "going on without the tests already done\n")
            log.flush()
    finally:
        log.close()
    if crashes:
        status += f", {crashes} crash{'es' if crashes > 1 else ''}"
    secs = time.time() - t0
    rows = [r for r in _read_rows(report) if r["when"] != "start"]
    return rows, status, secs


def summarize(name, rows, status, secs):
    c = collections.Counter(r["outcome"] for r in rows)
    passed, failed, skipped = c["passed"], c["failed"] + c["crashed"], c["skipped"]
    done = passed + failed
    rate = 100.0 * passed / done if done else 0.0
    causes = collections.Counter(classify(r["message"]) for r in rows
                                 if r["outcome"] in ("failed", "crashed"))
    return {"file": name, "passed": passed, "failed": failed, "skipped": skipped,
            "crashed": c["crashed"], "xfailed": c["xfailed"], "rate": rate, "status": status, "seconds": round(secs),
            "causes": causes.most_common()}


def outcomes(report):
    """{test: final outcome} of one file's report (the last call/setup outcome per test; a test
    that started and never finished counts as crashed)."""
    res = {}
    for r in _read_rows(report):
        if r.get("when") == "start":
            res.setdefault(r["test"], "crashed")
        elif "outcome" in r:
            if r["when"] == "teardown" and res.get(r["test"]) == "passed":
                res[r["test"]] = "failed"
            elif r["when"] != "teardown":
                res[r["test"]] = r["outcome"]
    return res


def compare(base_dir, dut_dir, top):
    """Per file: the baseline's and the device under test's counts, and the tests that pass on
    the baseline but not on the device under test (what must be explained)."""
    files = sorted(f for f in os.listdir(base_dir) if f.endswith(".jsonl"))
    print(f"| file | {os.path.basename(base_dir)} passed / failed / skipped | "
          f"{os.path.basename(dut_dir)} passed / failed / skipped | pass on the first, not the second |")
    print("|---|---:|---:|---:|")
    worse = {}
    for f in files:
        a = outcomes(os.path.join(base_dir, f))
        b = outcomes(os.path.join(dut_dir, f))
        if not b:
            continue
        def cnt(o):
            c = collections.Counter("passed" if v in ("passed", "xpassed") else
                                    "skipped" if v in ("skipped", "xfailed") else "failed"
                                    for v in o.values())
            return f"{c['passed']} / {c['failed']} / {c['skipped']}"
        lost = sorted(t for t, v in a.items() if v in ("passed", "xpassed") and
                      b.get(t) not in ("passed", "xpassed"))
        # tests the second run never reached (its time limit) are not counted as lost
        lost = [t for t in lost if t in b]
        worse[f] = [(t, b[t]) for t in lost]
        print(f"| {f.replace('.jsonl', '.py')} | {cnt(a)} | {cnt(b)} | {len(lost)} |")
    for f, lost in worse.items():
        if lost:
            print(f"\n{f.replace('.jsonl', '.py')}: passes on {os.path.basename(base_dir)}, not on "
                  f"{os.path.basename(dut_dir)}:")
            for t, v in lost[:top]:
                print(f"  {v:8s} {t}")
            if len(lost) > top:
                print(f"  ... and {len(lost) - top} more")
    return 0


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--compare":
        cp = argparse.ArgumentParser(prog="run_jax_suite.py --compare",
                                     description="compares two runs' per-test outcomes")
        cp.add_argument("base", help="the baseline run's folder (e.g. OUT/cpu)")
        cp.add_argument("dut", help="the device under test's folder (e.g. OUT/cjrt)")
        cp.add_argument("--top", type=int, default=40, help="tests listed per file")
        a = cp.parse_args(sys.argv[2:])
        return compare(a.base, a.dut, a.top)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("jax", help="a jax-ml/jax checkout whose tests/ matches the installed jax")
    ap.add_argument("--files", nargs="+", default=DEFAULT_FILES, help="test files under tests/")
    ap.add_argument("--platform", default="cjrt",
                    help="the platform under test: cjrt, or cpu for an XLA:CPU baseline")
    ap.add_argument("--only", action="store_true",
                    help="JAX_PLATFORMS=<platform> alone (default: <platform>,cpu, so that the "
                         "tests that ask for backend='cpu' by name find it; the platform under "
                         "test is the default backend either way)")
    ap.add_argument("--dut", default=None,
                    help="jax_test_dut: the device type JAX's test utilities assume (default: "
                         "the platform's own name; 'cpu' also runs the tests JAX restricts to CPU "
                         "and takes their CPU-specific expectations)")
    ap.add_argument("--plugin", default=None,
                    help="the plugin library (default: build/pjrt_c_api_cjrt_plugin.so)")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per file (default 1200)")
    ap.add_argument("--cases", type=int, default=10,
                    help="JAX_NUM_GENERATED_CASES: cases per parameterized test (default 10)")
    ap.add_argument("--devices", type=int, default=None,
                    help="devices of the platform (CJRT_CPU_DEVICE_COUNT / jax_num_cpu_devices)")
    ap.add_argument("--x64", action="store_true",
                    help="JAX_ENABLE_X64=1 (JAX's CI runs its tests both ways)")
    ap.add_argument("-k", default=None, help="pytest -k expression")
    ap.add_argument("--max-crashes", type=int, default=25,
                    help="restarts per file after the test process dies (default 25)")
    ap.add_argument("--python", default=sys.executable, help="interpreter with jax and pytest")
    ap.add_argument("--pythonpath", default="", help="extra import folders (e.g. absl-py's)")
    ap.add_argument("--out", default=os.path.join(ROOT, "out", "jax_suite"),
                    help="folder for logs and per-test outcomes")
    ap.add_argument("--top", type=int, default=8, help="causes listed per file")
    args = ap.parse_args()

    if os.sep in args.python:  # the tests run from the checkout's tests/ folder
        args.python = os.path.abspath(args.python)
    if not os.path.isdir(os.path.join(args.jax, "tests")):
        ap.error(f"{args.jax} has no tests/ folder")
    out_dir = os.path.abspath(os.path.join(args.out, args.platform + ("-x64" if args.x64 else "")
                                           + (f"-dut-{args.dut}" if args.dut else "")))
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "cjrt_suite_report.py"), "w") as f:
        f.write(REPORTER)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [out_dir, os.path.join(ROOT, "python"), args.pythonpath,
                    env.get("PYTHONPATH", "")] if p)
    env["JAX_PLATFORMS"] = args.platform if args.only or args.platform == "cpu" else \
        f"{args.platform},cpu"
    if args.dut:
        env["CJRT_SUITE_DUT"] = args.dut
    env["JAX_NUM_GENERATED_CASES"] = str(args.cases)
    env["JAX_ENABLE_X64"] = "1" if args.x64 else "0"
    plugin = args.plugin or os.path.join(ROOT, "build", "pjrt_c_api_cjrt_plugin.so")
    if args.platform == "cjrt":
        if not os.path.isfile(plugin):
            ap.error(f"no plugin at {plugin} (build it, or give --plugin)")
        env["CJRT_JAX_PLUGIN_PATH"] = os.path.abspath(plugin)
    if args.devices:
        env["CJRT_CPU_DEVICE_COUNT"] = str(args.devices)
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                            f" --xla_force_host_platform_device_count={args.devices}").strip()

    results = []
    for name in args.files:
        print(f"== {name} on {args.platform} (limit {args.timeout}s)", flush=True)
        rows, status, secs = run_file(args, name, out_dir, env)
        s = summarize(name, rows, status, secs)
        results.append(s)
        crashed = f" ({s['crashed']} crashed)" if s["crashed"] else ""
        print(f"   {s['passed']} passed, {s['failed']} failed{crashed}, {s['skipped']} skipped: "
              f"{s['rate']:.1f}% of the tests that ran pass ({status}, {s['seconds']}s)", flush=True)
        for cause, n in s["causes"][:args.top]:
            print(f"     {n:5d}  {cause}")

    print("\n| file | passed | failed | skipped | pass rate | run |")
    print("|---|---:|---:|---:|---:|---|")
    tp = tf = ts = 0
    for s in results:
        tp, tf, ts = tp + s["passed"], tf + s["failed"], ts + s["skipped"]
        print(f"| {s['file']} | {s['passed']} | {s['failed']} | {s['skipped']} | "
              f"{s['rate']:.1f}% | {s['status']}, {s['seconds']}s |")
    if len(results) > 1:
        print(f"| all | {tp} | {tf} | {ts} | {100.0 * tp / max(1, tp + tf):.1f}% | |")
    total = collections.Counter()
    for s in results:
        total.update(dict(s["causes"]))
    if total:
        print("\nmain failure causes (all files):")
        for cause, n in total.most_common(args.top * 2):
            print(f"  {n:5d}  {cause}")
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
