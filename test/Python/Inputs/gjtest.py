"""Helpers shared by the Python package's tests (test/Python)."""

import os
import subprocess
import sys

SAXPY = """
kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = a * x[i] + y[i]; }
}
"""

# What gridjit.Runtime("cuda") adds to a NoDeviceError (python/gridjit/_runtime.py).
NO_DEVICE_HINT = (
    'Kernels compiled for target="host" run on this machine\'s CPU, and PTX compiles without a device '
    '(gridjit.compile(source, target="cuda").ptx)'
)


class DLPackOnly:
    """\\p a as another framework's array would hold it, seen through DLPack
    alone (__dlpack__, __dlpack_device__)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def scratch_dir():
    """The test's own scratch directory (lit's %t, passed as GJ_TEST_TMP)."""
    d = os.environ.get("GJ_TEST_TMP")
    if not d:
        import tempfile

        d = tempfile.mkdtemp(prefix="gridjit-test-")
    os.makedirs(d, exist_ok=True)
    return d


def run_python(code, env=None, check=True):
    """Runs \\p code in a fresh interpreter (this one, same sys.path) and
    returns its stdout; fails the test with stderr when it fails."""
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    if env:
        for k, v in env.items():
            if v is None:
                full_env.pop(k, None)
            else:
                full_env[k] = v
    p = subprocess.run([sys.executable, "-c", code], env=full_env, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError("subprocess failed (%d):\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
    return p
