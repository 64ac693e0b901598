"""The errors of numba_tma's device ops (raised at compile time) and of its launches (importable
without compiling anything)."""


class OpError(TypeError):
    """An op refused, of either vendor: the base of :class:`ArchError` and :class:`OpArgumentError`
    (``numba_tma.amd.AMDError``, the AMD path's base of before, is this class)."""


class ArchError(OpError):
    """An op was compiled for an architecture (or PTX ISA) that lacks its instruction."""


class OpArgumentError(OpError):
    """An op was called with an argument its instruction cannot take (raised at compile time)."""


class LaunchError(ValueError):
    """A launch the device or the kernel cannot take, named before anything runs (also
    ``numba_tma.LaunchError``, ``numba_tma.launch.LaunchError``)."""


class SharedMemoryPlanError(ValueError):
    """A piece a :class:`numba_tma.SharedMemoryPlan` cannot hold, named with the rule it breaks (also
    when a launch gives a plan's carver less dynamic shared memory than it needs)."""


class RegisterCountError(RuntimeError):
    """ptxas dropped a kernel's ``wgmma.setmaxnreg`` (raised when the kernel is linked, with the
    rule that makes it take effect)."""


# The rule both paths give when a parity wait is handed a state token (arrive's return value).
PHASE_NOT_TOKEN = ("must be a phase parity (0 or 1, or a phase counter: bit 0 is used), not the state token "
                   "arrive() returned — wait on a token with test_wait_token / try_wait_token")
MULTICAST_NEEDS_CLUSTER = ("must be 'cluster' with multicast: the PTX ISA defines "
                           "cp.async.bulk.tensor...multicast::cluster only with a .shared::cluster destination")
# wgmma.store / store_bf16 with an int32 fragment (compiled and simulated alike)
FRAGMENT_FLOAT_ONLY = ("must be a float32 fragment: store an int32 one register by register, in the fragment "
                       "layout (wgmma.store's documentation)")
# wgmma.map's rules, in the words every host and the simulator refuse with
MAP_ACC_FLOAT = ("must be a float32 fragment (an s8 / u8 MMA's int32 one: map it register by register in the "
                 "layout of wgmma.store)")
MAP_FN = ("must be a numba.cuda.jit(device=True) function, called as fn(v, r, c, *args) for each float32 "
          "register v at (r, c) (a Python function, a kernel or a builtin is not one)")
# wgmma.a_fragment's and wgmma.mask's rules, in the words the compiled helpers and their twins refuse with
A_FRAGMENT_COLUMNS = {"bf16": 16, "f16": 16, "e4m3": 32, "e5m2": 32}   # its dtypes -> the columns of one K step
A_FRAGMENT_KK = "must be a constant in [0, {steps}): a K step of {cols} columns of the 64 x {n} tile"
A_FRAGMENT_DTYPE = "must be 'bf16', 'f16', 'e4m3' or 'e5m2' (the A types of wgmma's register form)"
MASK_ACC_FLOAT = "must be a float32 fragment (a mask is for scores: float accumulators)"
