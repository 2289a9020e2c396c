# Set-up and checks. `make demo` and `make test` each prepare everything on a fresh machine.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# ttnn ships for Python 3.12 only: a second venv for the hardware path (tests/hardware runs it).
PYTHON312 ?= python3.12
VENV312 := .venv312
STAMP312 := $(VENV312)/.installed

.PHONY: setup headers demo test bench examples outside clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch first: the CPU wheel on disk; anything else would pull GBs of CUDA packages.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

# A Python 3.12: $(PYTHON312), else an installed pyenv 3.12.x, else one installed with pyenv or apt.
$(STAMP312):
	test -x $(VENV312)/bin/python || { \
	  if ! $(PYTHON312) --version >/dev/null 2>&1; then \
	    if command -v pyenv >/dev/null 2>&1; then \
	      v=$$(pyenv versions --bare | grep -E '^3\.12\.[0-9]+$$' | tail -n 1); \
	      [ -n "$$v" ] || { pyenv install 3.12 && v=$$(pyenv versions --bare | grep -E '^3\.12\.[0-9]+$$' | tail -n 1); }; \
	      export PYENV_VERSION=$$v; \
	    else apt-get install -y python3.12 python3.12-venv; fi; \
	  fi; \
	  $(PYTHON312) -m venv $(VENV312); }
	$(VENV312)/bin/python -m pip install -q --upgrade pip
	$(VENV312)/bin/python -m pip install -q ttnn==0.81.1
	touch $(STAMP312)

setup: $(STAMP) headers

headers: $(STAMP)
	$(PY) -c "from tilelang_tt.tools.fetch_tt_metal import main; main()"

demo: setup
	$(PY) examples/gemm.py --out out/gemm --run
	$(PY) examples/llama_layer.py --out out/llama_layer

# pytest exits 5 when it collects no tests; an empty suite is not a failure. One pytest-xdist worker
# per core, each test file on one worker (its module fixtures built once).
test: setup $(STAMP312)
	$(PY) -m pytest -q -p no:cacheprovider -n auto --dist loadfile tests || [ $$? -eq 5 ]

bench: setup
	$(PY) benchmarks/run.py

# TileLang's own examples (tests/examples/catalogue.py): what runs, what is refused and why.
examples: setup
	$(PY) -m benchmarks.examples

# TileLang kernels from other projects (tests/outside/catalogue.py): the same table.
outside: setup
	$(PY) -m benchmarks.outside

clean:
	rm -rf out build
