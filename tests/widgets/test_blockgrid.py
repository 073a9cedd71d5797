"""Block-grid widget: indices from calc.cuda, illegal launches explained."""
import xml.etree.ElementTree as ET

from calc import cuda
import widgets

SVG = "{http://www.w3.org/2000/svg}"


def render(**params):
    return widgets.render("blockgrid", params)


def test_selected_thread_indices_equal_calc():
    r = dict(render(grid_x=4, grid_y=3, block_x=16, block_y=8, sel_x=37, sel_y=20)["readouts"])
    block, grid = cuda.Dim3(16, 8, 1), cuda.Dim3(4, 3, 1)
    b, t = cuda.Dim3(2, 2, 0), cuda.Dim3(5, 4, 0)
    assert cuda.global_coords(b, block, t) == cuda.Dim3(37, 20, 0)
    assert r["blockIdx"] == "(2, 2, 0)" and r["threadIdx"] == "(5, 4, 0)"
    assert r["Linear index"] == f"{cuda.global_linear(b, block, t, grid):,}"
    warp, lane = cuda.warp_of(t, block)
    assert r["Warp, lane"] == f"warp {warp}, lane {lane}"


def test_vector_add_element_and_bounds_check():
    r = dict(render(kernel="vecadd", grid_x=4, grid_y=1, block_x=32, block_y=1, size_x=100, sel_x=70, sel_y=0)["readouts"])
    assert r["Computes"] == "c[70] = a[70] + b[70]"
    r = dict(render(kernel="vecadd", grid_x=4, grid_y=1, block_x=32, block_y=1, size_x=100, sel_x=120, sel_y=0)["readouts"])
    assert r["Computes"].startswith("nothing") and "100" in r["Computes"]


def test_matrix_add_names_row_and_column():
    r = dict(render(sel_x=19, sel_y=5)["readouts"])
    assert r["Computes"].startswith("C[5][19]")


def test_illegal_launches_name_the_limit():
    for params, words in (({"block_x": 2048}, "blockDim.x"), ({"block_z": 128}, "blockDim.z"),
                          ({"block_x": 64, "block_y": 32}, "threads per block"), ({"grid_y": 70000}, "gridDim.y")):
        result = render(**params)
        assert words in result["message"], result["message"]
        ET.fromstring(result["svg"])


def test_3d_view_is_rotatable_by_keys_and_drag():
    a = render(view="3d", grid_z=2, block_z=2)
    b = render(view="3d", grid_z=2, block_z=2, yaw=120)
    svg = ET.fromstring(a["svg"])
    assert "ArrowLeft" in svg.get("data-keys") and svg.get("data-drag")
    assert a["svg"] != b["svg"]
    assert len(list(svg.iter(SVG + "polygon"))) > 3


def test_threads_are_clickable_and_selection_is_clamped():
    result = render(sel_x=10_000)
    svg = ET.fromstring(result["svg"])
    assert any(e.get("data-set") for e in svg.iter(SVG + "rect"))
    assert "outside the launch" in result["message"]


def test_big_launch_stays_small():
    result = render(grid_x=100000, grid_y=1000, block_x=32, block_y=32, view="2d")
    assert len(result["svg"]) < 60_000
    result = render(grid_x=64, grid_y=64, grid_z=64, block_x=8, block_y=8, block_z=8, view="3d")
    assert len(result["svg"]) < 120_000


def test_a_block_taller_than_the_panel_shows_the_rows_around_the_selected_thread():
    svg = widgets.render("blockgrid", {"grid_x": 1, "block_x": 1, "block_y": 1024, "sel_x": 0, "sel_y": 500})["svg"]
    assert "rows 468–531 of 1,024" in svg
    assert 'class="wg-tsel"' in svg                   # the selected thread is drawn, not cut off
    top = widgets.render("blockgrid", {"grid_x": 1, "block_x": 1, "block_y": 1024, "sel_x": 0, "sel_y": 3})["svg"]
    assert "first 64 rows" in top and 'class="wg-tsel"' in top


def test_coverage_is_counted_per_axis():
    # 3 × 3 blocks of 16 × 4 reach columns 0–47 only: 576 threads > 100 elements, yet 52 are never computed
    result = render(size_x=100, size_y=1)
    r = dict(result["readouts"])
    assert r["Threads launched"] == "576 for 100 elements (91.7% idle)"
    assert "along x" in result["message"] and "52 of the 100 elements are never computed" in result["message"]
    assert render()["message"] is None              # the chapter's 40 × 10 launch covers its matrix
    m = render(kernel="scale3d", size_y=100, size_z=3)["message"]
    assert "along y" in m and "along z" in m and "along x" not in m


