"""cjrt past one process: jax.distributed with 2 processes (started by mpirun) x 2 cjrt devices
see 4 global devices, and shard_map+psum, a jit reduction over a global array, a data-parallel
training step (batch split over both processes' devices) and multihost_utils.process_allgather
give the single-process answers (mp_worker.py). A process that
never creates its client (stuck or dead) makes the other fail with a clear error naming it within
CJRT_KV_TIMEOUT_MS.

Skipped with a reason when mpirun or the plugin's MPI module (libcjrt_mpi.so) is missing.
"""
import os
import shutil
import socket
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MPIRUN = shutil.which("mpirun")


def _plugin():
    p = os.environ.get("CJRT_JAX_PLUGIN_PATH") or os.environ.get("CJRT_PLUGIN")
    if not p:
        p = os.path.join(HERE, "..", "..", "..", "build", "pjrt_c_api_cjrt_plugin.so")
    return os.path.abspath(p)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(mode, n=2, timeout=120, extra_env=None):
    plugin = _plugin()
    if MPIRUN is None:
        pytest.skip("mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)")
    if not os.path.isfile(plugin):
        pytest.skip(f"no cjrt plugin at {plugin}")
    if not os.path.isfile(os.path.join(os.path.dirname(plugin), "libcjrt_mpi.so")):
        pytest.skip("cjrt was built without MPI (no libcjrt_mpi.so next to the plugin)")
    env = dict(os.environ)
    env["CJRT_JAX_PLUGIN_PATH"] = plugin
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(HERE, "..", ".."), env.get("PYTHONPATH", "")])
    env.update(extra_env or {})
    cmd = ["timeout", str(timeout), MPIRUN, "--allow-run-as-root", "--oversubscribe",
           "-x", "CJRT_JAX_PLUGIN_PATH", "-x", "PYTHONPATH", "-x", "CJRT_KV_TIMEOUT_MS",
           "-n", str(n), sys.executable, os.path.join(HERE, "mp_worker.py"), mode,
           str(_free_port())]
    env.setdefault("CJRT_KV_TIMEOUT_MS", "60000")
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout + 30)


def test_two_processes_match_single_process():
    r = _launch("run")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "MP-OK 0" in out and "MP-OK 1" in out, out[-6000:]


def test_missing_peer_fails_clearly_within_timeout():
    import time

    t0 = time.monotonic()
    r = _launch("stuck", timeout=90, extra_env={"CJRT_KV_TIMEOUT_MS": "5000"})
    took = time.monotonic() - t0
    out = r.stdout + r.stderr
    assert r.returncode not in (0, 124), out[-4000:]
    assert "process 1 of 2 did not publish its devices" in out, out[-4000:]
    assert "MP-OK" not in out
    assert took < 80, f"took {took:.0f} s"


def test_killed_peer_ends_the_job_instead_of_hanging():
    """A peer killed mid-run (after the clients agreed on the topology, before the first
    collective): Open MPI's launcher ends the job, naming the dead process, and process 0 does not
    wait forever in its collective. (cjrt itself does not outlive a lost MPI peer; see
    docs/MULTIPROCESS.md.)"""
    import time

    t0 = time.monotonic()
    r = _launch("killed", timeout=90)
    took = time.monotonic() - t0
    out = r.stdout + r.stderr
    assert r.returncode not in (0, 124), out[-4000:]
    assert "MP-OK" not in out
    assert "signal 9" in out or "Killed" in out, out[-4000:]
    assert took < 80, f"took {took:.0f} s"
