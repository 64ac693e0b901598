"""The README's light install (``pip install -e ".[cu13,test]"``) collects: pytest's collection run
with the packages of the extras it leaves out made unimportable, so a test module that imports one
at its top fails here instead of on a user's machine.  Run by ``.ci/run`` in the full install's
environment (a second install would double CI's time)."""

import importlib.abc
import pathlib
import sys

import pytest

LEFT_OUT = {"numba_cuda_mlir": "mlir", "triton": "amd-reference"}   # top-level package: its extra


class _LeftOut(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top in LEFT_OUT:
            raise ModuleNotFoundError(f"No module named '{top}' (the {LEFT_OUT[top]} extra is left out)", name=top)
        return None


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))   # this checkout's numba_tma
    sys.meta_path.insert(0, _LeftOut())
    sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:xdist", *sys.argv[1:]]))
