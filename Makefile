# Two entry points (see README): `make book` builds HTML + PDF into _book/, `make test` runs every test.
PY ?= python3

.PHONY: install book html pdf test check preview bench clean

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

test: install
	$(PY) -m pytest -q -p no:cacheprovider

bench: install
	$(PY) benchmarks/build_bench.py
	$(PY) benchmarks/widgets_bench.py
	$(PY) benchmarks/warpsim_bench.py

clean:
	rm -rf _book .bookcache .install.stamp
