# Two entry points (see README): `make book` builds HTML + PDF into _book/, `make test` runs every test.
PY ?= python3

.PHONY: install book html pdf test check preview bench golden busy clean

install: .install.stamp
.install.stamp: requirements.txt package.json package-lock.json scripts/install.sh
	bash scripts/install.sh
	@touch $@

book: install
	$(PY) -m bookbuild build

html: install
	$(PY) -m bookbuild build --to html

pdf: install
	$(PY) -m bookbuild build --to pdf

check: install
	$(PY) -m bookbuild check

preview: install
	$(PY) -m bookbuild preview

# -rs: the summary lists every skipped test and why (and the last line counts them); under CI=true a
# skip for anything but what CI cannot have fails the run (tests/conftest.py).
test: install
	$(PY) -m pytest -q -p no:cacheprovider -rs

# The suite three times in a row beside two busy processes (issue 35's "passes with the CPUs loaded").
busy: install
	$(PY) benchmarks/busy.py --repeat 3

# Rewrite the golden files from the current filters (never in CI); then read `git diff tests/`.
golden: install
	$(PY) -m tests.update_golden

bench: install
	$(PY) benchmarks/build_bench.py
	$(PY) benchmarks/widgets_bench.py
	$(PY) benchmarks/warpsim_bench.py
	$(PY) benchmarks/device_probe_bench.py

clean:
	rm -rf _book .bookcache .install.stamp
