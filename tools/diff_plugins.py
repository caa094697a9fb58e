#!/usr/bin/env python3
"""Differential testing of two PJRT plugins: dump the programs a command compiles on cjrt, run
each on both plugins with the same pseudo-random arguments, print the outputs that differ.

    tools/diff_plugins.py --peer XLA_CPU_PLUGIN.so --dump DIR -- COMMAND [ARGS...]
    tools/diff_plugins.py --peer XLA_CPU_PLUGIN.so --programs DIR_OR_FILE...

The first form runs COMMAND with CJRT_DUMP_DIR=DIR (the cjrt plugin then writes every program
it compiles there, DIR/cjrt_<pid>_<n>.mlir plus its .options.pb; see src/runtime/executable.c),
then compares what was dumped; the second compares programs already on disk (*.mlir, text or
bytecode; a folder is searched recursively). COMMAND must run JAX (or any framework) on the cjrt
plugin, e.g.

    tools/diff_plugins.py --peer $XLA --dump /tmp/dd/numerics -- env \\
        CJRT_PLUGIN=$PWD/build/pjrt_c_api_cjrt_plugin.so PYTHONPATH=$PWD/python \\
        python -m pytest -q python/tests/jax/test_jax_numerics.py
    # JAX's own tests (cwd = jax/tests), as tools/run_jax_suite.py runs them:
    tools/diff_plugins.py --peer $XLA --dump /tmp/dd/lax --cwd JAX/tests -- env \\
        JAX_PLATFORMS=cjrt,cpu CJRT_JAX_PLUGIN_PATH=$PWD/build/pjrt_c_api_cjrt_plugin.so \\
        PYTHONPATH=$PWD/python JAX_NUM_GENERATED_CASES=2 python -m pytest -q lax_test.py

XLA_CPU_PLUGIN.so is XLA's own CPU plugin (pjrt_c_api_cpu_plugin.so, e.g. from a jaxlib or a
PJRT plugin wheel; $CJRT_PEER_PLUGIN is the default). --plugin is the plugin under test
(default build/pjrt_c_api_cjrt_plugin.so of this checkout).

Programs are deduplicated by content, then given to `cjrt bench --plugin P --peer Q --json` in
batches (bench fills every argument with deterministic pseudo-random values: floats in
[-0.1, 0.1), integers 0..7, and compares the first outputs with a tolerance per element type;
see tools/cmd_bench.c). When a bench process dies, or spends more than --timeout seconds on one
program, that program is reported as CRASHED (a crash, a hang, or a program that loops forever
on these arguments, e.g. a Collatz loop started at 0) and the rest go on in a new batch. Prints one line per mismatch (and, with
--failures, per program that failed to compile or run on either plugin), then a summary:

    MISMATCH DIR/cjrt_123_4.mlir: output 0 (f32) element [3]: A 1 vs B 2 ...
    diff_plugins: 812 programs (1034 dumped), 790 agree, 3 mismatch, 19 failed, 0 crashed

Exit status 1 when any program mismatched or crashed. Triage each mismatch by hand:
`build/cjrt run PROG --plugin P --input ...` on both plugins. Differences that are not bugs:
NaN payloads/signs, integer index arguments out of range (implementation-defined in StableHLO
for some ops), float-to-int conversion of out-of-range values, programs made for several devices
(bench compiles for one; they usually fail instead).
"""
import argparse
import hashlib
import json
import os
import selectors
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_programs(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, files in os.walk(p):
                out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".mlir")]
        else:
            out.append(p)
    seen, uniq = set(), []
    for p in out:
        with open(p, "rb") as f:
            h = hashlib.sha1(f.read()).hexdigest()
        if h not in seen:
            seen.add(h)
            uniq.append(p)
    return uniq, len(out)


