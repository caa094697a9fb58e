"""TensorFlow on cjrt (issue 16): TensorFlow 2.21 loads the cjrt plugin as a next pluggable
device (TFNPD_InitPlugin + GetPjrtApi, src/tfnpd), lists /physical_device:CJRT:0, and a Keras
model's jit-compiled train step runs there with the losses and weights TensorFlow's CPU gives.
Run by scripts/test_tensorflow.sh (tensorflow-cpu in its own environment); skipped where
TensorFlow is not installed. Each run is a subprocess: TensorFlow registers plugins once per
process."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("tensorflow", reason="TensorFlow is not installed (scripts/test_tensorflow.sh installs it)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PLUGIN = os.environ.get("CJRT_PLUGIN") or os.path.join(ROOT, "build", "pjrt_c_api_cjrt_plugin.so")
# TensorFlow's PJRT "device API" must be on for jit_compile on a next pluggable device
# (docs/TENSORFLOW.md); TensorFlow parses TF_XLA_FLAGS once, so it is set before it starts.
FLAG = "--tf_xla_use_device_api=true"


def run(dump_dir):
    env = dict(os.environ)
    env["TF_XLA_FLAGS"] = (env.get("TF_XLA_FLAGS", "") + " " + FLAG).strip()
    env["CJRT_DUMP_DIR"] = str(dump_dir)  # cjrt writes each program it compiles there
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    p = subprocess.run([sys.executable, os.path.join(HERE, "tf_worker.py"), PLUGIN], env=env,
                       capture_output=True, text=True, timeout=600)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:]), p
    return None, p


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    if not os.path.isfile(PLUGIN):
        pytest.fail(f"the cjrt plugin is not built: {PLUGIN}")
    dump = tmp_path_factory.mktemp("cjrt_dump")
    got, p = run(dump)
    assert got is not None, f"the TensorFlow run failed (rc {p.returncode}):\n{p.stderr[-4000:]}"
    got["compiled"] = sorted(f.name for f in dump.iterdir() if f.name.endswith(".hlo.pb"))
    return got


def test_device_listed(result):
    assert "/physical_device:CJRT:0" in result["devices"], result["devices"]


def test_train_step_on_cjrt_matches_cpu(result):
    cpu, cj = result["cpu"], result["cjrt"]
    assert cpu["result_devices"] == ["/job:localhost/replica:0/task:0/device:CPU:0"]
    assert cj["result_devices"] == ["/job:localhost/replica:0/task:0/device:CJRT:0"]
    np.testing.assert_allclose(cj["losses"], cpu["losses"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cj["param_sums"], cpu["param_sums"], rtol=1e-5, atol=1e-5)
    assert cj["losses"][-1] < cj["losses"][0], f"the loss did not go down: {cj['losses']}"
    # the train step reached cjrt as HLO (TensorFlow's HloModuleProto, format "hlo")
    assert result["compiled"], "cjrt compiled no HLO program"
