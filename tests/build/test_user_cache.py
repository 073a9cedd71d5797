"""The per-user cache's entries (usercache.shared_entry): made once per key, and never
seen half-written, whatever other builds on the machine do at the same moment."""
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from usercache import shared_entry, user_cache_dir
from waiting import until

REPO = Path(__file__).resolve().parents[2]

# A maker in another process: writes part one, says so, waits (until the test writes a line to its
# stdin, when told to hold), writes part two; and counts its runs.
MAKER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from usercache import shared_entry
    final, runs, hold = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "hold"
    def make(tmp):
        with open(runs, "a") as f:
            f.write("run\\n")
        (tmp / "one").write_text("1" * 100_000)
        print("half", flush=True)
        if hold:
            sys.stdin.readline()
        (tmp / "two").write_text("2" * 100_000)
    entry, fresh = shared_entry(final, make)
    print("made" if fresh else "found", sorted(p.name for p in entry.iterdir()), flush=True)
""")


def maker(final: Path, runs: Path, hold: bool) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", MAKER, str(final), str(runs), "hold" if hold else "go"], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def blocked_on(lock: Path) -> list[int]:
    """The processes waiting for a flock on ``lock`` (the kernel's table, /proc/locks: a waiter's
    line has "->" after its number)."""
    inode = lock.stat().st_ino
    waiting = []
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) > 5 and fields[1] == "->" and fields[2] == "FLOCK" and fields[6].split(":")[-1] == str(inode):
            waiting.append(int(fields[5]))
    return waiting


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
    proc = maker(final, runs, hold=True)
    assert proc.stdout.readline().strip() == "half"         # part one written, part two not yet
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not final.exists()                                # nothing half-written to be found
    assert list(final.parent.glob("key.tmp-*"))              # only its temporary folder
    proc = maker(final, runs, hold=False)
    assert proc.communicate()[0].split("\n")[-2] == "made ['one', 'two']"
    assert (final / "two").stat().st_size == 100_000
    assert not list(final.parent.glob("key.tmp-*"))          # swept


def test_two_builds_at_once_make_it_once_and_both_see_all_of_it(tmp_path):
    final, runs = tmp_path / "cache" / "key", tmp_path / "runs"
    first = maker(final, runs, hold=True)
    assert first.stdout.readline().strip() == "half"         # holds the lock, half-way through
    second = maker(final, runs, hold=False)                  # starts while the first is half-way
    until(lambda: second.pid in blocked_on(final.parent / "key.lock"), 30, "the second maker to wait on the lock")
    assert not final.exists()
    out_first, out_second = first.communicate("go\n")[0], second.communicate()[0]
    assert out_first.strip().endswith("made ['one', 'two']")
    assert out_second.strip() == "found ['one', 'two']"      # waited for the first, did not redo it
    assert runs.read_text() == "run\n"
