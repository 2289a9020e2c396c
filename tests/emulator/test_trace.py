"""The timing model's outputs besides the counters: the Chrome trace of a run (Artifacts.run(...,
trace=PATH), runtime/trace.cpp) and the per-core utilization panel of the grid PNG
(plan_view.grid_figure with a run's timing). One multicast GEMM, the program test_timing.py builds
(same kernel, options and so the same cached emulator build), run three times."""

import json
from decimal import Decimal

import numpy as np
import pytest
import torch
from matplotlib import colormaps, image

import tilelang_tt
from tests import kernels
from tilelang_tt.contract.arch import ARCHS
from tilelang_tt.plan_view import DPI, RISCS, grid_figure

PS_PER_CYCLE = 10**12 // int(ARCHS["wormhole_b0"].clock_hz)  # 1000: Wormhole's 1 GHz, times exact in ps
TID = {"reader": 1, "unpack": 2, "math": 3, "pack": 4, "writer": 5}


def bf16(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(torch.bfloat16)


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """The GEMM's artifacts (after a run without a trace, with TT_EMU_TRACE set in the environment
    to a path that must stay unwritten) and the bytes of two traced runs."""
    tmp = tmp_path_factory.mktemp("trace")
    artifacts = tilelang_tt.compile(kernels.gemm(256, 256, 256, 64, 64, 64), grid=(4, 4), multicast="on")
    a, b = bf16(256, 256, seed=1), bf16(256, 256, seed=2)
    artifacts.run(a, b, trace=tmp / "first.json")
    artifacts.run(a, b, trace=tmp / "runs" / "second.json")  # its directory made on the way
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TT_EMU_TRACE", str(tmp / "leaked.json"))
        artifacts.run(a, b)
    assert not (tmp / "leaked.json").exists()  # only the trace argument asks for one
    return artifacts, (tmp / "first.json").read_bytes(), (tmp / "runs" / "second.json").read_bytes()


def picos(us: Decimal) -> int:
    return int(us * 10**6)


def test_trace_is_the_same_bytes_on_every_run(traced):
    _, first, second = traced
    assert first == second


def test_trace_has_a_process_per_core_and_a_named_thread_per_risc(traced):
    artifacts, trace, _ = traced
    doc = json.loads(trace)
    assert doc["displayTimeUnit"] == "ns" and doc["otherData"] == {"arch": "wormhole_b0", "clock_hz": 10**9}
    meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
    processes = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    assert processes == {1 + y * 8 + x: f"core ({x},{y})" for x in range(4) for y in range(4)}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert threads == {(pid, tid): role for pid in processes for role, tid in TID.items()}
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    assert {e["ph"] for e in doc["traceEvents"]} == {"M", "X"}
    # (core, thread, ts) order
    keys = [(e["pid"], e["tid"], e["ts"]) for e in spans]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_spans_tile_each_thread_and_add_up_to_its_busy_and_stall_cycles(traced):
    artifacts, trace, _ = traced
    events = json.loads(trace, parse_float=Decimal)["traceEvents"]
    timing = artifacts.last_counters["timing"]
    for core in timing["cores"]:
        x, y = core["core"]
        for role, tid in TID.items():
            spans = [e for e in events if e["ph"] == "X" and e["pid"] == 1 + y * 8 + x and e["tid"] == tid]
            clock = 0
            for e in spans:  # back to back from 0: no overlap, no gap
                assert picos(e["ts"]) == clock and picos(e["dur"]) > 0, (core["core"], role, e)
                clock += picos(e["dur"])
            assert clock == core[role]["end"] * PS_PER_CYCLE
            # the firmware's initialisation first, up to the kernel's start, then the kernel's own spans
            init = [e for e in spans if e["cat"] == "init"]
            assert init == spans[:1] and init[0]["name"] == "firmware init"
            assert picos(init[0]["dur"]) == core[role]["start"] * PS_PER_CYCLE > 0
            for cat in ("busy", "stall"):
                assert sum(picos(e["dur"]) for e in spans if e["cat"] == cat) == core[role][cat] * PS_PER_CYCLE
            assert all(e["name"].startswith("wait ") == (e["cat"] == "stall") for e in spans)
            # merged spans: no two neighbours of one name and kind
            assert all((p["name"], p["cat"]) != (n["name"], n["cat"]) for p, n in zip(spans, spans[1:]))


def test_span_names_and_call_counts_match_the_counters(traced):
    artifacts, trace, _ = traced
    spans = [e for e in json.loads(trace)["traceEvents"] if e["ph"] == "X"]
    counters = artifacts.last_counters
    for core in counters["cores"]:
        x, y = core["core"]
        mine = [e for e in spans if e["pid"] == 1 + y * 8 + x]

        def calls(name, tid=None):
            return sum(e.get("args", {}).get("calls", 1) for e in mine
                       if e["name"] == name and e["cat"] == "busy" and tid in (None, e["tid"]))

        assert calls("matmul_block", TID["math"]) == core["tile_ops"]["matmul_block"] > 0
        assert calls("noc_async_read") == core["noc_read_transactions"]  # 0 on a multicast receiver
        assert calls("noc_async_read_barrier") == core["read_barriers"]
        assert {"wait cb_wait_front c_0", "pack_tile", "cb_push_back"} <= {e["name"] for e in mine}
    assert counters["cores"][0]["noc_read_transactions"] > 0  # core (0,0) reads A and B and multicasts them
    # the multicast's handshakes: the receivers wait on their semaphore
    assert any(e["name"] == "wait noc_semaphore_wait" and e["cat"] == "stall" for e in spans)


def test_png_draws_each_risc_busy_fraction_per_core(traced, tmp_path):
    artifacts, _, _ = traced
    timing = artifacts.last_counters["timing"]
    fig = grid_figure(artifacts.plan, timing)
    png = tmp_path / "grid.png"
    fig.savefig(png, dpi=DPI)
    pixels = (image.imread(png)[..., :3] * 255).round().astype(int)
    height = pixels.shape[0]
    panel = fig.axes[2]
    title = fig.get_suptitle()
    assert f"predicted {timing['seconds'] * 1e6:.2f} us ({timing['cycles']} cycles), bound: {timing['bound']}" in title

    def colour_at(x, y, risc):  # the lower part of the stripe, clear of its label
        px, py = panel.transData.transform((x - 0.5 + (RISCS.index(risc) + 0.5) / len(RISCS), y + 0.3))
        return pixels[int(height - py), int(px)]

    magma = colormaps["magma"]
    by_core = {tuple(c["core"]): c for c in timing["cores"]}
    for (x, y), core in by_core.items():
        for risc in RISCS:
            expected = np.round(np.array(magma(core[risc]["busy"] / timing["cycles"])[:3]) * 255)
            assert np.abs(colour_at(x, y, risc) - expected).max() <= 2, ((x, y), risc)
    # a busy core's math stripe against an idle core's: magma for its fraction, grey
    busy, idle = colour_at(0, 0, "math"), colour_at(6, 6, "math")
    assert tuple(idle) == (211, 211, 211) and tuple(busy) != tuple(idle)
    assert by_core[(0, 0)]["math"]["busy"] > by_core[(0, 0)]["writer"]["busy"]
    assert colour_at(0, 0, "math").sum() > colour_at(0, 0, "writer").sum()  # magma brightens with the value
