"""Build speed and page weight: the real book (issue #16's goals), then the fixture book (#2's).

    python benchmarks/build_bench.py                  # the real book, then the fixture
    python benchmarks/build_bench.py --book real      # only one of them (real | fixture)

Works on copies in a temporary folder (the book's own _book, .bookcache and the per-user cache
are not touched: each copy gets its own BOOKBUILD_CACHE_DIR) and times the command line a writer
runs, ``python -m bookbuild build``, as wall-clock time, with its CPU seconds beside it (the
build's own and its children's; a kept kernel's or typst compiler's are not counted).

The real book (goals: issue #16, 2 cores; real Quarto 1.10 takes 81-90 s for ``quarto render
--to html`` of this book on this machine class):

  cold, empty caches        a fresh copy (no .bookcache) and an empty per-user cache: HTML, then
                            again from scratch for HTML + PDF
  cold, warm user cache     a fresh copy, the per-user cache as the cold build left it (the widget
                            runtime made already): HTML
  nothing changed           HTML + PDF again
  one chapter's prose       a sentence added to a chapter with code: HTML, then HTML + PDF
  one calc module           a line added to calc/roofline.py: every chapter that imports it runs
                            again, and the widget runtime is made again (HTML + PDF)
  pdf only                  ``--to pdf`` with the typst conversions and the PDF removed

The fixture book (tests/fixtures/book; goals: issue #2): a generated two-chapter book with one cell
(cold, <= 3.3 s: 3x Quarto's ~10 s), cold, nothing changed (< 1 s), one chapter's prose, one
chapter's code (< 2 s, in the kept kernel; and with a new one), pdf only, and the gzip weight of a page without widgets measured
in Chromium (< 60 KB).
"""
from __future__ import annotations

import argparse
import functools
import gzip
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "book"
GOALS = {"cold": 3.3, "no change": 1.0, "one chapter": 2.0}
QUARTO = (81.0, 90.0)          # real Quarto 1.10.18, `quarto render --to html` of the real book, 2 cores
REAL_GOALS = {                 # issue #16
    "cold, empty caches, html": 27.0, "cold, empty caches, html+pdf": 35.0,
    "cold, warm user cache, html": 15.0, "nothing changed": 1.0,
    "one chapter's prose, html": 2.0, "one chapter's prose, html+pdf": 4.0,
}
PAGE_GOAL_KB = 60.0
SKIP = ("_book", ".bookcache", "node_modules", ".git", "__pycache__", ".pytest_cache", "*.pyc")


CPU: dict[str, float] = {}


