"""mbarrier: shared-memory barriers that also count bytes delivered by TMA and bulk copies.

**Barrier arguments.** In Numba ``bars[0]`` is a loaded *value*, not an address, so every barrier
argument in numba_tma is a ``uint64`` (or ``int64``) shared array and the op uses its **element 0**.
Allocate several barriers in one array and name barrier ``i`` with a slice::

    bars = cuda.shared.array(4, numba.uint64)
    mbarrier.init(bars, 1)          # barrier 0
    mbarrier.init(bars[2:], 1)      # barrier 2

The array must live in shared memory (``cuda.shared.array``); the op converts its address to the
32-bit shared window.
"""

from llvmlite import ir
from numba.cuda import types
from numba.cuda.datamodel import PrimitiveModel
from numba.cuda.extending import lower_cast
from numba.cuda.models import register_model

from ..errors import PHASE_NOT_TOKEN
from ..numba_cuda.internals import Conversion
from ._core import Refusal, Choice, Int, Optional, PtxOp, Qualifier, Requirement, Sample, SharedArray, exported, reject

SM80 = Requirement((8, 0), (7, 8))
_MBARRIER = "9.7.13.15"   # PTX ISA 9.1: mbarrier (the assembly rows' hand-written PTX)
_WAITS = f"{_MBARRIER}.16 mbarrier.test_wait / mbarrier.try_wait"


class StateToken(types.Type):
    """What ``arrive*`` return: the barrier's 64-bit state before the arrival, naming its phase for
    :func:`test_wait_token` / :func:`try_wait_token` / :func:`pending_count`.  Not a parity: the
    parity waits refuse it at compile time (``token & 1`` is not the phase).  It converts to a
    64-bit integer where one is asked for (``out[i] = token``)."""

    bitwidth = 64

    def __init__(self):
        super().__init__(name="mbarrier.StateToken")

    def unify(self, typingctx, other):
        """A variable holding a token on one path and a 64-bit integer on another is that integer."""
        if isinstance(other, types.Integer) and other.bitwidth == 64:
            return other
        return None

    def can_convert_to(self, typingctx, other):
        if isinstance(other, types.Integer) and other.bitwidth == 64:
            return Conversion.unsafe
        return None


TOKEN = StateToken()
register_model(StateToken)(lambda dmm, fe_type: PrimitiveModel(dmm, fe_type, ir.IntType(64)))


@lower_cast(StateToken, types.Integer)
def _token_to_int(context, builder, fromty, toty, value):
    return value


class Phase(Int):
    """A phase parity (bit 0 of a phase counter): any integer, but not a state token."""

    def check(self, op_name, ty):
        if isinstance(ty, StateToken):
            raise reject(op_name, self.name, PHASE_NOT_TOKEN, ty)
        super().check(op_name, ty)


class Token(Int):
    """A state token from ``arrive*`` (or a 64-bit integer holding one)."""

    def __init__(self, name="token"):
        super().__init__(name, bits=64)

    def check(self, op_name, ty):
        if not isinstance(ty, StateToken):
            super().check(op_name, ty)

    def lower(self, host, ty, val):
        return [(val, "l")] if isinstance(ty, StateToken) else super().lower(host, ty, val)


def _tx_bytes():
    """A transaction count: what one phase of an mbarrier counts (20 bits)."""
    return Int("nbytes", hi=(1 << 20) - 1, rule="must be 0 to 2**20 - 1 = 1048575 bytes (the most one mbarrier phase's "
               "transaction count holds)")


def barrier(name="bar"):
    """The operand every barrier argument uses (element 0 of a uint64 shared array)."""
    return SharedArray(name, dtypes=(types.uint64, types.int64), what="a uint64 shared array (the mbarrier)",
                       align=8, why="an mbarrier is 8 bytes, 8-aligned")


