"""The core-grid pictures (`plan show --png`, `emulate --png`) say something on an even grid and
read at 8x8 (issue 32): the work panel's title states the blocks per core and how even, the L1
panel's colours run from an empty to a full L1, the per-RISC panel sums the utilisation up."""

import pytest
import torch

import tilelang_tt
from tests.kernels import eltwise, gemm
from tilelang_tt.plan_view import RISCS, grid_figure, plan_l1


@pytest.fixture(scope="module")
def even():
    """64 blocks on 64 cores, run once."""
    artifacts = tilelang_tt.compile(gemm(512, 512, 64, 64, 64, 64))
    a, b = torch.randn(512, 64).to(torch.bfloat16), torch.randn(64, 512).to(torch.bfloat16)
    artifacts.run(a, b)
    return artifacts


def test_an_even_grid_says_so_and_its_l1_colour_is_its_fullness(even):
    fig = grid_figure(even.plan)
    work, l1 = fig.axes[:2]
    assert work.get_title() == "blocks per core: 1 on each of the 64 active cores (even)"
    assert l1.images[0].get_clim() == (0, plan_l1(even.plan).available / 1024)  # empty to full
    texts = [t.get_text() for t in work.texts]
    assert len(texts) == 64 and set(texts) == {"1"}
    assert all(t.get_fontsize() >= 12 for t in work.texts + l1.texts)


def test_an_uneven_grid_names_its_range():
    artifacts = tilelang_tt.compile(eltwise("add", 96, 128, 32, 32), grid=(4, 2))  # 12 blocks on 8 cores
    title = grid_figure(artifacts.plan).axes[0].get_title()
    assert title.startswith("blocks per core: 1 to 2 over 8 active cores\n(the busiest has ")


def test_the_per_risc_panel_shows_the_busiest_and_mean_core(even):
    timing = even.last_counters["timing"]
    fig = grid_figure(even.plan, timing)
    panel = fig.axes[3]
    assert [t.get_text() for t in panel.get_yticklabels()] == list(RISCS)
    busiest = [max(c[risc]["busy"] for c in timing["cores"]) * 100 / timing["cycles"] for risc in RISCS]
    heights = [bar.get_width() for bar in panel.containers[0]]
    assert heights == pytest.approx(busiest)
    assert [t.get_text() for t in panel.texts][::2] == [f"{v:.0f}%" for v in busiest]
