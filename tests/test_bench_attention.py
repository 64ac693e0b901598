"""benchmarks/bench_attention.py without a GPU: it imports (numba_tma.attention with it), its rows
are the issue's shapes each causal and not, and its reference call is SDPA with the same mask."""

import importlib.util
import inspect
import os

import gpu_run_stub

PATH = os.path.join(os.path.dirname(__file__), "..", "benchmarks", "bench_attention.py")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_attention_under_test", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_rows_and_the_causal_flag_reach_both_implementations():
    bench = _bench()
    assert bench.SHAPES == [(4, 16, 16, 4096, 128), (4, 16, 16, 4096, 64), (16, 16, 16, 1024, 128),
                            (1, 16, 16, 16384, 128), (4, 32, 8, 4096, 128),      # the rows and GQA
                            (4, 16, 16, 4096, 256)]                              # d 256: whether it pays
    source = inspect.getsource(bench.case)
    assert "is_causal=causal, **gqa" in source and "causal=causal, out=out" in source   # SDPA and ours alike
    assert 'layout="bhsd", blocks=sms' in source                                      # and the persistent launch
    assert "for causal in (False, True)" in inspect.getsource(bench.main)


def test_the_varlen_row_passes_the_sequence_ends_to_ours_and_checks_against_sdpa_per_sequence():
    bench = _bench()
    assert len(bench.VARLEN) == 8 and len(set(bench.VARLEN)) == 8          # eight unequal lengths
    source = inspect.getsource(bench.varlen_case)
    assert "cu_seqlens_q=cu, cu_seqlens_k=cu" in source and "flash_attn_varlen_func" in source
    assert source.count("is_causal=causal") == 2                          # the SDPA loop and the float32 check
    assert "varlen_case(torch, causal)" in inspect.getsource(bench.main)


def test_the_attention_part_of_gpu_run_runs_the_files_then_the_bench(tmp_path):
    """``benchmarks/gpu_run.sh attention`` with a stand-in ``python3`` printing its arguments: each
    attention, register-A wgmma and named-barrier test file runs, then bench_attention.py, each
    noted in the summary."""
    done, summary = gpu_run_stub.run_part(tmp_path, "attention")
    assert done.returncode == 0, done.stderr
    for f in ("tests/attention/test_forward.py: rc=0 1 passed", "tests/test_wgmma_rs.py: rc=0",
              "tests/test_gpu_sync_tensormap.py: rc=0", "benchmarks/bench_attention.py: rc=0", "# part attention done"):
        assert f in summary, summary
    assert summary.index("tests/test_wgmma_rs.py") < summary.index("benchmarks/bench_attention.py")


def test_the_128_key_comparison_swaps_the_rule_for_its_call_only():
    bench = _bench()
    from numba_tma.attention import call

    rule, seen = call.keys_per_block, []
    run = bench.with_keys(128, lambda: seen.append(call.keys_per_block(128, False)) or "done")
    assert run() == "done" and seen == [128] and call.keys_per_block is rule and rule(128, False) == 176
    assert 'fns["128 keys"] = with_keys(128, fns["numba-tma"])' in inspect.getsource(bench.case)
