#!/usr/bin/env python3
"""List the global symbols of cjrt's objects that break the naming rule (issue 12: one prefix).

Usage: symbol_prefix.py BUILD_DIR

The rule, by where the object is built:
  core libraries (libcj_*.a: base, ir, frontend, compiler, runtime, cpu, reference, backends): cj_
  the plugin's PJRT layer (src/pjrt): cjp_, plus the one exported entry point GetPjrtApi
  the loader library and the MPI module (src/loader, src/mpi): cjrt_ (public and internal);
    the loader also builds base/dtype.c, whose symbols keep the core prefix cj_
  xerbla_ is allowed anywhere: it is LAPACK's error hook, which cjrt overrides by that name.
  The names the plugin exports (src/pjrt/exports.map: GetPjrtApi, TFNPD_InitPlugin, the LAPACK
  routine table's cjrt_lapack_*) are its public interface, spelled for its users: allowed too.
Names starting with "__" are the implementation's (ASan's __odr_asan.* twins, for example) and
are not checked.
Exits 1 and names each offending symbol and object when there is one; 2 when nothing was found
to check (a wrong build directory must not pass)."""
import os
import subprocess
import sys

ALWAYS = {"xerbla_"}


def exported(root):
    """The names src/pjrt/exports.map makes global (its `global:` list)."""
    names, on = set(), False
    with open(os.path.join(root, "src", "pjrt", "exports.map")) as f:
        for line in f:
            w = line.strip()
            if w.startswith("global:"):
                on = True
            elif w.startswith("local:"):
                on = False
            elif on and w.endswith(";"):
                names.add(w[:-1].strip())
    return names


def globals_of(path):
    out = subprocess.run(["nm", "-g", "--defined-only", path], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit("nm failed on %s: %s" % (path, out.stderr.strip()))
    obj = os.path.basename(path)
    for line in out.stdout.splitlines():
        if line.endswith(":"):
            obj = line[:-1]
            continue
        p = line.split()
        if len(p) == 3 and p[1] in "TDBRVWG":
            yield obj, p[2]


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    build = sys.argv[1]
    checks = []
    for f in sorted(os.listdir(build)):
        if f.startswith("libcj_") and f.endswith(".a"):
            checks.append((os.path.join(build, f), ("cj_",), set()))
    cm = os.path.join(build, "CMakeFiles")
    for target, prefixes, extra in (("cjrt_plugin.dir/src/pjrt", ("cjp_",), {"GetPjrtApi"}),
                                    ("cjrt.dir/src/loader", ("cjrt_", "cj_"), set()),
                                    ("cjrt_mpi.dir/src/mpi", ("cjrt_",), set())):
        d = os.path.join(cm, target)
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                if f.endswith(".o"):
                    checks.append((os.path.join(d, f), prefixes, extra))
    if not checks:
        print("symbol_prefix: no cjrt libraries or objects under %s" % build)
        return 2
    public = exported(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    bad, total = [], 0
    for path, prefixes, extra in checks:
        for obj, name in globals_of(path):
            total += 1
            if (name in ALWAYS or name in extra or name in public
                    or name.startswith(prefixes + ("__",))):
                continue
            bad.append("%s: %s (%s) lacks the prefix %s" % (os.path.basename(path), name, obj,
                                                             " or ".join(prefixes)))
    for b in bad:
        print(b)
    print("symbol_prefix: %d global symbols in %d files, %d without their prefix"
          % (total, len(checks), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
