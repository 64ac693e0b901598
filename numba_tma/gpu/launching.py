"""A launch on the GPU through numba-cuda's compiled kernels and cuda.core's launch: the checks of a
distinct launch against the device (once), of a compiled kernel against the launch (once), its
opt-ins, and the launch itself, its arguments prepared as numba's own launch prepares them.
:func:`numba_tma.launch` and a :class:`numba_tma.LaunchGraph`'s nodes come here on the GPU
(:class:`numba_tma.gpu.GpuBackend`)."""

from __future__ import annotations

from .. import launch_limits
from ..errors import LaunchError
from ..launch_limits import PORTABLE_CLUSTER
from ..numba_cuda.kernel_arguments import launched_again

_PLANS: dict = {}        # (shapes, shared_mem, device id) -> Plan
_OPTED_IN: dict = {}     # (kernel handle, device id) -> (dynamic shared bytes allowed, non-portable set)


class Plan:
    """One distinct launch on one device: its cuda.core configuration, checked against the device,
    and the compiled kernels checked against it (their static shared memory, threads, constant
    multicast masks) with their opt-ins set."""

    __slots__ = ("config", "shapes", "shared_mem", "ready")

    def __init__(self, config, shapes, shared_mem):
        self.config, self.shapes, self.shared_mem, self.ready = config, shapes, shared_mem, set()


def plan(shapes, shared_mem, device) -> Plan:
    """The launch's :class:`Plan`, checked against the device once per distinct launch."""
    key = (shapes, shared_mem, device.id)
    found = _PLANS.get(key)
    if found is None:
        from cuda.core import LaunchConfig

        clusters, block, cluster, _ = shapes
        launch_limits.check_shapes(shapes, shared_mem, launch_limits.of_device(device))
        config = LaunchConfig(grid=clusters, cluster=cluster, block=block, shmem_size=shared_mem)
        found = _PLANS[key] = Plan(config, shapes, shared_mem)
    return found


def ready(plan, overload, cufunc, device) -> None:
    """Check a compiled kernel against a launch (once per kernel and launch): its static shared
    memory and the threads its registers allow against the device, its constant multicast masks
    against the cluster; then set the kernel's opt-ins."""
    from ..numba_cuda.launching import constant_multicast_masks, kernel_figures

    limits = launch_limits.of_device(device)
    static, most_threads = kernel_figures(cufunc)
    launch_limits.check_shapes(plan.shapes, plan.shared_mem, limits, static=static, kernel_threads=most_threads)
    launch_limits.check_multicast(constant_multicast_masks(overload), plan.shapes[2])
    default = limits.shared_default - static     # the dynamic shared memory a kernel takes without the opt-in
    if plan.shared_mem > default or plan.shapes[3] > PORTABLE_CLUSTER:
        _opt_in(cufunc, plan.shared_mem, default, plan.shapes[3], device.id)
    plan.ready.add(cufunc)


def _opt_in(cufunc, shared_mem, default, size, device_id):
    """Raise the kernel's dynamic shared-memory limit (``default`` bytes without the opt-in) to
    ``shared_mem`` and allow non-portable clusters, each when needed, once per kernel and device
    (the driver keeps both)."""
    from cuda.bindings import driver

    key = (int(cufunc.handle), device_id)
    allowed, non_portable = _OPTED_IN.get(key, (default, False))
    attrs = driver.CUfunction_attribute
    if shared_mem > allowed:
        _set_attribute(cufunc, attrs.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_mem, device_id)
        allowed = shared_mem
    if size > PORTABLE_CLUSTER and not non_portable:
        _set_attribute(cufunc, attrs.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1, device_id)
        non_portable = True
    _OPTED_IN[key] = allowed, non_portable


def _set_attribute(cufunc, attribute, value, device_id):
    from cuda.bindings import driver

    err, = driver.cuKernelSetAttribute(attribute, value, cufunc.handle, device_id)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise LaunchError(f"cuKernelSetAttribute({attribute.name}, {value}) failed: {err.name}")


