"""Imported by every example before numba: with no usable CUDA GPU, the example runs under
numba-cuda's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, read when numba is imported), on small
sizes, and says so.  Set ``NUMBA_ENABLE_CUDASIM`` yourself to choose either way."""

import ctypes
import os


def gpu_present() -> bool:
    """Whether the CUDA driver loads and sees a device (without importing numba)."""
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            driver = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        return driver.cuInit(0) == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    return False


if "NUMBA_ENABLE_CUDASIM" not in os.environ and not gpu_present():
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
if SIMULATED:
    print("simulated on the CPU (numba-cuda's CUDA simulator; no GPU found): small sizes", flush=True)