def test_vector_add_is_the_chapters_1d_kernel():
    # i = blockIdx.x · blockDim.x + threadIdx.x: thread (19, 5, 0) of a 2D launch computes c[19]
    result = render(kernel="vecadd", sel_x=19, sel_y=5, size_x=40)
    assert dict(result["readouts"])["Computes"] == "c[19] = a[19] + b[19]"
    assert "same elements c[0] to c[39]" in result["message"]
    one_d = render(kernel="vecadd", grid_x=4, grid_y=1, block_x=32, block_y=1, size_x=100, sel_y=0)
    assert one_d["message"] is None


def test_idle_share_never_rounds_to_100_or_0_percent():
    from widgets.blockgrid import idle_text
    assert idle_text(36863, 36864).startswith("99.99") and idle_text(36863, 36864) != "100% idle"
    assert idle_text(1, 10**9) != "0% idle" and idle_text(36864, 36864) == "100% idle"
    # 40 working threads of 1.5 × 10^20: a float's 1 - 40 / threads is exactly 1.0
    threads = 2147483647 * 65535 * 65535 * 16
    assert idle_text(threads - 40, threads) == "all but 40 idle"
    r = dict(widgets.render("blockgrid", {"kernel": "matadd", "grid_x": 2147483647, "grid_y": 65535, "grid_z": 65535,
                                          "block_x": 2, "block_y": 4, "block_z": 2, "size_x": 40, "size_y": 1,
                                          "sel_x": 0, "sel_y": 0, "sel_z": 0})["readouts"])
    assert r["Threads launched"].endswith("(all but 40 idle)")
    r = dict(render(kernel="vecadd", grid_x=2147483647, block_x=1024, grid_y=1, block_y=1, size_x=1)["readouts"])
    assert "(100% idle)" not in r["Threads launched"]


def test_illegal_launch_names_the_device_by_its_label_and_formats_numbers():
    from calc import specs
    m = render(block_z=128)["message"]
    assert specs.device("h100-sxm").label in m and "h100-sxm" not in m
    m = render(block_x=33, block_y=32)["message"]
    assert "1,056 threads per block" in m
    m = render(sel_x=100_000, sel_y=10_000, grid_x=1000, block_x=32)["message"]
    assert "showing thread (31,999, 11, 0)" in m


def _strong_lines(svg):
    import re
    return [(float(x), t) for x, t in re.findall(r'<text x="([\d.]+)" y="[\d.]+" class="wg-strong"[^>]*>([^<]*)</text>', svg)]


def _height(svg):
    return float(ET.fromstring(svg).get("height"))


def test_panel_titles_fit_their_panels_and_the_height_ignores_the_selection():
    from widgets._svg import STRONG_CHAR_PX
    launches = [dict(grid_z=2), dict(grid_x=65536, grid_z=3, block_x=1, block_y=1024),
                dict(grid_x=2147483647, grid_y=65535, grid_z=65535, block_x=1024, block_y=1)]
    for width in (640, 340):
        for view in ("2d", "3d"):
            mid = width * (0.46 if view == "2d" else 0.5) if width >= 520 else width
            for launch in launches:
                p = dict(launch, view=view, _width=width)
                first = render(**p, sel_x=0, sel_y=0, sel_z=0)["svg"]
                last = render(**p, sel_x=10**13, sel_y=10**6, sel_z=10**6)["svg"]
                assert _height(first) == _height(last), (width, view, launch)
                for x, line in _strong_lines(first) + _strong_lines(last):
                    right = mid - 8 if x < mid else width - 8
                    assert x + len(line) * STRONG_CHAR_PX * 0.9 <= right, (width, view, line)


def test_block_labels_fit_their_boxes():
    from widgets._svg import SMALL_CHAR_PX
    svg = render(grid_z=2, grid_x=65536, block_x=1, block_y=1024, sel_x=65535, _width=340)["svg"]
    assert "65535,0" not in svg                        # 7 characters do not fit a 36 px box
    assert ">1,1<" in render(block_x=32, block_y=32, grid_x=4, grid_y=4)["svg"]   # short ones still do
