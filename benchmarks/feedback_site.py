"""What `python -m feedback serve --site _book` sends a reader, against a plain file server.

For one chapter, the page and every file it links (stylesheets, scripts, figures, fonts named in the
stylesheets are not followed): bytes on the wire on a first visit (Accept-Encoding: br, gzip), the
requests a second visit makes and how many come back 304, and the Pyodide wasm's bytes. Then the
latency of the chapter page, interleaved A/B against `python -m http.server` on the same folder.

    python benchmarks/feedback_site.py [--site _book] [--page chapters/roofline.html] [--rounds 200]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from feedback_common import REPO, free_port, temp_db_url

ASSET = re.compile(r'(?:href|src)="([^"#:?]+\.(?:css|js|mjs|svg|png|woff2))"')


def start(cmd: list[str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(150):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"server on port {port} did not start: {' '.join(cmd)}")


def get(url: str, headers: dict) -> tuple[int, int, dict]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as res:
            return res.status, len(res.read()), {k.lower(): v for k, v in res.headers.items()}
    except urllib.error.HTTPError as err:
        return err.code, len(err.read()), {k.lower(): v for k, v in err.headers.items()}


def visit(base: str, page: str) -> dict:
    accept = {"Accept-Encoding": "br, gzip"}
    status, size, headers = get(f"{base}/{page}", accept)
    html = (Path(ARGS.site) / page).read_text(encoding="utf-8")
    folder = page.rsplit("/", 1)[0] + "/" if "/" in page else ""
    assets = sorted({str(Path(folder + a)).replace("\\", "/") for a in ASSET.findall(html)})
    total, validators = size, {page: headers}
    for asset in assets:
        _, n, h = get(f"{base}/{asset}", accept)
        total += n
        validators[asset] = h
    again = {"304": 0, "200": 0}
    for path, h in validators.items():
        cond = dict(accept)
        if h.get("etag"):
            cond["If-None-Match"] = h["etag"]
        if h.get("last-modified"):
            cond["If-Modified-Since"] = h["last-modified"]
        status, _, _ = get(f"{base}/{path}", cond)
        again[str(status) if status in (200, 304) else "200"] += 1
    wasm = get(f"{base}/pyodide/pyodide.asm.wasm", accept)[1] if (Path(ARGS.site) / "pyodide").is_dir() else 0
    return {"files": 1 + len(assets), "bytes": total, "again": again, "wasm": wasm}


def latency(base: str, page: str) -> float:
    t = time.perf_counter()
    get(f"{base}/{page}", {"Accept-Encoding": "br, gzip"})
    return (time.perf_counter() - t) * 1000


def main() -> None:
    site_port, plain_port = free_port(), free_port()
    site = start([sys.executable, "-m", "feedback", "serve", "--site", ARGS.site, "--port", str(site_port),
                  "--db", temp_db_url("feedback-site-bench-"), "--rate-limit", "off"], site_port)
    plain = start([sys.executable, "-m", "http.server", "-d", ARGS.site, "--bind", "127.0.0.1", str(plain_port)], plain_port)
    try:
        servers = {"serve --site": f"http://127.0.0.1:{site_port}", "http.server": f"http://127.0.0.1:{plain_port}"}
        for name, base in servers.items():
            v = visit(base, ARGS.page)
            print(f"{name:>13}: first visit {v['files']} files, {v['bytes'] / 1024:.0f} KiB on the wire; "
                  f"second visit {v['again']['304']} x 304, {v['again']['200']} x 200; "
                  f"Pyodide wasm {v['wasm'] / 1e6:.2f} MB")
        times = {name: [] for name in servers}
        for _ in range(ARGS.rounds):  # interleaved, so both see the same machine load
            for name, base in servers.items():
                times[name].append(latency(base, ARGS.page))
        for name, t in times.items():
            print(f"{name:>13}: {ARGS.page} p50 {statistics.median(t):.2f} ms, "
                  f"p95 {statistics.quantiles(t, n=20)[18]:.2f} ms over {ARGS.rounds} requests")
    finally:
        for proc in (site, plain):
            proc.terminate()
            proc.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", default=str(REPO / "_book"))
    parser.add_argument("--page", default="chapters/roofline.html")
    parser.add_argument("--rounds", type=int, default=200)
    ARGS = parser.parse_args()
    main()
