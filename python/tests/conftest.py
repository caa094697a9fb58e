"""Fixtures for the cjrt Python tests. The plugin comes from $CJRT_PLUGIN (scripts/test.sh sets
it to build/pjrt_c_api_cjrt_plugin.so), else the one next to libcjrt."""
import os

import numpy as np
import pytest

import cjrt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


def _plugin():
    return os.environ.get("CJRT_PLUGIN") or None


@pytest.fixture(scope="session")
def plugin():
    return _plugin()


@pytest.fixture(scope="session")
def client():
    try:
        c = cjrt.Client(_plugin(), cpu_device_count=2)
    except ImportError as e:
        pytest.skip(f"libcjrt is not built: {e}")
    return c


@pytest.fixture(scope="session")
def hello(client):
    """examples/hello.mlir compiled."""
    with open(os.path.join(EXAMPLES, "hello.mlir")) as f:
        return client.compile(f.read())


@pytest.fixture
def no_leaks():
    """Checks that the test leaves no native buffer alive (each freed exactly once)."""
    import gc

    gc.collect()
    before = cjrt.live_buffers()
    yield
    gc.collect()
    assert cjrt.live_buffers() == before
