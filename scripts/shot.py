"""Screenshot pages of a built site in Debian's headless Chromium, to look at them.

    python scripts/shot.py _book chapters/roofline.html /tmp/roofline.png [--width 1400] [--dark] [--full]
"""
from __future__ import annotations

import argparse
import functools
import http.server
import threading

from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("site")
    ap.add_argument("page")
    ap.add_argument("out")
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=1000)
    ap.add_argument("--dark", action="store_true")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--wait", type=float, default=0.5, help="seconds to wait after load")
    args = ap.parse_args()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=args.site)
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": args.width, "height": args.height},
                                color_scheme="dark" if args.dark else "light")
        page.on("console", lambda m: print("console:", m.type, m.text) if m.type in ("error", "warning") else None)
        page.goto(f"http://127.0.0.1:{server.server_port}/{args.page}")
        page.wait_for_timeout(args.wait * 1000)
        page.screenshot(path=args.out, full_page=args.full)
        browser.close()
    server.shutdown()


if __name__ == "__main__":
    main()
