"""The build's progress display (rich): one line per chapter and stage with its time."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console

from .build import Report, build


def run_build(root: Path, formats: tuple[str, ...], search: bool = True,
              restart_kernel: bool = False) -> Report:
    console = Console(stderr=True, highlight=False)

    def progress(stage: str, item: str, seconds: float | None) -> None:
        timing = f"{seconds:6.2f} s" if seconds else "   cached"
        console.print(f"  [dim]{stage:8}[/dim] {timing}  {item}")

    with console.status("building…"):
        report = build(root, formats, progress=progress, search=search, restart_kernel=restart_kernel)
    t = report.timings
    console.print(f"[bold green]built[/bold green] {len(report.html_pages)} pages"
                  + (f" and {report.pdf.name}" if report.pdf else "")
                  + f" in {t['total']:.2f} s (execute {t.get('execute', 0):.2f}, read {t.get('read', 0):.2f}, "
                  f"html {t.get('html', 0):.2f}, pdf {t.get('pdf', 0):.2f}"
                  + (f", widget runtime {t['runtime']:.2f} beside them" if "runtime" in t else "") + "); "
                  f"{len(report.executed)} executed, {len(report.cached)} from cache"
                  + (f"; Jupyter kernel {report.kernel}" if report.kernel else ""))
    return report
