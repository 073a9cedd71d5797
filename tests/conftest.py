"""Suite-wide fixtures. Playwright's sync API allows one driver per process, so every browser test
shares this one Debian Chromium."""
import os
from pathlib import Path

import pytest

# Builds in the tests get their own Jupyter kernel, stopped at the end, rather than leaving one
# running for five minutes per temporary book; tests/build/test_kernel_daemon.py covers the kept one.
os.environ.setdefault("BOOKBUILD_EXECUTE_DAEMON", "0")

# Numba's CUDA runs on its CPU simulator in every test (no test has a GPU): numba.cuda reads this
# once, at its first import, so it is set before any test module imports numba (else the Numba
# cross-check, tests/kernels/test_numba_sim.py, found numba.cuda already imported without it).
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

# The per-user build cache (usercache.user_cache_dir: the widget runtime, the packed wasm) is
# one temporary folder for the whole session: the suite neither reads nor fills a real user's, so
# it runs the same on a fresh machine (CI) as on a developer's.
import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

USER_CACHE = tempfile.mkdtemp(prefix="bookbuild-test-cache-")
os.environ["BOOKBUILD_CACHE_DIR"] = USER_CACHE
atexit.register(shutil.rmtree, USER_CACHE, True)

from webwatch import CHROMIUM, CHROMIUM_ARGS  # noqa: E402,F401  (tests/ is on sys.path: rootdir conftest)


@pytest.fixture(scope="session")
def playwright_driver():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no {CHROMIUM}")
    with sync_api.sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def chromium(playwright_driver):
    browser = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


# WebGPU on SwiftShader, the CPU's software GPU: what a headless test can run (the device probe).
CHROMIUM_WEBGPU_ARGS = [a for a in CHROMIUM_ARGS if a != "--disable-gpu"] + [
    "--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader", "--enable-unsafe-swiftshader"]


@pytest.fixture(scope="session")
def chromium_webgpu(playwright_driver):
    browser = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_WEBGPU_ARGS)
    yield browser
    browser.close()


# ---- Skips under CI. `make test` prints every skip and its reason (pytest -rs). Under CI (CI=true,
# as .ci/run runs it, after scripts/install.sh has installed every tool the suite uses) a skipped
# test is a failure, unless its reason is something CI's machine genuinely lacks: these patterns.
import re  # noqa: E402

CI_MAY_SKIP = (
    re.compile(r"\bquarto\b.*(not installed|not on PATH|cannot be installed)", re.I),  # no quarto on PATH (docs/building.md: build one with ../shared/tools/quarto)
    re.compile(r"\bno (NVIDIA |CUDA )?GPU\b", re.I),            # device checks, on a machine with no accelerator
    re.compile(r"\binside Pyodide\b|\(Pyodide\)"),              # the calc tests when they run in Pyodide itself
)


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not (under_ci() and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = skip_reason(report)
    if any(p.search(reason) for p in CI_MAY_SKIP):
        return
    report.outcome = "failed"
    report.longrepr = (f"skipped under CI: {reason}\nCI runs every test its machine can (scripts/install.sh installs "
                       "the tools); a skip is allowed only for what CI cannot have (tests/conftest.py, CI_MAY_SKIP)")
