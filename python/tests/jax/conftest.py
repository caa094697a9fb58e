"""Fixtures of the JAX suite: real JAX programs run on the cjrt platform and on JAX's own CPU
backend (XLA:CPU), results compared (jaxcheck.py holds the helpers).

The cjrt platform comes from the jax_plugins.cjrt package (python/ is on PYTHONPATH, or the
wheel is installed). The library it registers is $CJRT_JAX_PLUGIN_PATH, else the file named by
$CJRT_PLUGIN (scripts/test.sh sets it to build/pjrt_c_api_cjrt_plugin.so), else build/'s. Both
platforms get NDEV devices, set before JAX creates its clients.
"""
import os

import pytest

jax = pytest.importorskip("jax")  # the whole folder needs JAX

from jaxcheck import NDEV  # noqa: E402

_plugin = os.environ.get("CJRT_PLUGIN")
if (not os.environ.get("CJRT_JAX_PLUGIN_PATH") and _plugin and os.path.isfile(_plugin)
        and os.path.basename(_plugin) == "pjrt_c_api_cjrt_plugin.so"):
    os.environ["CJRT_JAX_PLUGIN_PATH"] = os.path.abspath(_plugin)
os.environ.setdefault("CJRT_CPU_DEVICE_COUNT", str(NDEV))

try:  # XLA:CPU with as many devices (before its client exists)
    jax.config.update("jax_num_cpu_devices", NDEV)
except Exception:  # pragma: no cover - backends already created by an earlier test file
    pass


@pytest.fixture(scope="session")
def cj_devices():
    import jaxcheck

    devs = jaxcheck.cjrt_devices()
    if devs is None:
        msg = ("the cjrt JAX platform is not registered (no pjrt_c_api_cjrt_plugin.so: build "
               "it, or set CJRT_JAX_PLUGIN_PATH)")
        if os.environ.get("CJRT_PLUGIN") or os.environ.get("CJRT_JAX_PLUGIN_PATH"):
            pytest.fail(msg)  # a plugin was named: not finding it is a failure, not a skip
        pytest.skip(msg)
    return devs


@pytest.fixture(scope="session")
def cj(cj_devices):
    return cj_devices[0]


@pytest.fixture(scope="session")
def cpu():
    return jax.devices("cpu")[0]


def pytest_terminal_summary(terminalreporter):
    """With CJRT_JAX_VIA=hlo|hlo_text: how many programs ran as HLO, and why others did not."""
    import jaxcheck

    if not jaxcheck.VIA:
        return
    st = jaxcheck.VIA_STATS
    why = ", ".join(f"{n} {r}" for r, n in st["through_jax"].most_common()) or "none"
    terminalreporter.write_line(
        f"CJRT_JAX_VIA={jaxcheck.VIA}: {st['hlo']} programs ran on cjrt as HLO; through JAX "
        f"instead: {sum(st['through_jax'].values())} ({why})")
