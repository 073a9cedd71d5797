"""The project's ``pre-render:`` and ``post-render:`` scripts (``_quarto.yml``), run as Quarto runs them."""
from __future__ import annotations

import time
from typing import Callable

from . import config as config_mod
from ..errors import BuildError, line_of

Progress = Callable[[str, str, float | None], None]   # build.Progress


def run_scripts(cfg: config_mod.BookConfig, stage: str, env: dict[str, str], progress: Progress,
                commands: list[str] | None = None) -> None:
    """``project: pre-render:`` / ``post-render:`` commands, run as Quarto runs them (runScripts in
    src/command/render/project.ts): in the project folder, split like a shell command line, with
    QUARTO_PROJECT_OUTPUT_DIR, QUARTO_PROJECT_RENDER_ALL and the input or output files in the
    environment; a command that fails stops the build."""
    import os
    import shlex
    import subprocess
    if commands is None:
        commands = cfg.pre_render if stage == "pre-render" else cfg.post_render
    for command in commands:
        t = time.perf_counter()
        full = {**os.environ, "QUARTO_PROJECT_OUTPUT_DIR": str(cfg.out), "QUARTO_PROJECT_RENDER_ALL": "1", **env}
        try:
            proc = subprocess.run(shlex.split(command), cwd=cfg.root, env=full, capture_output=True, text=True)
        except OSError as exc:
            proc = subprocess.CompletedProcess(command, 127, "", str(exc))
        if proc.returncode != 0:
            config_path = cfg.root / config_mod.CONFIG_NAME
            raise BuildError(f"{stage} script `{command}` failed (exit status {proc.returncode})", config_path,
                             line_of(config_path.read_text(encoding="utf-8"), command),
                             detail=(proc.stdout + proc.stderr)[-2000:])
        progress(stage, command, time.perf_counter() - t)
