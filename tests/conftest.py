"""Suite-wide fixtures. Playwright's sync API allows one driver per process, so every browser test
shares this one Debian Chromium."""
import os
from pathlib import Path

import pytest

# Builds in the tests get their own Jupyter kernel, stopped at the end, rather than leaving one
# running for five minutes per temporary book; tests/build/test_kernel_daemon.py covers the kept one.
os.environ.setdefault("BOOKBUILD_EXECUTE_DAEMON", "0")

# The per-user build cache (bookbuild.cache.user_cache_dir: the widget runtime, the packed wasm) is
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