def run_build(root: Path, *extra: str, name: str = "", env: dict[str, str] | None = None,
              own: bool = False) -> float:
    """Wall-clock seconds of one build (``own``: with the copy's own bookbuild, not this tree's); its CPU seconds (with pandoc, the kernel, typst) go to CPU,
    a figure that does not depend on what else the machine is doing."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    env = {**os.environ, **(env or {})}
    env.setdefault("BOOKBUILD_CACHE_DIR", str(root.parent / "user-cache"))   # never the real one
    proc = subprocess.run([sys.executable, "-m", "bookbuild", "build", "--root", str(root), *extra],
                          cwd=root if own else REPO, capture_output=True, text=True, check=False, env=env)
    seconds = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[name] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        sys.exit(f"build failed:\n{proc.stderr}")
    summary = [ln for ln in proc.stderr.splitlines() if "built" in ln or "executed" in ln]
    print(f"      {' '.join(' '.join(summary).split())}", file=sys.stderr)
    return seconds


MINIMAL = {  # the yardstick: Quarto takes ~10 s for a two-chapter book with one cell
    "_quarto.yml": "project:\n  type: book\nbook:\n  title: Minimal\n  chapters:\n"
                   "    - index.qmd\n    - two.qmd\nformat:\n  html: {}\n  typst: {}\n",
    "index.qmd": "# One\n\n```{python}\nx = 6 * 7\n```\n\nThe answer is `{python} x`.\n",
    "two.qmd": "# Two\n\nNo code here.\n",
}


def minimal_cold(tmp: Path) -> float:
    root = tmp / "minimal"
    root.mkdir()
    for name, text in MINIMAL.items():
        (root / name).write_text(text)
    return run_build(root, name="cold, 2 chapters + 1 cell")


def chapter_with_code(root: Path) -> Path:
    import yaml
    cfg = yaml.safe_load((root / "_quarto.yml").read_text())
    book = cfg["book"]
    files: list[str] = []
    for entry in [*(book.get("chapters") or []), *(book.get("appendices") or [])]:
        files += entry.get("chapters", []) if isinstance(entry, dict) else [entry]
    for f in files:
        text = (root / f).read_text()
        if "```{python}" in text and "`{python}" in text.replace("```{python}", ""):
            return root / f
    for f in files:
        if "```{python}" in (root / f).read_text():
            return root / f
    sys.exit("no chapter with code")


def page_without_widgets(site: Path) -> str:
    """The largest chapter page that has no widget: the heaviest plain reading page."""
    best, size = None, -1
    for page in site.rglob("*.html"):
        if "pagefind" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        if "data-widget=" in text:
            continue
        if len(text) > size:
            best, size = page, len(text)
    return best.relative_to(site).as_posix()


def page_weight(site: Path, page: str) -> dict[str, int]:
    """Gzip bytes of every response the page needs until load (and a little after), by type."""
    from playwright.sync_api import sync_playwright

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    urls: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--headless", "--no-sandbox", "--disable-gpu"])
        page_ = browser.new_page(viewport={"width": 1400, "height": 900})
        page_.on("request", lambda r: urls.append(r.url))
        page_.goto(base + page)
        page_.wait_for_load_state("networkidle")
        browser.close()
    server.shutdown()
    sizes: dict[str, int] = {}
    for url in dict.fromkeys(urls):
        if not url.startswith(base):
            raise SystemExit(f"the page fetched {url} from elsewhere")
        path = site / url[len(base):].split("#")[0].split("?")[0]
        kind = path.suffix.lstrip(".") or "html"
        kind = "font" if kind in ("woff2", "woff", "ttf") else kind
        sizes[kind] = sizes.get(kind, 0) + len(gzip.compress(path.read_bytes(), 9))
    return sizes


def ratio(name: str, value: float, goal: float) -> str:
    ok = "meets" if value <= goal else "MISSES"
    return (f"{name:30} {value:6.2f} s wall ({CPU[name]:5.2f} s CPU)   goal <= {goal:.1f} s "
            f"({value / goal:4.2f} of it) {ok}")


def copy_book(src: Path, dest: Path) -> Path:
    """A fresh clone's worth of the book: its sources, with node_modules linked."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(*SKIP))
    if (src / "node_modules").is_dir():  # the widget runtime (Pyodide) is bundled from the book's own
        (dest / "node_modules").symlink_to((src / "node_modules").resolve())
    return dest


def add_prose(chapter: Path, n: int) -> None:
    chapter.write_text(chapter.read_text() + f"\nOne more sentence for the benchmark ({n}).\n")