init = PtxOp(
    "mbarrier.init", "mbarrier.init.shared::cta.b64 [{bar}], {count};",
    (barrier(), Int("count", lo=1, hi=(1 << 20) - 1)), need=SM80,
    tlx=("tlx.alloc_barriers", "cute.arch.mbarrier_init", "cuda::ptx::mbarrier_init"),
    samples=(Sample("mbarrier.init(bar, 1)", {"sm_80": "STS.64", "": "SYNCS.EXCH.64"},
                    ptx="mbarrier.init.shared::cta.b64 [%r], %r;", isa=f"{_MBARRIER}.9 mbarrier.init"),),
    doc="""Initialise an mbarrier for ``count`` arrivals per phase (phase 0 starts).

    Call from one thread, then ``fence.mbarrier_init()`` and a ``cuda.syncthreads()`` before other
    threads (or the TMA unit) use the barrier.

    Example::

        bars = cuda.shared.array(1, numba.uint64)
        if cuda.threadIdx.x == 0:
            mbarrier.init(bars, 1)
            fence.mbarrier_init()
        cuda.syncthreads()
    """,
    refusals=(Refusal('mbarrier.init(bar, 0)',
                      "mbarrier.init: argument 'count' must be in [1, 1048575]"),
              Refusal('mbarrier.init(smem, 1)',
                      "mbarrier.init: argument 'bar' must be"),),
).intrinsic()

SM90 = Requirement((9, 0), (8, 0))
RELAXED = Requirement((9, 0), (8, 6))
# Spelled only when asked for: the bare forms are the PTX defaults (release / acquire, cta scope).
# PTX takes a scope only with an order, so asking for either spells both ({order} below).
ARRIVE_SEM = Qualifier("sem", {None: "", "release": Choice("", SM90), "relaxed": Choice("", RELAXED)}, None)
WAIT_SEM = Qualifier("sem", {None: "", "acquire": Choice("", SM90), "relaxed": Choice("", RELAXED)}, None)
SCOPE = Qualifier("scope", {None: "", "cta": Choice("", SM90), "cluster": Choice("", SM90)}, None)


def _order(default_sem):
    """Template key ``{order}``: ``.sem.scope`` when either was given, else nothing."""
    def spell(sem, scope, **_):
        return {"order": "" if sem is None and scope is None else f".{sem or default_sem}.{scope or 'cta'}"}
    return spell
_ORDERING = """
    ``sem`` / ``scope``: the memory ordering of the arrival (``"release"``, the default, or
    ``"relaxed"``, PTX ISA 8.6) at ``"cta"`` (default) or ``"cluster"`` scope; left out, the PTX
    says neither.
"""


def _count():
    """``count=1``: arrivals at once; given, the count form (sm_90)."""
    return Optional(Int("count", lo=1, hi=(1 << 20) - 1), 1, need=SM90)


_NO_COMPLETE = Qualifier("no_complete", {False: "", True: ".noComplete"}, False)


def _check_no_complete(op):
    def check(count, no_complete, sem, scope, **_):
        if not no_complete:
            return
        if isinstance(count, types.Omitted):
            raise reject(op, "count", "must be given with no_complete=True (the PTX form takes a count)", count)
        if sem == "relaxed" or scope == "cluster":
            raise reject(op, "no_complete", "cannot be combined with sem='relaxed' or scope='cluster' (PTX ISA)", True)
    return check


