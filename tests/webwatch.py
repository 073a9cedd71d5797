"""What a browser page tried to do: requests to any host the test did not allow (aborted) and
console errors. Shared by the browser fixtures of tests/browser and tests/site."""
from __future__ import annotations

CHROMIUM = "/usr/bin/chromium"  # Debian's (apt-get install chromium); Playwright cannot download one here
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


class Watched:
    """A Playwright context and page plus the outside requests and console errors seen so far."""

    def __init__(self, context, page):
        self.context, self.page = context, page
        self.outside: list[str] = []
        self.requests: list[str] = []     # every URL asked for, allowed or not
        self.errors: list[str] = []


# Playwright neither sees nor routes a SharedWorker's requests, so a watched page runs the widgets'
# Python in a dedicated worker (widgets-host.js's fallback, the same code) unless the test asks for
# the shared one (tests/browser/test_widgets_browser.py tests that one's own behaviour).
NO_SHARED_WORKER = "delete window.SharedWorker;"


def watch(context, allow: tuple[str, ...], cls=Watched, shared_worker: bool = False, **extra):
    """Open a page in ``context`` that aborts (and records) every request whose URL does not start
    with one of ``allow`` and records console errors and uncaught exceptions."""
    if not shared_worker:
        context.add_init_script(NO_SHARED_WORKER)
    page = context.new_page()
    w = cls(context, page, **extra)

    def route(r):
        w.requests.append(r.request.url)
        if r.request.url.startswith(allow):
            r.continue_()
        else:
            w.outside.append(r.request.url)
            r.abort()
    context.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and w.errors.append(m.text))
    page.on("pageerror", lambda e: w.errors.append(str(e)))
    return w


# Waits on the page's own state, never on a time (the suite must pass on a slow or busy machine).
# The next two frames have been laid out and painted: whatever the last input or script changed
# is on screen (and layout-shift entries for it are queued).
NEXT_FRAMES = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"
# Every CSS transition or animation now running on the element has finished (getAnimations()
# flushes styles first, so a transition the last change started is included).
ANIMATIONS_DONE = "el => Promise.all(el.getAnimations({subtree: true}).map(a => a.finished)).then(() => true)"
# The page's scroll position has stayed the same for two frames (a smooth scroll has ended).
SCROLL_STILL = """() => new Promise(done => { let last = null, same = 0;
  const tick = () => { const y = [scrollX, scrollY].join(); same = y === last ? same + 1 : 0; last = y;
                       if (same >= 2) done(true); else requestAnimationFrame(tick); };
  tick(); })"""