def real_book(src: Path, tmp: Path) -> None:
    times: dict[str, float] = {}
    html, both = ("--to", "html"), ("--to", "html,pdf")    # the goals name HTML and HTML + PDF
    print("  real book: cold, empty caches, html …", file=sys.stderr)
    times["cold, empty caches, html"] = run_build(copy_book(src, tmp / "a" / "book"), *html,
                                                  name="cold, empty caches, html")
    print("  cold, empty caches, html+pdf …", file=sys.stderr)
    root = copy_book(src, tmp / "b" / "book")
    times["cold, empty caches, html+pdf"] = run_build(root, *both, name="cold, empty caches, html+pdf")
    print("  cold, warm per-user cache, html …", file=sys.stderr)
    warm = {"BOOKBUILD_CACHE_DIR": str(root.parent / "user-cache")}
    times["cold, warm user cache, html"] = run_build(copy_book(src, tmp / "c" / "book"), *html, env=warm,
                                                     name="cold, warm user cache, html")
    print("  nothing changed …", file=sys.stderr)
    times["nothing changed"] = run_build(root, *both, name="nothing changed")
    chapter = chapter_with_code(root)
    for n, (name, extra) in enumerate((("one chapter's prose, html", html), ("one chapter's prose, html+pdf", both))):
        add_prose(chapter, n)
        print(f"  {name} ({chapter.relative_to(root)}) …", file=sys.stderr)
        times[name] = run_build(root, *extra, name=name)
    module = root / "calc" / "roofline.py"
    module.write_text(module.read_text() + "\n# an edit for the benchmark\n")
    print("  one calc module (calc/roofline.py) …", file=sys.stderr)
    times["one calc module, html+pdf"] = run_build(root, *both, name="one calc module, html+pdf")
    shutil.rmtree(root / ".bookcache" / "typst", ignore_errors=True)
    print("  pdf only …", file=sys.stderr)
    times["pdf only"] = run_build(root, "--to", "pdf", name="pdf only")

    print(f"real book ({src}); load average after: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for name, seconds in times.items():
        if name in REAL_GOALS:
            print(ratio(name, seconds, REAL_GOALS[name]))
        else:
            print(f"{name:30} {seconds:6.2f} s wall ({CPU[name]:5.2f} s CPU)   no goal")
    cold = times["cold, empty caches, html"]
    print(f"  real Quarto, `quarto render --to html`: {QUARTO[0]:.0f}-{QUARTO[1]:.0f} s: cold HTML is "
          f"{QUARTO[0] / cold:.1f}-{QUARTO[1] / cold:.1f}x faster (goal >= 3x)")


def fixture_book(src: Path, tmp: Path) -> None:
    root = copy_book(src, tmp / "book")
    times: dict[str, float] = {}
    print("  fixture: cold build of a two-chapter book with one cell …", file=sys.stderr)
    times["cold, 2 chapters + 1 cell"] = minimal_cold(tmp)
    print("  cold build …", file=sys.stderr)
    times["cold"] = run_build(root, name="cold")
    print("  nothing changed …", file=sys.stderr)
    times["no change"] = run_build(root, name="no change")
    chapter = chapter_with_code(root)
    add_prose(chapter, 0)
    print(f"  one chapter's prose changed ({chapter.relative_to(root)}) …", file=sys.stderr)
    times["one chapter's prose"] = run_build(root, name="one chapter's prose")
    for n, (name, env) in enumerate((("one chapter", None), ("one chapter, new kernel", {"BOOKBUILD_EXECUTE_DAEMON": "0"}))):
        chapter.write_text(chapter.read_text().replace("```{python}", f"```{{python}}\n# edit {n}", 1))
        print(f"  {name}'s code changed …", file=sys.stderr)
        times[name] = run_build(root, name=name, env=env)
    shutil.rmtree(root / ".bookcache" / "typst", ignore_errors=True)
    print("  pdf only …", file=sys.stderr)
    times["pdf only"] = run_build(root, "--to", "pdf", name="pdf only")
    cfg_out = "_book"
    m = re.search(r"output-dir:\s*(\S+)", (root / "_quarto.yml").read_text())
    if m:
        cfg_out = m.group(1).strip("\"'")
    site = root / cfg_out
    page = page_without_widgets(site)
    sizes = page_weight(site, page)

    print(f"fixture book ({src}); load average after: {os.getloadavg()[0]:.1f}")
    minimal = times["cold, 2 chapters + 1 cell"]
    print(ratio("cold, 2 chapters + 1 cell", minimal, GOALS["cold"]))
    print(f"  vs Quarto's ~10 s: {10.0 / minimal:.1f}x faster (goal >= 3x)")
    for name in ("no change", "one chapter"):
        print(ratio(name, times[name], GOALS[name]))
    for name in ("cold", "one chapter's prose", "one chapter, new kernel", "pdf only"):
        print(f"{name:30} {times[name]:6.2f} s wall ({CPU[name]:5.2f} s CPU)")
    total = sum(sizes.values())
    fonts = sizes.get("font", 0)
    parts = ", ".join(f"{k} {v / 1024:.1f}" for k, v in sorted(sizes.items()))
    verdict = "meets" if total / 1024 <= PAGE_GOAL_KB else "MISSES"
    print(f"page {page}: {total / 1024:.1f} KB gzip in all ({parts}); "
          f"{(total - fonts) / 1024:.1f} KB without fonts; goal < {PAGE_GOAL_KB:.0f} KB: {verdict}")


# ------------------------------------------------------------------ issue #45's table
#
# The author's figures, each for this tree and for a second one (--against: main, say, unpacked
# with `git archive main | tar -x -C DIR` and a node_modules link), taken alternately in one run so
# that the machine's load falls on both alike, and real Quarto's cold render of the same sources
# once (a `quarto` on PATH; skipped without one, or with --no-quarto):
#   first build ever         a fresh copy, an empty per-user cache (the widget runtime is made)
#   cold HTML build          a fresh copy, the per-user cache as the first build left it
#   nothing changed          that copy again (median of 3), as a process
#   one word of prose        one word in the GPU chapter outside any exercise (median of 2)
TABLE_GOALS = {"first build ever": "vs Quarto >= 4x", "cold html": "vs Quarto >= 6x",
               "nothing changed": "<= 1 s", "one word": "<= 2 s"}
WORD = ("this is a lot of parallelism", "this is plenty of parallelism")


def quarto_cold(src: Path, tmp: Path) -> float | None:
    quarto = shutil.which("quarto")
    if not quarto:
        return None
    root = copy_book(src, tmp / "quarto" / "book")
    t = time.perf_counter()
    proc = subprocess.run([quarto, "render", "--to", "html"], cwd=root, capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        print(f"  quarto render failed ({proc.returncode}): {proc.stderr[-600:]}", file=sys.stderr)
        return None
    return seconds


def one_word(root: Path, n: int) -> None:
    gpu = root / "chapters" / "gpu.qmd"
    text = gpu.read_text()
    old, new = (WORD if n % 2 == 0 else WORD[::-1])
    if old not in text:
        sys.exit(f"benchmarks/build_bench.py: '{old}' is not in {gpu}: choose another word (WORD)")
    gpu.write_text(text.replace(old, new, 1))


def table(trees: dict[str, Path], tmp: Path, with_quarto: bool) -> None:
    html = ("--to", "html")
    got: dict[str, dict[str, float]] = {name: {} for name in trees}
    loads: dict[str, list[float]] = {}

    def timed(figure: str, name: str, seconds: float) -> None:
        got[name][figure] = seconds
        loads.setdefault(figure, []).append(os.getloadavg()[0])
        print(f"    {name}: {figure} {seconds:.2f} s (load {os.getloadavg()[0]:.1f})", file=sys.stderr)

    roots = {}
    for name, src in trees.items():
        print(f"  {name}: first build ever …", file=sys.stderr)
        root = copy_book(src, tmp / name / "first" / "book")
        timed("first build ever", name, run_build(root, *html, name=f"{name} first", own=True))
    for name, src in trees.items():
        print(f"  {name}: cold, warm per-user cache …", file=sys.stderr)
        root = roots[name] = copy_book(src, tmp / name / "cold" / "book")
        env = {"BOOKBUILD_CACHE_DIR": str(tmp / name / "first" / "user-cache")}
        timed("cold html", name, run_build(root, *html, name=f"{name} cold", env=env, own=True))
    for figure, edit, n in (("nothing changed", None, 3), ("one word", one_word, 2)):
        runs: dict[str, list[float]] = {name: [] for name in trees}
        for k in range(n):
            for name in trees:
                if edit:
                    edit(roots[name], k)
                env = {"BOOKBUILD_CACHE_DIR": str(tmp / name / "first" / "user-cache")}
                runs[name].append(run_build(roots[name], *html, name=f"{name} {figure}", env=env, own=True))
        for name in trees:
            timed(figure, name, statistics.median(runs[name]))
    quarto = None
    if with_quarto:
        print("  real Quarto: quarto render --to html …", file=sys.stderr)
        quarto = quarto_cold(next(iter(trees.values())), tmp)
        loads.setdefault("quarto", []).append(os.getloadavg()[0])
    names = list(trees)
    print(f"issue #45's table ({', '.join(f'{n}: {p}' for n, p in trees.items())}); {os.cpu_count()} CPUs")
    print(f"{'figure':28} " + " ".join(f"{n:>22}" for n in names) + f" {'goal':>18}  load average")
    for figure in ("first build ever", "cold html", "nothing changed", "one word"):
        cells = []
        for n in names:
            v = got[n][figure]
            cell = f"{v:.2f} s"
            if figure in ("first build ever", "cold html") and quarto:
                cell = f"{quarto / v:.2f}x ({v:.1f} s)"
            cells.append(f"{cell:>22}")
        load = ", ".join(f"{x:.1f}" for x in loads[figure])
        print(f"{figure:28} " + " ".join(cells) + f" {TABLE_GOALS[figure]:>18}  {load}")
    if quarto:
        print(f"real Quarto 1.10 `quarto render --to html`, cold: {quarto:.1f} s (load {loads['quarto'][0]:.1f})")
    elif with_quarto:
        print("real Quarto: none on PATH (or it failed): the ratios are not shown")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--book", choices=("both", "real", "fixture", "table"), default="both",
                    help="table: issue #45's figures (with --against, side by side)")
    ap.add_argument("--against", metavar="TREE", help="with --book table: a second source tree (main's)")
    ap.add_argument("--no-quarto", action="store_true", help="with --book table: do not run real Quarto")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="build-bench-"))
    print(f"copies in {tmp}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    try:
        if args.book == "table":
            trees = {"this tree": REPO}
            if args.against:
                trees = {"against": Path(args.against).resolve(), **trees}
            table(trees, tmp / "table", not args.no_quarto)
            return
        if args.book in ("both", "real"):
            real_book(REPO, tmp / "real")
        if args.book in ("both", "fixture"):
            fixture_book(FIXTURE, tmp / "fixture")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
