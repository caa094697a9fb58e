"""The installable package: a wheel built from python/ ships both native libraries and the
jax_plugins entry point, and JAX finds cjrt from the installed files alone (no PYTHONPATH into
the source tree)."""
import glob
import os
import subprocess
import sys
import zipfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.dirname(os.path.dirname(HERE))


def _plugin_dir():
    from jax_plugins import cjrt as plugin_pkg

    lib = plugin_pkg.library_path()
    if lib is None:
        pytest.skip("no plugin library built")
    d = os.path.dirname(lib)
    if not os.path.isfile(os.path.join(d, "libcjrt.so")):
        pytest.skip(f"no libcjrt.so next to {lib}")
    return d


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    pytest.importorskip("setuptools")
    try:  # setuptools >= 70.1 has bdist_wheel; older ones need the wheel package
        import setuptools.command.bdist_wheel  # noqa: F401
    except ImportError:
        pytest.importorskip("wheel", reason="building a wheel offline needs setuptools >= 70.1 "
                            "or the wheel package")
    build_dir = _plugin_dir()
    out = tmp_path_factory.mktemp("wheel")
    env = dict(os.environ, CJRT_BUILD_DIR=build_dir, PIP_NO_INDEX="1")
    # --no-build-isolation: use this interpreter's setuptools (no download); CJRT_BUILD_DIR:
    # take the libraries already built instead of running CMake again
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "-w", str(out), PYDIR], env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    wheels = glob.glob(str(out / "cjrt-*.whl"))
    assert len(wheels) == 1, os.listdir(out)
    return wheels[0]


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "jax_plugins/cjrt/__init__.py" in names
    assert "jax_plugins/cjrt/pjrt_c_api_cjrt_plugin.so" in names
    assert "cjrt/libcjrt.so" in names
    assert not any(n.startswith("jax_plugins/__init__") for n in names)  # a namespace package
    ep = [n for n in names if n.endswith("entry_points.txt")]
    assert ep
    text = zipfile.ZipFile(wheel).read(ep[0]).decode()
    assert "[jax_plugins]" in text and "cjrt = jax_plugins.cjrt" in text
    assert "-py3-none-linux_" in os.path.basename(wheel)


def test_installed_wheel_registers_cjrt(wheel, tmp_path):
    target = tmp_path / "site"
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                        "--target", str(target), wheel], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "CJRT_JAX_PLUGIN_PATH", "CJRT_PLUGIN", "CJRT_LIBRARY",
                        "PJRT_NAMES_AND_LIBRARY_PATHS", "JAX_PLATFORMS")}
    env["PYTHONPATH"] = str(target)
    code = """
import jax, jax.numpy as jnp, numpy as np, cjrt
from jax_plugins import cjrt as pkg
d = jax.devices("cjrt")[0]
y = jax.jit(lambda a: a * 2 + 1)(jax.device_put(np.arange(3.0, dtype=np.float32), d))
c = cjrt.Client()
print(pkg.library_path().startswith(%r), jax.default_backend(), y.devices() == {d},
      np.asarray(y).tolist(), c.platform)
""" % str(target)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=300, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "cpu", "True", "[1.0,", "3.0,", "5.0]", "cjrt"], \
        p.stdout + p.stderr
