"""``python3 -m bookbuild.html.offline``: the project's last post-render script (Quarto sets
QUARTO_PROJECT_OUTPUT_DIR and runs it in the project folder; bookbuild does the same)."""
import os
import sys
from pathlib import Path

from ...errors import BuildError
from ...project import config as config_mod
from . import write_offline

if __name__ == "__main__":
    root = Path.cwd()
    cfg = config_mod.load(root)
    site = Path(os.environ.get("QUARTO_PROJECT_OUTPUT_DIR") or cfg.out)
    site = site if site.is_absolute() else root / site
    try:
        info = write_offline(site, cfg.title, cfg.raw.get("description"), root)
    except BuildError as err:
        sys.exit(str(err))
    if info:
        print(f"offline: {info['files']} files (the runtime's among them), {info['bytes']} bytes + {info['runtime_bytes']} of runtime, build {info['build']}")
