"""How :mod:`numba_tma.gemm` picks a kernel configuration for a shape (``choose``), and the
:class:`Config` a caller may give instead (``config=``).

The rule, from the measurements in BENCHMARKS.md (H100 and H200):

* output tiles of 128 x 256 (16-bit inputs) or 128 x 192 (fp8): the 128 x 128 tiles ran at a
  third of their rate an SM on a decode shape (256 x 8192 x 8192: 128 narrow tiles on 128 SMs,
  306 TFLOP/s; 64 wide ones on 64 SMs, 435), so they are chosen only when given;
* split-K where the units of work leave half the blocks idle, up to MAX_SPLIT_K splits of at
  least MIN_SPLIT_STEPS K steps: each split's float32 partial goes into a workspace that each
  tile's last split sums in a fixed order before the epilogue, in the same launch (:mod:`.split_k`);
* clusters of 2 blocks sharing their B tile by TMA multicast (B crosses from L2 once per pair:
  +10 % at 8192^3, PAIR_SPEED) when there are two or more tile rows and pairs take no more waves
  than lone tiles (4097 x 4096: 528 tiles fill 4 waves of 132, 272 pairs 5 of 66);
* the ring as deep as shared memory allows beside the output's staging boxes; bf16 tiles of 256
  with at most SHORT_K K steps take 3 stages (the whole output tile staged at once), longer K 4.
"""

import dataclasses

from .kernels import BM, TILE_N, TYPES, fits

MAX_SPLIT_K = 8
MIN_SPLIT_STEPS = 2
SHORT_K = 64
MAX_STAGES = 8
PAIR_SPEED = 0.93           # a pair's time per tile beside a lone block's (B from L2 once per pair)


@dataclasses.dataclass(frozen=True)
class Config:
    """A kernel configuration (``config=`` of :func:`numba_tma.gemm.matmul`; None fields: chosen).

    ``tile_n``: output tile columns (16-bit inputs 256 or 128, fp8 192 or 128; rows are 128);
    ``stages``: the TMA ring's depth; ``cluster``: 1, or 2 for clusters of 2 blocks sharing B by
    multicast; ``split_k``: K split that many ways (float32 partials, summed in a fixed order by
    each tile's last split); ``blocks``: the persistent blocks (default: one per SM)."""
    tile_n: int = None
    stages: int = None
    cluster: int = None
    split_k: int = None
    blocks: int = None

    def fields(self):
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def counted(n, noun):
    """``n`` and ``noun``, plural unless one (explain's words)."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def tiles(m, n, tile_n):
    return -(-m // BM) * -(-n // tile_n)


def stages_for(dtype, tile_n, k_steps):
    if TYPES[dtype][0] == 2 and tile_n == 256:
        return 3 if k_steps <= SHORT_K else 4
    return max(s for s in range(2, MAX_STAGES + 1) if fits(dtype, tile_n, s))


def _option(rows, cols, k_steps, blocks, cluster, split_k):
    """(split-K, waves, a relative time) of tiles in clusters of ``cluster`` (1 or 2 tile rows a
    unit) on ``blocks`` blocks; ``split_k`` None: chosen (a split where the units leave half the
    blocks idle)."""
    units = -(-rows // cluster) * cols
    if split_k is None:
        split_k = 1
        if 2 * units * cluster <= blocks:
            split_k = max(1, min(blocks // (units * cluster), MAX_SPLIT_K, k_steps // MIN_SPLIT_STEPS))
    waves = -(-units * split_k // max(1, blocks // cluster))
    return split_k, waves, waves * -(-k_steps // split_k) * (PAIR_SPEED if cluster == 2 else 1.0)


def choose(dtype, m, n, k, sms, *, given=Config()):
    """(the :class:`Config` with every field set, the reasons in words) for an M x N x K product of
    ``dtype`` inputs on ``sms`` SMs; ``given`` fields win (checked by the caller)."""
    wide, _ = TILE_N[TYPES[dtype][0]]
    bk = 128 // TYPES[dtype][0]
    k_steps = -(-k // bk)
    why = []
    blocks = given.blocks or sms
    tile_n = given.tile_n or wide
    rows, cols = -(-m // BM), -(-n // tile_n)
    if given.tile_n is None:
        why.append(f"tile 128x{wide}: {counted(rows * cols, 'tile')} for {counted(blocks, 'block')}")
    clusters = [given.cluster] if given.cluster else [1, 2] if rows >= 2 else [1]
    options = {c: _option(rows, cols, k_steps, blocks, c, given.split_k) for c in clusters}
    cluster = min(clusters, key=lambda c: (options[c][2], -c))
    split_k, waves, _ = options[cluster]
    if given.cluster is None and cluster == 2:
        why.append(f"clusters of 2 sharing B by multicast: two or more tile rows, {waves} wave(s) as without")
    elif given.cluster is None and 2 in options:
        why.append(f"no clusters: {options[1][1]} wave(s), {options[2][1]} in pairs")
    if given.split_k is None and split_k > 1:
        why.append(f"split-K {split_k}: {-(-rows // cluster) * cols} {'pairs of tiles' if cluster == 2 else 'tiles'}"
                   f" for {blocks} blocks")
    stages = given.stages or stages_for(dtype, tile_n, -(-k_steps // split_k))   # (a unit's K steps)
    if given.stages is None:
        why.append(f"{stages} stages")
    return Config(tile_n, stages, cluster, split_k, blocks), why


def check(dtype, config):
    """``config``'s set fields checked against what the kernels offer (``ValueError`` naming the field)."""
    if not isinstance(config, Config):
        raise TypeError(f"matmul: argument 'config' must be a numba_tma.gemm.Config, 'autotune' or None; "
                        f"got {config!r}")
    widths = TILE_N[TYPES[dtype][0]]
    for name, value in config.fields().items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"matmul: config.{name} must be an int; got {value!r}")
    if config.tile_n is not None and config.tile_n not in widths:
        raise ValueError(f"matmul: config.tile_n={config.tile_n}: {dtype} kernels have tiles of "
                         f"{' or '.join(map(str, widths))} columns")
    if config.cluster not in (None, 1, 2):
        raise ValueError(f"matmul: config.cluster={config.cluster}: 1 or 2 (clusters of 2 sharing B)")
    if config.split_k is not None and not 1 <= config.split_k <= MAX_SPLIT_K:
        raise ValueError(f"matmul: config.split_k={config.split_k}: from 1 to {MAX_SPLIT_K} (each split's float32 "
                         "partial takes M x N x 4 bytes of workspace)")
    if config.blocks is not None and config.blocks < 1:
        raise ValueError(f"matmul: config.blocks={config.blocks}: at least 1")
    if config.stages is not None:
        tile_n = config.tile_n or widths[0]
        if config.stages < 2 or not fits(dtype, tile_n, config.stages):
            most = max(s for s in range(2, MAX_STAGES + 1) if fits(dtype, tile_n, s))
            raise ValueError(f"matmul: config.stages={config.stages}: from 2 to {most} for tiles of 128x{tile_n} "
                             f"({dtype}: the ring and the output's staging share 227 KiB)")
