"""The per-user cache's entries (bookbuild.cache.shared_entry): made once per key, and never
seen half-written, whatever other builds on the machine do at the same moment."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from bookbuild.cache import shared_entry, user_cache_dir

REPO = Path(__file__).resolve().parents[2]

# A maker in another process: writes part one, says so, waits, writes part two; and counts its runs.
MAKER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from bookbuild.cache import shared_entry
    final, runs, pause = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
    def make(tmp):
        with open(runs, "a") as f:
            f.write("run\\n")
        (tmp / "one").write_text("1" * 100_000)
        print("half", flush=True)
        time.sleep(pause)
        (tmp / "two").write_text("2" * 100_000)
    entry, fresh = shared_entry(final, make)
    print("made" if fresh else "found", sorted(p.name for p in entry.iterdir()), flush=True)
""")


def maker(final: Path, runs: Path, pause: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", MAKER, str(final), str(runs), str(pause)], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)


def test_user_cache_dir_is_overridable_and_isolated_in_tests(tmp_path, monkeypatch):
    assert user_cache_dir() == Path(os.environ["BOOKBUILD_CACHE_DIR"])     # set by tests/conftest.py
    assert "bookbuild-test-cache-" in str(user_cache_dir())
    monkeypatch.delenv("BOOKBUILD_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert user_cache_dir() == tmp_path / "bookbuild"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert user_cache_dir() == Path.home() / ".cache" / "bookbuild"


def test_an_entry_is_made_once(tmp_path):
    calls = []

    def make(tmp):
        calls.append(tmp)
        (tmp / "out").write_text("x")

    final = tmp_path / "cache" / "key"
    assert shared_entry(final, make) == (final, True)
    assert shared_entry(final, make) == (final, False)
    assert len(calls) == 1 and (final / "out").read_text() == "x"


def test_a_killed_maker_leaves_no_entry_and_the_next_one_makes_it_whole(tmp_path):
    final, runs = tmp_path / "cache" / "key", tmp_path / "runs"
    proc = maker(final, runs, 30)
    assert proc.stdout.readline().strip() == "half"         # part one written, part two not yet
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not final.exists()                                # nothing half-written to be found
    assert list(final.parent.glob("key.tmp-*"))              # only its temporary folder
    proc = maker(final, runs, 0)
    assert proc.communicate()[0].split("\n")[-2] == "made ['one', 'two']"
    assert (final / "two").stat().st_size == 100_000
    assert not list(final.parent.glob("key.tmp-*"))          # swept


def test_two_builds_at_once_make_it_once_and_both_see_all_of_it(tmp_path):
    final, runs = tmp_path / "cache" / "key", tmp_path / "runs"
    first = maker(final, runs, 1.5)
    assert first.stdout.readline().strip() == "half"
    second = maker(final, runs, 0)                           # starts while the first is half-way
    time.sleep(0.3)
    assert not final.exists()
    out_first, out_second = first.communicate()[0], second.communicate()[0]
    assert out_first.strip().endswith("made ['one', 'two']")
    assert out_second.strip() == "found ['one', 'two']"      # waited for the first, did not redo it
    assert runs.read_text() == "run\n"
