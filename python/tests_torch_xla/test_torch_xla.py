"""PyTorch/XLA on cjrt (issue 16): the same training runs on torch_xla's own CPU client and on
cjrt through torch_xla's plugin loading (PJRT_DEVICE=LIBRARY), with torch_xla's default settings
(programs sent as HloModuleProtos), on one device and on two; the losses and the trained
parameters must agree. Run by scripts/test_torch_xla.sh, which installs torch and torch-xla
(about 7 GB from PyPI) into their own environment; skipped where torch_xla is not installed."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch_xla", reason="torch_xla is not installed (scripts/test_torch_xla.sh installs it)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PLUGIN = os.environ.get("CJRT_PLUGIN") or os.path.join(ROOT, "build", "pjrt_c_api_cjrt_plugin.so")
NDEV = 2


def run(mode, backend):
    env = dict(os.environ)
    for k in ("PJRT_DEVICE", "PJRT_LIBRARY_PATH", "CPU_NUM_DEVICES", "XLA_STABLEHLO_COMPILE"):
        env.pop(k, None)
    if backend == "cpu":
        env.update(PJRT_DEVICE="CPU", CPU_NUM_DEVICES=str(NDEV if mode != "single" else 1))
    else:
        env.update(PJRT_DEVICE="LIBRARY", PJRT_LIBRARY_PATH=PLUGIN,
                   CJRT_CPU_DEVICE_COUNT=str(NDEV if mode != "single" else 1))
    p = subprocess.run([sys.executable, os.path.join(HERE, "torch_xla_worker.py"), mode], env=env,
                       capture_output=True, text=True, timeout=600)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:]), p
    return None, p


@pytest.fixture(scope="module", autouse=True)
def plugin_exists():
    if not os.path.isfile(PLUGIN):
        pytest.fail(f"the cjrt plugin is not built: {PLUGIN}")


@pytest.mark.parametrize("mode", ["single", "threads", "spmd"])
def test_training_matches_cpu(mode):
    ref, pr = run(mode, "cpu")
    assert ref is not None, f"torch_xla's CPU client failed:\n{pr.stderr[-3000:]}"
    got, pg = run(mode, "cjrt")
    assert got is not None, f"cjrt failed:\n{pg.stderr[-3000:]}"
    assert got["devices"] == ref["devices"] == (1 if mode == "single" else NDEV)
    np.testing.assert_allclose(got["losses"], ref["losses"], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(got["param_sums"], ref["param_sums"], rtol=2e-5, atol=1e-5)
    for losses in got["losses"]:
        assert losses[-1] < losses[0], f"the loss did not go down: {losses}"
    if mode == "threads":  # the replicas trained on different halves of the batch
        assert not np.allclose(got["losses"][0], got["losses"][1])