arrive = PtxOp(
    "mbarrier.arrive", "mbarrier.arrive{no_complete}{order}.shared::cta.b64 {out}, [{bar}]{count};",
    (barrier(), _count()), qualifiers=(ARRIVE_SEM, SCOPE, _NO_COMPLETE), spell=_order("release"), need=SM80,
    returns=TOKEN, check=_check_no_complete("mbarrier.arrive"),
    tlx=("tlx.barrier_arrive", "cute.arch.mbarrier_arrive", "cuda::ptx::mbarrier_arrive"),
    samples=(Sample("mbarrier.arrive(bar)", {"sm_80": "ATOMS.ARRIVE.64", "": "SYNCS.ARRIVE.TRANS64.A1T0"},
                    only={"no_complete": False}, ptx="mbarrier.arrive.shared::cta.b64 %rd, [%r];",
                    isa=f"{_MBARRIER}.13 mbarrier.arrive"),
             Sample("out[0] = mbarrier.arrive(bar, count=3)", "SYNCS.ARRIVE.TRANS64",
                    only={"no_complete": (False, True), "sem": (None, "release"), "scope": (None, "cta")},
                    ptx="mbarrier.arrive.shared::cta.b64 %rd, [%r], %r;", isa=f"{_MBARRIER}.13 mbarrier.arrive")),
    doc="""Arrive on the barrier (``count`` arrivals toward :func:`init`'s count, default 1) and
    return the barrier's state token before the arrival (a :class:`StateToken`, for :func:`test_wait_token`,
    :func:`try_wait_token` and :func:`pending_count`; ignore it if not needed).  ``no_complete=True``
    (with ``count``) promises the arrival does not complete the phase — the PTX ISA defines
    :func:`pending_count` only for the tokens of such arrivals.
    """ + _ORDERING + """
    Example::

        mbarrier.arrive(bars)
        token = mbarrier.arrive(bars, count=2, sem="relaxed", scope="cluster")
    """,
    refusals=(Refusal("mbarrier.arrive(bar, sem='acquire')",
                      "mbarrier.arrive: argument 'sem' must be a constant, one of None, 'release', 'relaxed'"),
              Refusal("mbarrier.arrive(bar, scope='gpu')",
                      "mbarrier.arrive: argument 'scope' must be a constant, one of None, 'cta', 'cluster'"),),
).intrinsic()

arrive_expect_tx = PtxOp(
    "mbarrier.arrive_expect_tx", "mbarrier.arrive.expect_tx{order}.shared::cta.b64 {out}, [{bar}], {nbytes};",
    (barrier(), _tx_bytes()), qualifiers=(ARRIVE_SEM, SCOPE), spell=_order("release"), returns=TOKEN,
    tlx=("tlx.barrier_expect_bytes", "cute.arch.mbarrier_arrive_and_expect_tx", "cuda::ptx::mbarrier_arrive_expect_tx"),
    samples=(Sample("mbarrier.arrive_expect_tx(bar, 4096)", "SYNCS.ARRIVE.TRANS64",
                    ptx="mbarrier.arrive.expect_tx.shared::cta.b64 %rd, [%r], %r;",
                    isa=f"{_MBARRIER}.13 mbarrier.arrive"),),
    doc="""Arrive once and tell the barrier to also wait for ``nbytes`` of async copies; returns the
    state token.  The phase completes when all arrivals happened *and* TMA/bulk copies signalling
    this barrier delivered ``nbytes`` bytes (for a full TMA tile: ``desc.box_bytes``).
    """ + _ORDERING + """
    Example::

        if cuda.threadIdx.x == 0:
            mbarrier.arrive_expect_tx(bars, desc.box_bytes)
            tma.load(desc, tile, (x, y), bars)
    """,
    refusals=(Refusal('mbarrier.arrive_expect_tx(bar, -1)',
                      "mbarrier.arrive_expect_tx: argument 'nbytes' must be 0 to 2**20 - 1"),),
).intrinsic()

_TX_SCOPE = Qualifier("scope", {"cta": ".cta", "cluster": ".cluster"}, "cta")

expect_tx = PtxOp(
    "mbarrier.expect_tx", "mbarrier.expect_tx.relaxed{scope}.shared::cta.b64 [{bar}], {nbytes};",
    (barrier(), _tx_bytes()), qualifiers=(_TX_SCOPE,),
    tlx=("cute.arch.mbarrier_expect_tx", "cuda::ptx::mbarrier_expect_tx"),
    samples=(Sample("mbarrier.expect_tx(bar, 4096)", "SYNCS.ARRIVE.TRANS64",
                    ptx="mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r], %r;",
                    isa=f"{_MBARRIER}.11 mbarrier.expect_tx"),),
    doc="""Raise the bytes the current phase waits for by ``nbytes``, without arriving (for producers
    whose arrival is counted elsewhere).  ``scope``: ``"cta"`` or ``"cluster"``.

    Example::

        mbarrier.expect_tx(bars, desc.box_bytes)
        tma.load(desc, tile, (x, y), bars)
    """,
    refusals=(Refusal('mbarrier.expect_tx(smem, 4096)',
                      "mbarrier.expect_tx: argument 'bar' must be"),),
).intrinsic()

