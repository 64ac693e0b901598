"""Under the simulator (``NUMBA_ENABLE_CUDASIM=1``) a notebook can simulate and inspect in one
process: ``numba_tma.inspect`` and ``numba_tma.catalog`` import, the catalogue answers, every
twin's ``help()`` is its compiled op's docstring, and compiling says why it cannot run there."""

import json

from test_simulator import simulate

from numba_tma.intrinsics import _core
from numba_tma.simulator import FAMILIES


def _compiled_docs():
    """Each twin's name -> the docstring of the op it stands for, read here, off the simulator:
    the declaration's, or the public object's (the cluster helpers; tma's bulk-group aliases are
    the bulk ops)."""
    import numba_tma.intrinsics as intrinsics

    docs = {}
    for family, twins in FAMILIES.items():
        for name in vars(twins):
            if name.startswith("_"):
                continue
            op = _core.OPS.get(f"{family}.{name}") or _core.OPS.get(f"bulk.{name}" if family == "tma" else "")
            docs[f"{family}.{name}"] = op.docstring() if op else getattr(intrinsics, family).__dict__[name].__doc__
    return docs


def test_inspect_catalog_and_help_work_under_the_simulator():
    out = simulate("""
        import json, pydoc
        from numba_tma import catalog, inspect, simulator

        print("find", [op.name for op in catalog.find("cp.async.bulk.tensor")],
              [op.name for op in catalog.find("tlx.barrier_wait")])
        print("markdown", catalog.markdown().startswith("# Device ops"))
        print("help", "Copy one box of a tensor from global memory into shared memory with TMA"
              in pydoc.render_doc(tma.load))
        print("stubs left on numba.cuda", [n for n in ("shared", "local", "threadIdx") if hasattr(cuda, n)])
        docs = {f"{f}.{n}": fn.__doc__ for f, ns in simulator.FAMILIES.items() for n, fn in vars(ns).items()
                if not n.startswith("_")}
        print("docs", json.dumps(docs))

        @cuda.jit
        def k(out):
            out[0] = 1

        try:
            inspect.compile(k, "void(int32[::1])")
        except inspect.CompilerMissing as exc:
            print("compile:", exc)
        k[1, 1](np.zeros(1, np.int32))                     # and the simulator still runs kernels
        print("opcodes", sorted(inspect.sass_opcodes("        /*0010*/                   ELECT P0, URZ, PT ;")))
    """)
    assert "find ['tma.gather4', 'tma.load', 'tma.load_im2col', 'tma.scatter4', 'tma.store'] ['mbarrier.wait', 'ring.wait']" in out, out
    assert "markdown True" in out and "help True" in out and "stubs left on numba.cuda []" in out, out
    assert "compile: numba_tma.inspect.compile(k): NUMBA_ENABLE_CUDASIM=1 replaced numba-cuda's compiler" in out, out
    assert "opcodes ['ELECT']" in out, out
    docs = json.loads(out.split("docs ", 1)[1].splitlines()[0])
    want = _compiled_docs()
    assert sorted(docs) == sorted(want)
    wrong = sorted(name for name in want if docs[name] != want[name])
    assert not wrong, f"twins whose docstring is not their op's: {wrong}"
    assert docs["fence.sc"] != docs["fence.acq_rel"] and docs["bulk.wait_group"] != docs["bulk.commit_group"]


def test_the_stubs_lent_under_the_simulator_are_numba_cudas_own():
    """numba_sim.lent_device_stubs lends the simulator's numba.cuda the device stubs
    numba.cuda has off the simulator; this fails, naming the stub, when numba-cuda moves one."""
    import inspect

    import numba.cuda
    from numba.cuda import device_init, stubs
    from numba.cuda.core import config

    from numba_tma.simulator import numba_sim

    assert hasattr(config, "ENABLE_CUDASIM"), "numba-cuda's config no longer has ENABLE_CUDASIM"
    source = inspect.getsource(device_init)
    for name in numba_sim.DEVICE_STUBS:
        assert getattr(numba.cuda, name) is getattr(stubs, name), f"numba.cuda.{name} is no longer stubs.{name}"
        assert f"    {name},\n" in source.split("from .stubs import (", 1)[1].split(")", 1)[0], \
            f"numba.cuda's device_init no longer takes {name} from stubs"
