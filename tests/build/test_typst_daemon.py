"""The kept typst compiler (bookbuild.pdf.typstd): the next build's PDF is typeset by the process
that typeset the last one, and says so; errors come back as typst's message."""
from __future__ import annotations

import os

import pytest

from bookbuild.pdf import typstd
from bookbuild.execute.kernel import _alive as alive   # reaps a child that exited, as the kernel tests use it
from needs import poppler
from waiting import wait_for_exit


@pytest.fixture
def project(tmp_path):
    yield tmp_path
    key = tmp_path / ".bookcache" / "typst" / "daemon.key"
    pid_file = key.with_name("daemon.pid")
    key.unlink(missing_ok=True)                  # the daemon leaves once its key is gone
    if pid_file.exists():
        pid = int(pid_file.read_text())
        assert wait_for_exit(pid, 30), "the typst daemon did not leave when its key was removed"


def test_the_kept_compiler_typesets_the_next_build(project):
    typ, pdf = project / "book.typ", project / "book.pdf"
    typ.write_text("= A title\n\nFirst text.\n")
    assert typstd.compile_pdf(typ, pdf, project, keep_alive=30) is True
    pid = int((project / ".bookcache" / "typst" / "daemon.pid").read_text())
    assert alive(pid) and pid != os.getpid()
    typ.write_text("= A title\n\nSecond text.\n")
    assert typstd.compile_pdf(typ, pdf, project, keep_alive=30) is True
    assert int((project / ".bookcache" / "typst" / "daemon.pid").read_text()) == pid   # the same process
    text = poppler("pdftotext", str(pdf), "-").stdout        # skips (here, not before) without poppler
    assert "Second text." in text and "First" not in text

    typ.write_text("= A title\n\n#nosuchfunction()\n")
    with pytest.raises(RuntimeError, match="nosuchfunction"):
        typstd.compile_pdf(typ, pdf, project, keep_alive=30)


def test_without_a_daemon_it_compiles_in_process(project):
    typ, pdf = project / "book.typ", project / "book.pdf"
    typ.write_text("Only text.\n")
    assert typstd.compile_pdf(typ, pdf, project, keep_alive=0) is False
    assert pdf.read_bytes().startswith(b"%PDF") and not (project / ".bookcache").exists()