complete_tx = PtxOp(
    "mbarrier.complete_tx", "mbarrier.complete_tx.relaxed{scope}.shared::cta.b64 [{bar}], {nbytes};",
    (barrier(), _tx_bytes()), qualifiers=(_TX_SCOPE,),
    tlx=("cuda::ptx::mbarrier_complete_tx",),
    samples=(Sample("mbarrier.complete_tx(bar, 4096)", "SYNCS.ARRIVE.TRANS64",
                    ptx="mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r], %r;",
                    isa=f"{_MBARRIER}.12 mbarrier.complete_tx"),),
    doc="""Count ``nbytes`` as delivered on the barrier, as an async copy would (without one): the
    split form of a transaction, for producers that write shared memory themselves.

    Example::

        mbarrier.expect_tx(bars, 256)
        ...                                  # 256 bytes written by this thread
        mbarrier.complete_tx(bars, 256)
    """,
    refusals=(Refusal("mbarrier.complete_tx(bar, 4096, scope='gpu')",
                      "mbarrier.complete_tx: argument 'scope' must be a constant, one of 'cta', 'cluster'"),),
).intrinsic()

arrive_drop = PtxOp(
    "mbarrier.arrive_drop", "mbarrier.arrive_drop{order}.shared::cta.b64 {out}, [{bar}]{count};",
    (barrier(), _count()), qualifiers=(ARRIVE_SEM, SCOPE), spell=_order("release"), need=SM80, returns=TOKEN,
    tlx=("cuda::ptx::mbarrier_arrive_drop",),
    samples=(Sample("mbarrier.arrive_drop(bar)", {"sm_80": "ATOMS", "": "SYNCS.ARRIVE.TRANS64.OPTOUT.A1T0"},
                    ptx="mbarrier.arrive_drop.shared::cta.b64 %rd, [%r];", isa=f"{_MBARRIER}.14 mbarrier.arrive_drop"),),
    doc="""Arrive and also lower the count every later phase expects by ``count`` (a thread that
    leaves the pipeline); returns the state token.
    """ + _ORDERING + """
    Example::

        mbarrier.arrive_drop(bars)          # this warp is done with the ring
    """,
    refusals=(Refusal('mbarrier.arrive_drop(bar, count=0)',
                      "mbarrier.arrive_drop: argument 'count' must be in [1, "),),
).intrinsic()

arrive_drop_expect_tx = PtxOp(
    "mbarrier.arrive_drop_expect_tx",
    "mbarrier.arrive_drop.expect_tx{order}.shared::cta.b64 {out}, [{bar}], {nbytes};",
    (barrier(), _tx_bytes()), qualifiers=(ARRIVE_SEM, SCOPE), spell=_order("release"), returns=TOKEN,
    tlx=("cuda::ptx::mbarrier_arrive_drop_expect_tx",),
    samples=(Sample("mbarrier.arrive_drop_expect_tx(bar, 1024)", "SYNCS.ARRIVE.TRANS64.OPTOUT",
                    ptx="mbarrier.arrive_drop.expect_tx.shared::cta.b64 %rd, [%r], %r;",
                    isa=f"{_MBARRIER}.14 mbarrier.arrive_drop"),),
    doc=""":func:`arrive_drop` that also expects ``nbytes`` of async copies; returns the state token.

    Example::

        mbarrier.arrive_drop_expect_tx(bars, desc.box_bytes)
    """,
    refusals=(Refusal('mbarrier.arrive_drop_expect_tx(bar, 1 << 20)',
                      "mbarrier.arrive_drop_expect_tx: argument 'nbytes' must be 0 to 2**20 - 1"),),
).intrinsic()

