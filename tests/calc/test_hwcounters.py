"""calc.hwcounters: the simulator's counts agree with the published hardware counters, each sourced."""
from calc import hwcounters


def test_every_published_counter_agrees_with_the_simulator():
    rows = hwcounters.agreements()
    assert len(rows) == len(hwcounters.PUBLISHED) == 10
    assert [(p.key, sim) for p, sim, ok in rows if not ok] == []


def test_every_published_figure_names_its_source_and_url():
    for p in hwcounters.PUBLISHED.values():
        assert p.source and p.url.startswith("https://") and p.cite and p.unit


def test_the_gemm_figures_depend_on_which_index_threadidx_x_runs_along():
    assert hwcounters.gemm_sectors_per_request("naive") == (16.5, 32)
    assert hwcounters.gemm_sectors_per_request("coalesced") == (2.5, 4)


def test_the_padded_transpose_reads_a_column_in_one_pass():
    assert hwcounters.transpose_column_read() == {"unpadded": 32, "padded": 1}