def launch(kernel, shapes, shared_mem, stream, args) -> None:
    """Launch the numba-cuda ``kernel`` (checked, opted in) with its arguments prepared as numba's
    own launch does; once more with new by-value twins where cuda.core refuses ones kept from
    another device's launches."""
    try:
        _launch(kernel, shapes, shared_mem, stream, args)
    except RuntimeError as error:
        launched_again(error, lambda: _launch(kernel, shapes, shared_mem, stream, args))


def _launch(kernel, shapes, shared_mem, stream, args):
    core_launch, prepared_launch, loaded_device, core_stream = GPU or gpu()
    overload, cufunc, kernelargs, retr = prepared_launch(kernel, args, stream)
    device = loaded_device(cufunc)
    found = plan(shapes, shared_mem, device)
    if cufunc not in found.ready:
        ready(found, overload, cufunc, device)
    core_launch(core_stream(stream), found.config, cufunc.kernel, *kernelargs)
    for writeback in retr:
        writeback()


GPU = None       # what a launch on the GPU calls, imported at the first (not at numba_tma's import)


def gpu():
    """``(cuda.core's launch, prepared_launch, loaded_device, core_stream)``, imported once (tests
    put a stand-in GPU's in :data:`GPU`: ``tests/fake_gpu.py``)."""
    global GPU
    if GPU is None:
        from cuda.core import launch as core_launch

        from ..numba_cuda.launching import core_stream, loaded_device, prepared_launch

        GPU = core_launch, prepared_launch, loaded_device, core_stream
    return GPU


class Prepared:
    """One launch of a numba-cuda kernel prepared once — typed, compiled if new, checked and opted
    in, its arguments made kernel parameters — then launched again and again with the arguments
    at ``varying`` replaced (:func:`numba_tma.prepare_launch`): a ``TensorMap`` by another of its
    Numba type, an array by another of the same shape, strides and type (only its address is read).
    A launch then costs cuda.core's launch and no typing or preparation of the rest."""

    def __init__(self, kernel, shapes, shared_mem, stream, args, varying):
        from ..numba_cuda.kernel_arguments import BY_VALUE
        from ..numba_cuda.launching import array_data_parameter, is_array, prepared_pieces

        self._core_launch, prepared_launch, loaded_device, core_stream = GPU or gpu()
        overload, cufunc, _, _ = prepared_launch(kernel, args, stream)
        kernelargs, retr, starts = prepared_pieces(overload, args, stream)
        if retr:
            raise LaunchError("numba_tma.prepare_launch: an argument would be copied to the device and back by "
                              "numba's launch (a host array or record): pass device arrays")
        device = loaded_device(cufunc)
        found = plan(shapes, shared_mem, device)
        if cufunc not in found.ready:
            ready(found, overload, cufunc, device)
        self._params, self._config, self._kernel = kernelargs, found.config, cufunc.kernel
        self._stream = core_stream(stream)
        self._slots = []        # per varying argument: (parameter index, by-value maker or None for an address)
        for position in varying:
            maker = BY_VALUE.get(type(overload.argument_types[position]))
            if maker is not None:
                self._slots.append((starts[position], maker))
            elif not is_array(overload.argument_types[position]):
                raise LaunchError(f"numba_tma.prepare_launch: varying argument {position} must be a TensorMap or an "
                                  f"array; got {overload.argument_types[position]}")
            else:
                address = address_of(args[position])
                self._slots.append((array_data_parameter(overload, position, starts[position], kernelargs, address),
                                    None))

    def launch(self, *values) -> None:
        params = list(self._params)
        for (index, maker), value in zip(self._slots, values):
            params[index] = address_of(value) if maker is None else maker(value, index)
        self._core_launch(self._stream, self._config, self._kernel, *params)


def address_of(array) -> int:
    """The data address of a device array (PyTorch, CuPy, numba or any ``__cuda_array_interface__``)."""
    data_ptr = getattr(array, "data_ptr", None)
    if data_ptr is not None and callable(data_ptr):
        return data_ptr()
    return array.__cuda_array_interface__["data"][0] or 0