arrive_remote = PtxOp(
    "mbarrier.arrive_remote",
    "{{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, {bar}, {cta_rank};\n"
    " mbarrier.arrive.{sem}.cluster.shared::cluster.b64 _, [remote]{count};\n}}",
    (barrier(), Int("cta_rank", hi=15), _count()),
    qualifiers=(Qualifier("sem", {"release": "release", "relaxed": Choice("relaxed", RELAXED)}, "release"),),
    tlx=("tlx.barrier_arrive(remote_cta_rank=)", "cute.arch.mbarrier_arrive (cta_id)",
         "cuda::ptx::mbarrier_arrive (shared::cluster)"),
    samples=(Sample("mbarrier.arrive_remote(bar, 1)", "SYNCS.ARRIVE.TRANS64.RED",
                    ptx=("mapa.shared::cluster.u32 remote, %r, %r;",
                         "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];"),
                    isa=f"9.7.9.23 mapa; {_MBARRIER}.13 mbarrier.arrive"),),
    doc="""Arrive on the barrier at ``bar``'s offset in block ``cta_rank`` of this cluster (``mapa``,
    then a cluster-scope arrival); no state token comes back.  The remote barrier must be
    initialised first (``fence.mbarrier_init()`` and a ``cluster.sync()`` after ``init``).

    Example::

        mbarrier.arrive_remote(empty, producer_rank)      # tell the producer CTA the slot is free
    """,
    refusals=(Refusal('mbarrier.arrive_remote(bar, 16)',
                      "mbarrier.arrive_remote: argument 'cta_rank' must be in [0, 15]"),),
).intrinsic()

inval = PtxOp(
    "mbarrier.inval", "mbarrier.inval.shared::cta.b64 [{bar}];", (barrier(),), need=SM80,
    tlx=("cute.arch.mbarrier_inval", "cuda::ptx::mbarrier_inval"),
    # sm_80 emits no instruction of its own for it: the SASS is a kernel's without it
    samples=(Sample("mbarrier.inval(bar)", {"sm_80": "", "": "SYNCS.CCTL.IV"},
                    ptx="mbarrier.inval.shared::cta.b64 [%r];", isa=f"{_MBARRIER}.10 mbarrier.inval"),),
    doc="""Invalidate a barrier so its shared memory can be used for something else (or the barrier
    initialised again).

    Example::

        mbarrier.inval(bars)
        mbarrier.init(bars, 2)
    """,
    refusals=(Refusal('mbarrier.inval(bar, 1)',
                      'numba_tma: mbarrier.inval takes (bar): too many positional arguments'),),
).intrinsic()

pending_count = PtxOp(
    "mbarrier.pending_count", "mbarrier.pending_count.b64 {out}, {token};", (Token(),),
    need=Requirement((8, 0), (7, 0)), returns=types.uint32, memory=False,
    tlx=("cuda::ptx::mbarrier_pending_count",),
    samples=(Sample("out[0] = mbarrier.pending_count(mbarrier.arrive(bar))", "LOP3.LUT",   # bit arithmetic
                    ptx="mbarrier.pending_count.b64 %r, %rd;", isa=f"{_MBARRIER}.17 mbarrier.pending_count"),),
    doc="""The arrivals the barrier still expected when the state token was taken (before that
    arrival).  The PTX ISA defines it only for tokens of ``arrive(..., no_complete=True)``.

    Example::

        token = mbarrier.arrive(bars, count=1, no_complete=True)
        left = mbarrier.pending_count(token)
    """,
    refusals=(Refusal('out[0] = mbarrier.pending_count(1.5)',
                      "mbarrier.pending_count: argument 'token'"),),
).intrinsic()


def _probe(kind, form, operand):
    """A wait check returning 0/1: ``form`` is ``.parity`` (a phase parity) or ``""`` (a token)."""
    return ("{{\n .reg .pred p;\n mbarrier." + kind + form + "{order}.shared::cta.b64 p, [{bar}], {" + operand
            + "}" + ("{suspend_ns}" if kind == "try_wait" else "") + ";\n selp.u32 {out}, 1, 0, p;\n}}")


_WAIT_ORDERING = """
    ``sem`` / ``scope``: the ordering of the wait (``"acquire"``, the default, or ``"relaxed"``, PTX
    ISA 8.6) at ``"cta"`` (default) or ``"cluster"`` scope; left out, the PTX says neither.
"""


