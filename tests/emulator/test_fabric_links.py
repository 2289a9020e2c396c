"""The fabric's links in the timing model (runtime/fabric.cpp, timing.hpp "Fabric"): a packet holds each link of
its route for its bytes at the link's bandwidth (12.5 GB/s) and reaches the next chip a hop's latency (650 ns)
after it starts on it (tech_reports/EthernetMultichip/BasicEthernetGuide.md); packets on one link serialise; a
semaphore wait on the receiving chip ends when the increment arrives. On Wormhole (1 GHz) a hop is 650 cycles,
a page packet (2048 B payload + a 64 B header) holds a link 169 cycles, an increment (a header) 6."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tilelang_tt.emulator.driver import EmulatorError

from .fabric_programs import PAGE, TwoChips

HOP = 650  # cycles: 650 ns at 1 GHz
NOC_LATENCY = 293  # cycles: Wormhole's NOC latency (contract/arch.py), the destination router's NOC write
PAGE_PACKET = math.ceil((PAGE + 64) / 12.5)  # cycles on a link: bytes / (12.5 GB/s at 1 GHz)
INC_PACKET = math.ceil(64 / 12.5)


def run(program: TwoChips, tmp_path, trace: bool = False):
    tmp_path.mkdir(exist_ok=True)
    x = np.arange(program.pages * PAGE // 4, dtype=np.uint32).reshape(program.pages, PAGE // 4)
    z, counters = program.run(tmp_path, x, trace=tmp_path / "trace.json" if trace else None)
    np.testing.assert_array_equal(z[program.chip(program.dst)], x)
    return counters, json.loads((tmp_path / "trace.json").read_text()) if trace else None


def links(counters, chip: int) -> dict[str, dict]:
    return {link["direction"]: link for link in counters["devices"][chip]["timing"]["links"]}


def receiver(counters, chip: int) -> dict:
    return counters["devices"][chip]["timing"]["cores"][0]["reader"]


def line(hops: int, pages: int = 1, senders: int = 1) -> TwoChips:
    return TwoChips(mesh=(1, 4), config="FABRIC_1D", src=(0, 0), dst=(0, hops), next=(0, 1), hops=hops,
                    pages=pages, senders=senders)


@pytest.fixture(scope="module")
def one_and_three_hops(tmp_path_factory):
    return [run(line(hops), tmp_path_factory.mktemp(f"hops{hops}"), trace=True) for hops in (1, 3)]


def test_each_link_of_the_route_carries_the_packets_for_their_bytes(one_and_three_hops):
    _, (three, _) = one_and_three_hops
    for chip in range(3):  # the east links of chips 0, 1, 2: a page, then the increment
        east = links(three, chip)["EAST"]
        assert (east["packets"], east["bytes"], east["busy"]) == (2, PAGE + 64 + 64, PAGE_PACKET + INC_PACKET)
    assert "EAST" not in links(three, 3)
    assert three["links"] == {"packets": 6, "bytes": 3 * (PAGE + 128), "busy": 3 * (PAGE_PACKET + INC_PACKET),
                              "end": links(three, 2)["EAST"]["end"]}


def test_two_more_hops_arrive_two_hop_latencies_later(one_and_three_hops):
    (one, _), (three, _) = one_and_three_hops
    first_hop_end = [links(c, 0)["EAST"]["end"] for c in (one, three)]
    assert first_hop_end[0] == first_hop_end[1]  # the same sender, the same first link
    last_hop_end = (links(one, 0)["EAST"]["end"], links(three, 2)["EAST"]["end"])
    assert last_hop_end[1] - last_hop_end[0] == 2 * HOP
    assert receiver(three, 3)["end"] - receiver(one, 1)["end"] == 2 * HOP


def test_the_receivers_semaphore_wait_ends_when_the_increment_arrives(one_and_three_hops):
    for (counters, trace), (last_link_chip, dst) in zip(one_and_three_hops, ((0, 1), (2, 3))):
        # the increment's packet is the last on the route's last link: it is in the next chip's router a hop's
        # latency after its last byte went on the link, and the router's NOC write of the semaphore lands a NOC
        # latency later
        arrival = links(counters, last_link_chip)["EAST"]["end"] + HOP + NOC_LATENCY
        pid = next(e["pid"] for e in trace["traceEvents"]
                   if e["name"] == "process_name" and e["args"]["name"] == f"chip {dst} core (0,0)")
        wait = next(e for e in trace["traceEvents"]
                    if e.get("pid") == pid and e["name"] == "wait noc_semaphore_wait")
        assert round((wait["ts"] + wait["dur"]) * 1000) == arrival


def test_the_trace_shows_each_links_packets(one_and_three_hops):
    (counters, trace), _ = one_and_three_hops
    pid = next(e["pid"] for e in trace["traceEvents"]
               if e["name"] == "process_name" and e["args"]["name"] == "chip 0 links")
    packets = [e for e in trace["traceEvents"] if e.get("pid") == pid and e.get("cat") == "link"]
    assert [round(e["dur"] * 1000) for e in packets] == [PAGE_PACKET, INC_PACKET]
    assert round((packets[-1]["ts"] + packets[-1]["dur"]) * 1000) == links(counters, 0)["EAST"]["end"]


def link_packets(trace, name: str) -> list[tuple[int, int]]:
    """The (start, end) cycles of each packet on the links of the trace process ``name``."""
    pid = next(e["pid"] for e in trace["traceEvents"] if e["name"] == "process_name" and e["args"]["name"] == name)
    return sorted((round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)) for e in trace["traceEvents"]
                  if e.get("pid") == pid and e.get("cat") == "link")


def test_packets_on_one_link_go_one_after_the_other(tmp_path):
    # One worker core of chip 0 sends two pages and an increment over the one link east: each holds the link for
    # its bytes, never two at once. (Two worker cores cannot share the link's router: see below.)
    counters, trace = run(line(1, pages=2), tmp_path, trace=True)
    east = links(counters, 0)["EAST"]
    assert east["packets"] == 3 and east["busy"] == 2 * PAGE_PACKET + INC_PACKET
    packets = link_packets(trace, "chip 0 links")
    assert [end - start for start, end in packets] == [PAGE_PACKET, PAGE_PACKET, INC_PACKET]
    assert all(end <= start for (_, end), (start, _) in zip(packets, packets[1:]))  # never two at once


def test_two_senders_on_one_router_channel_at_once_are_refused(tmp_path):
    # Two worker cores of chip 0 both connected to the router east: its sender channel takes one worker at a
    # time (tt-metal 0.81.1 fabric_erisc_router.cpp, "Connecting Workers to Channels").
    with pytest.raises(EmulatorError, match=r"cores \(\d,0\) and \(\d,0\) of chip 0 .* are connected to the router "
                                            r"EAST .* at once: a router's sender channel takes one worker at a time"):
        run(line(1, pages=4, senders=2), tmp_path)
