# Set-up and checks. `make demo` and `make test` each prepare everything on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup headers demo test bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first: the CPU wheel on disk; anything else would pull GBs of CUDA packages.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP) headers

headers: $(STAMP)
	$(PY) -c "from tilelang_tt.tools.fetch_tt_metal import main; main()"

demo: setup
	$(PY) examples/gemm.py --out out/gemm --run

# pytest exits 5 when it collects no tests; an empty suite is not a failure.
test: setup
	$(PY) -m pytest -q -p no:cacheprovider tests || [ $$? -eq 5 ]

bench: setup
	$(PY) benchmarks/run.py

clean:
	rm -rf out build
