"""Builds the native half of the cjrt wheel: libcjrt.so (for the `cjrt` package) and
pjrt_c_api_cjrt_plugin.so (for `jax_plugins.cjrt`), with CMake from the source tree this folder
belongs to. Metadata lives in pyproject.toml.

Where the two libraries come from, first match wins:
  1. $CJRT_BUILD_DIR: an existing CMake build folder of this tree (e.g. build/ after
     scripts/build.sh; relative to the repository root): its libcjrt.so and
     pjrt_c_api_cjrt_plugin.so are copied;
  2. copies already placed at cjrt/libcjrt.so and jax_plugins/cjrt/pjrt_c_api_cjrt_plugin.so;
  3. otherwise CMake configures and builds them (Release, no tests) in build/cmake/ under this
     folder: a C11 compiler and cmake >= 3.20 are needed (scripts/setup.sh installs them).
Set CJRT_WHEEL_BUILD_TYPE to build another CMake configuration.
"""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PLUGIN = "pjrt_c_api_cjrt_plugin.so"
LIBCJRT = "libcjrt.so"
# (file, package folder it ships in)
NATIVE = [(LIBCJRT, "cjrt"), (PLUGIN, os.path.join("jax_plugins", "cjrt"))]


def _from_dir(d):
    missing = [f for f, _ in NATIVE if not os.path.isfile(os.path.join(d, f))]
    if missing:
        raise SystemExit(f"cjrt: CJRT_BUILD_DIR={d} lacks {', '.join(missing)} "
                         "(build it with scripts/build.sh, or unset CJRT_BUILD_DIR)")
    return {f: os.path.join(d, f) for f, _ in NATIVE}


def _cmake_build():
    if not os.path.isfile(os.path.join(ROOT, "CMakeLists.txt")) or \
            not os.path.isdir(os.path.join(ROOT, "src", "pjrt")):
        raise SystemExit(
            "cjrt: the native libraries are missing and the cjrt source tree is not beside this "
            f"folder ({ROOT}); build from a checkout (pip install ./python), or set "
            "CJRT_BUILD_DIR to a CMake build folder holding libcjrt.so and " + PLUGIN)
    cmake = shutil.which("cmake")
    if cmake is None:
        raise SystemExit("cjrt: building the native libraries needs cmake (>= 3.20) and a C "
                         "compiler; install them (apt-get install cmake build-essential, or "
                         "scripts/setup.sh) or set CJRT_BUILD_DIR to a finished build folder")
    bdir = os.path.join(HERE, "build", "cmake")
    cfg = [cmake, "-S", ROOT, "-B", bdir,
           "-DCMAKE_BUILD_TYPE=" + os.environ.get("CJRT_WHEEL_BUILD_TYPE", "Release"),
           "-DCJRT_BUILD_TESTS=OFF"]
    if shutil.which("ninja") and not os.path.isfile(os.path.join(bdir, "CMakeCache.txt")):
        cfg += ["-G", "Ninja"]
    subprocess.check_call(cfg)
    subprocess.check_call([cmake, "--build", bdir, "--target", "cjrt_plugin", "cjrt",
                           "-j", str(os.cpu_count() or 1)])
    return _from_dir(bdir)


def native_libraries():
    env = os.environ.get("CJRT_BUILD_DIR")
    if env:
        # pip runs this file inside python/: a relative folder is taken from the repository root
        return _from_dir(env if os.path.isabs(env) else os.path.join(ROOT, env))
    placed = {f: os.path.join(HERE, pkg, f) for f, pkg in NATIVE}
    if all(os.path.isfile(p) for p in placed.values()):
        return placed
    return _cmake_build()


class BuildPyWithNative(build_py):
    """build_py that also puts the two native libraries into the built packages."""

    def run(self):
        super().run()
        libs = native_libraries()
        for f, pkg in NATIVE:
            dst_dir = os.path.join(self.build_lib, pkg)
            os.makedirs(dst_dir, exist_ok=True)
            dst = os.path.join(dst_dir, f)
            if os.path.abspath(libs[f]) != os.path.abspath(dst):
                self.copy_file(libs[f], dst)


class NativeDistribution(Distribution):
    """The wheel carries native code (not a Python extension: ctypes loads it), so it is tagged
    for this platform."""

    def has_ext_modules(self):
        return True


cmdclass = {"build_py": BuildPyWithNative}
try:  # tag py3-none-<platform>: the libraries do not depend on the Python version
    try:
        from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
    except ImportError:
        from wheel.bdist_wheel import bdist_wheel as _bdist_wheel

    class BdistWheel(_bdist_wheel):
        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

    cmdclass["bdist_wheel"] = BdistWheel
except ImportError:
    pass

setup(cmdclass=cmdclass, distclass=NativeDistribution)