def _suspend():
    """``suspend_ns``: how long the hardware may suspend the thread before the wait returns false."""
    return Optional(Int("suspend_ns"), None)


test_wait = PtxOp(
    "mbarrier.test_wait", _probe("test_wait", ".parity", "phase"), (barrier(), Phase("phase")),
    qualifiers=(WAIT_SEM, SCOPE), spell=_order("acquire"), need=SM80, returns=types.boolean,
    tlx=("cuda::ptx::mbarrier_test_wait_parity",),
    samples=(Sample("out[0] = mbarrier.test_wait(bar, 1)", {"sm_80": "LDS", "": "SYNCS.PHASECHK.TRANS64"},
                    ptx=("mbarrier.test_wait.parity.shared::cta.b64 p, [%r], %r;", "selp.u32 %r, 1, 0, p;"),
                    isa=f"{_WAITS}; 9.7.6.3 selp"),),
    doc="""Non-blocking check: has the phase with parity ``phase & 1`` completed?

    Use it to probe a barrier's state at one instant (``try_wait`` may wait a while first).
    """ + _WAIT_ORDERING + """
    Example::

        done = mbarrier.test_wait(bars, 0)
    """,
    refusals=(Refusal('mbarrier.init(bar, 1)\nout[0] = mbarrier.test_wait(bar, mbarrier.arrive(bar))',
                      "mbarrier.test_wait: argument 'phase' must be a phase parity"),),
).intrinsic()

test_wait_token = PtxOp(
    "mbarrier.test_wait_token", _probe("test_wait", "", "token"), (barrier(), Token()),
    qualifiers=(WAIT_SEM, SCOPE), spell=_order("acquire"), need=SM80, returns=types.boolean,
    tlx=("cuda::ptx::mbarrier_test_wait",),
    samples=(Sample("out[0] = mbarrier.test_wait_token(bar, out[1])", {"sm_80": "LDS", "": "SYNCS.PHASECHK.TRANS64"},
                    ptx=("mbarrier.test_wait.shared::cta.b64 p, [%r], %rd;", "selp.u32 %r, 1, 0, p;"),
                    isa=f"{_WAITS}; 9.7.6.3 selp"),),
    doc="""Non-blocking check: has the phase the state ``token`` (from :func:`arrive`) was taken in
    completed?
    """ + _WAIT_ORDERING + """
    Example::

        token = mbarrier.arrive(bars)
        done = mbarrier.test_wait_token(bars, token)
    """,
    refusals=(Refusal("mbarrier.init(bar, 1)\nout[0] = mbarrier.test_wait_token(bar, mbarrier.arrive(bar), sem='release')",
                      "mbarrier.test_wait_token: argument 'sem' must be a constant, one of None, 'acquire', 'relaxed'"),),
).intrinsic()

try_wait = PtxOp(
    "mbarrier.try_wait", _probe("try_wait", ".parity", "phase"), (barrier(), Phase("phase"), _suspend()),
    qualifiers=(WAIT_SEM, SCOPE), spell=_order("acquire"), returns=types.boolean,
    tlx=("cute.arch.mbarrier_try_wait", "cuda::ptx::mbarrier_try_wait_parity"),
    samples=(Sample("out[0] = mbarrier.try_wait(bar, 0)", "SYNCS.PHASECHK.TRANS64.TRYWAIT",
                    ptx=("mbarrier.try_wait.parity.shared::cta.b64 p, [%r], %r;", "selp.u32 %r, 1, 0, p;"),
                    isa=f"{_WAITS}; 9.7.6.3 selp"),
             Sample("out[0] = mbarrier.try_wait(bar, 0, suspend_ns=1000)", "SYNCS.PHASECHK.TRANS64.TRYWAIT",
                    ptx=("mbarrier.try_wait.parity.shared::cta.b64 p, [%r], %r, %r;", "selp.u32 %r, 1, 0, p;"),
                    isa=f"{_WAITS}; 9.7.6.3 selp")),
    doc="""Wait a bounded, hardware-chosen time (or up to ``suspend_ns``, a hint) for the phase with
    parity ``phase & 1``.

    Returns ``True`` if the phase completed within that time.  The wait is *potentially
    blocking*: on the H200 the thread may run on and the result may reflect a completion that
    happens later within the time limit (measured: a ``try_wait`` issued before a ``syncthreads``
    whose result was used after the barrier completed returned ``True``).  Use it in a retry loop;
    use :func:`test_wait` for an instantaneous probe.
    """ + _WAIT_ORDERING + """
    Example::

        while not mbarrier.try_wait(bars, phase):
            pass
    """,
    refusals=(Refusal("out[0] = mbarrier.try_wait(bar, 0, scope='gpu')",
                      "mbarrier.try_wait: argument 'scope' must be a constant, one of None, 'cta', 'cluster'"),),
).intrinsic()