def bench(args, progs):
    """Runs one bench process over progs: ({program: json row} for the programs it finished,
    None or a string saying why it stopped early). bench handles the programs in order and
    prints a row as each finishes, so the first program without a row is the one it died on or
    spent more than --timeout seconds on."""
    cmd = [args.cjrt, "bench", "--json", "--plugin", args.plugin, "--peer", args.peer,
           "--min-time", str(args.min_time)] + progs
    rows, why, buf = {}, None, b""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + args.timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not sel.select(left):
            why = f"no result within {args.timeout:g} s (a hang, or a loop that never ends " \
                  "on these arguments)"
            p.kill()
            break
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            if line.startswith(b"{"):
                try:
                    r = json.loads(line.decode("utf-8", "replace"))
                except ValueError:
                    continue
                rows[r["program"]] = r
                deadline = time.monotonic() + args.timeout
    rc = p.wait()
    p.stdout.close()
    if why is None and rc not in (0, 1):
        why = f"cjrt bench died (exit status {rc})"
    return rows, why


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__[__doc__.index("\n"):])
    ap.add_argument("--plugin", default=os.path.join(ROOT, "build", "pjrt_c_api_cjrt_plugin.so"))
    ap.add_argument("--peer", default=os.environ.get("CJRT_PEER_PLUGIN"))
    ap.add_argument("--cjrt", default=os.path.join(ROOT, "build", "cjrt"))
    ap.add_argument("--dump", help="folder for the programs COMMAND compiles (created)")
    ap.add_argument("--cwd", help="run COMMAND in this folder")
    ap.add_argument("--command-timeout", type=float, default=3600,
                    help="seconds COMMAND may run (default 3600)")
    ap.add_argument("--programs", nargs="+", help="compare these programs (files or folders)")
    ap.add_argument("--batch", type=int, default=50, help="programs per bench process")
    ap.add_argument("--timeout", type=float, default=20,
                    help="seconds one program may take on both plugins (default 20)")
    ap.add_argument("--min-time", type=float, default=0.001)
    ap.add_argument("--failures", action="store_true",
                    help="also list programs that failed on either plugin")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    if not args.peer:
        ap.error("--peer (or $CJRT_PEER_PLUGIN): XLA's CPU plugin .so is needed")
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    paths = list(args.programs or [])
    if command:
        if not args.dump:
            ap.error("a COMMAND needs --dump DIR")
        os.makedirs(args.dump, exist_ok=True)
        env = dict(os.environ, CJRT_DUMP_DIR=os.path.abspath(args.dump))
        try:
            rc = subprocess.run(command, env=env, cwd=args.cwd,
                                timeout=args.command_timeout).returncode
            print(f"diff_plugins: command exited {rc}", file=sys.stderr)
        except subprocess.TimeoutExpired:
            print(f"diff_plugins: command stopped after {args.command_timeout}s", file=sys.stderr)
        paths.append(args.dump)
    if not paths:
        ap.error("give --programs or --dump DIR -- COMMAND")
    progs, ndumped = find_programs(paths)
    agree = mismatch = failed = crashed = 0
    todo = list(progs)
    while todo:
        batch = todo[:args.batch]
        rows, why = bench(args, batch)
        done = 0
        for p in batch:
            r = rows.get(os.path.basename(p))
            if r is None:
                break
            done += 1
            if r.get("outputs_agree") is True:
                agree += 1
            elif r.get("outputs_agree") is False:
                mismatch += 1
                print(f"MISMATCH {p}: {r['error']}", flush=True)
            else:
                failed += 1
                if args.failures:
                    print(f"FAILED {p}: {r['error']}", flush=True)
        if done < len(batch):  # bench stopped on batch[done]: record it, go on after it
            crashed += 1
            print(f"CRASHED {batch[done]}: {why or 'no result'}", flush=True)
            done += 1
        todo = todo[done:]
    print(f"diff_plugins: {len(progs)} programs ({ndumped} dumped), {agree} agree, "
          f"{mismatch} mismatch, {failed} failed, {crashed} crashed")
    return 1 if mismatch or crashed else 0


if __name__ == "__main__":
    sys.exit(main())
