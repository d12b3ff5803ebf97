"""A TraceSet displayed in a real JupyterLab: the live widget's rank picker, and a pick that goes
to the kernel and comes back as the other rank's compilation."""

from __future__ import annotations


import pytest

import explorer
from tests.jupyterlab import lab_server, notebook_page, run_cell, settle, write_notebook
from tests.paths import FIXTURES

pytestmark = pytest.mark.browser

NCCL = FIXTURES / "torch_trace_nccl"


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab")
    notebooks = tmp / "notebooks"
    notebooks.mkdir()
    write_notebook(notebooks / "ranks.ipynb", [f"import explorer\nts = explorer.load_trace({str(NCCL)!r})\nts"])
    with lab_server(notebooks, tmp) as url:
        yield url


def test_traceset_shows_a_rank_picker_and_picking_a_rank_shows_its_graph(lab):
    ts = explorer.load_trace(NCCL)
    compile_id = ts["0"].compile_ids[0]
    names = {rank: {n["name"] for n in ts[rank][compile_id].to_json()["graphs"][0]["fx"]["nodes"]} for rank in ("0", "1")}
    with notebook_page(lab, "ranks.ipynb") as page:
        run_cell(page, 0)
        out = page.locator(".jp-OutputArea")
        out.locator(".ie-root g.ie-node").first.wait_for(timeout=120_000)
        settle(page)
        assert out.locator(".ie-rank-picker option").evaluate_all("os => os.map(o => o.value)") == list(ts.ranks)
        assert out.locator(".ie-ts-div").count() == len(ts.divergence)
        shown = lambda: set(out.locator(".ie-root g.ie-node").evaluate_all("gs => gs.map(g => g.dataset.name)"))  # noqa: E731
        assert shown() <= names["0"]

        out.locator(".ie-rank-picker").select_option("1")
        page.wait_for_function("() => document.querySelector('.ie-traceset-bar').dataset.rank === '1'", timeout=30_000)
        only_rank1 = sorted(names["1"] - names["0"])
        assert only_rank1, "the fixture's ranks compiled different graphs"
        # the pick went to the kernel, which sent rank 1's compilation back
        page.wait_for_function(
            "(names) => [...document.querySelectorAll('.ie-root g.ie-node')].some(g => names.includes(g.dataset.name))",
            arg=only_rank1, timeout=60_000,
        )
        settle(page)
        after = shown()
        assert after <= names["1"] and after & (names["1"] - names["0"])
        assert page.outside_requests == []
