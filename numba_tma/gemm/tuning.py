"""``config="autotune"``: the candidate configurations of a call timed once per device, input type,
B's layout, output path and shape class, the fastest kept in a JSON file
(``$NUMBA_TMA_CACHE_DIR`` or ``~/.cache/numba_tma``, ``gemm_autotune.json``) and reused.

A shape class rounds M, N and K up to powers of two: one timing serves the shapes near it.
:func:`numba_tma.gemm.autotune` times the candidates of a call explicitly and returns the winner.
"""

import json
import os
import pathlib

from . import config as configs
from .kernels import TILE_N, TYPES

FILE = "gemm_autotune.json"
_MEMORY = {}


def cache_path():
    root = os.environ.get("NUMBA_TMA_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "numba_tma")
    return pathlib.Path(root) / FILE


def shape_class(m, n, k):
    return tuple(1 << max(0, (v - 1).bit_length()) for v in (m, n, k))


def key(device, dtype, m, n, k, b_how, out_dtype, tma_out, no_epilogue):
    return "|".join(map(str, (device, dtype, *shape_class(m, n, k), b_how, out_dtype, tma_out, no_epilogue)))


def candidates(dtype, m, n, k):
    """Every configuration worth timing for the shape: each tile width, with and without clusters
    of 2, and split-K 2 and 4 where the output tiles leave SMs idle."""
    out = []
    for tile_n in TILE_N[TYPES[dtype][0]]:
        for cluster in (1, 2):
            if cluster == 2 and -(-m // 128) < 2:
                continue
            out.append(configs.Config(tile_n=tile_n, cluster=cluster, split_k=1))
        out += [configs.Config(tile_n=tile_n, cluster=1, split_k=s) for s in (2, 4)
                if s * 2 <= -(-k // (128 // TYPES[dtype][0]))]
    return out


def _load():
    path = cache_path()
    if not _MEMORY and path.exists():
        try:
            _MEMORY.update(json.loads(path.read_text()))
        except (OSError, ValueError):       # a damaged cache is timed again
            pass
    return _MEMORY


def remember(entry, config):
    memory = _load()
    memory[entry] = config.fields()
    path = cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(memory, indent=1, sort_keys=True))


def recall(entry):
    fields = _load().get(entry)
    return None if fields is None else configs.Config(**fields)


def fastest(facts, plan_with, seconds):
    """The fastest candidate of a call (``facts``: its ``Plan.facts``; ``plan_with(config)`` its
    plan under a configuration; ``seconds(fn)`` times a launch), remembered for its shape class."""
    times = {}
    for candidate in candidates(facts["dtype"], facts["m"], facts["n"], facts["k"]):
        times[candidate] = seconds(plan_with(candidate).launch)
    best = min(times, key=times.get)
    remember(key(**facts["key"]), best)
    return best


def tuned(entry, run_autotune):
    """The remembered configuration of ``entry``, else ``run_autotune()``'s (which remembers it)."""
    found = recall(entry)
    return found if found is not None else run_autotune()