try_wait_token = PtxOp(
    "mbarrier.try_wait_token", _probe("try_wait", "", "token"), (barrier(), Token(), _suspend()),
    qualifiers=(WAIT_SEM, SCOPE), spell=_order("acquire"), returns=types.boolean,
    tlx=("cute.arch.mbarrier_try_wait (token)", "cuda::ptx::mbarrier_try_wait"),
    samples=(Sample("out[0] = mbarrier.try_wait_token(bar, out[1])", "SYNCS.PHASECHK.TRANS64.TRYWAIT",
                    ptx=("mbarrier.try_wait.shared::cta.b64 p, [%r], %rd;", "selp.u32 %r, 1, 0, p;"),
                    isa=f"{_WAITS}; 9.7.6.3 selp"),),
    doc=""":func:`try_wait` on the phase a state ``token`` (from :func:`arrive`) was taken in.
    """ + _WAIT_ORDERING + """
    Example::

        token = mbarrier.arrive(bars)
        while not mbarrier.try_wait_token(bars, token):
            pass
    """,
    refusals=(Refusal('out[0] = mbarrier.try_wait_token(bar)',
                      "numba_tma: mbarrier.try_wait_token takes (bar, token, suspend_ns, sem, scope): missing a required argument: 'token'"),),
).intrinsic()

wait = PtxOp(
    "mbarrier.wait",
    "{{\n .reg .pred p;\n numba_tma_wait_{uid}:\n mbarrier.try_wait.parity{order}.shared::cta.b64 p, [{bar}], {phase};\n"
    " @!p bra numba_tma_wait_{uid};\n}}",
    (barrier(), Phase("phase")), qualifiers=(WAIT_SEM, SCOPE), spell=_order("acquire"),
    debug_wait="{{\n .reg .pred p;\n .reg .u64 t0, t;\n mov.u64 t0, %globaltimer;\n numba_tma_wait_{uid}:\n"
               " mbarrier.try_wait.parity{order}.shared::cta.b64 p, [{bar}], {phase};\n @p bra numba_tma_waited_{uid};\n"
               " mov.u64 t, %globaltimer;\n sub.u64 t, t, t0;\n setp.lt.u64 p, t, {timeout};\n"
               " @p bra numba_tma_wait_{uid};\n numba_tma_waited_{uid}:\n selp.u32 {out}, 0, 1, p;\n}}",
    tlx=("tlx.barrier_wait", "cute.arch.mbarrier_wait"),
    samples=(Sample("mbarrier.wait(bar, out[0])", "SYNCS.PHASECHK.TRANS64.TRYWAIT",
                    ptx=("numba_tma_wait_%n:", "mbarrier.try_wait.parity.shared::cta.b64 p, [%r], %r;",
                         "@!p bra numba_tma_wait_%n;"),
                    isa=f"{_WAITS}; 9.7.12.3 bra"),),
    doc="""Block until the phase with parity ``phase & 1`` of the barrier completes (a ``try_wait``
    loop).  Flip ``phase`` (``phase ^= 1``) each time the barrier is reused.
    """ + _WAIT_ORDERING + """
    Example::

        mbarrier.wait(bars, 0)
    """,
    refusals=(Refusal('mbarrier.init(bar, 1)\nmbarrier.wait(bar, mbarrier.arrive(bar))',
                      "mbarrier.wait: argument 'phase' must be a phase parity"),),
).intrinsic()

__all__ = exported("mbarrier")
