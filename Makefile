# Two commands for a fresh machine:
#   make demo   set up the package alone, compile the built-in example and print the answer
#   make test   set up and run the test suite (CPU): ruff, then every tier of tests/ but the GPU one
# and `make docs` builds the documentation site into site/. `make test-fast` runs the unit tier alone
# (tests/unit: no compile, under a minute); tests/README.md says what each tier holds.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_CPU ?= torch==2.13.0

# `make compat`: the CPU suite once per supported torch, each in its own venv under COMPAT_DIR (made on
# first use; point COMPAT_DIR at existing venvs named torch-<version> to reuse them). Wheels come from
# PyPI unless COMPAT_PIP says otherwise (e.g. --index-url https://download.pytorch.org/whl/cpu).
COMPAT_TORCH ?= 2.11.0 2.12.1 2.13.0 2.14.1
COMPAT_DIR ?= .compat
COMPAT_PIP ?=
COMPAT_TESTS ?= -m "not gpu" tests
# Every CPU run: a test that hangs fails after TEST_TIMEOUT seconds (fixture setup included: the first test
# of a shared compiled fixture pays for it; the slowest, a notebook, takes about 2 minutes here and twice
# that on a 2-core CI machine), and the 15 slowest tests are listed.
TEST_TIMEOUT ?= 600
# Test files run side by side in TEST_WORKERS processes (pytest-xdist; one file stays in one process, so its
# module fixtures are compiled once): on a 2-core CI machine most of a test's time is one core compiling.
TEST_WORKERS ?= 2
PYTEST_ARGS := --timeout=$(TEST_TIMEOUT) --durations=15 -n $(TEST_WORKERS) --dist loadfile
# `make real-models`: torchvision from PyPI imports only beside its own torch build, so it runs there.
REAL_MODELS_TORCH ?= 2.14.1
TORCHVISION ?= 0.29.1

.PHONY: setup browser demo lint test test-heavy test-fast docs lab gpu-test clean bundle compat real-models figures conformance version-diff

# The package alone (what `make demo` needs: CPU torch, sympy, rich, pygments; ~0.9 GB), then the test
# extra on top of it for `make test` (JupyterLab, Playwright, Ray, transformers, the docs tools).
$(VENV)/.installed-core: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU torch first: a bare `torch` requirement would pull a multi-GB CUDA build.
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install -q $(TORCH_CPU)
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed: $(VENV)/.installed-core
	$(PY) -m pip install -q -e ".[test]"
	touch $@

setup: $(VENV)/.installed

demo: $(VENV)/.installed-core
	$(PY) -m explorer demo

# Browser tests drive Debian's chromium through Playwright (which cannot download its own browser here).
browser:
	@command -v chromium >/dev/null || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

lint: setup
	$(VENV)/bin/ruff check .

test: setup browser lint
	$(PY) -m pytest -m "not gpu and not heavy" $(PYTEST_ARGS) tests

# The slow end-to-end variants `make test` leaves out (AOTInductor packages built and reloaded, Ray, idle workers).
test-heavy: setup
	$(PY) -m pytest -m heavy $(PYTEST_ARGS) tests

test-fast: setup
	$(PY) -m pytest -q $(PYTEST_ARGS) tests/unit

# The documentation site, into site/ (mkdocs.yml; warnings are errors). Notebook pages render the executed
# copies that `make test` leaves in build/notebooks/; notebooks without a fresh copy are executed here.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# docs/figures.md from benchmarks/figures.md and the records scripts write with --record (benchmarks/results/).
figures: $(VENV)/.installed-core
	$(PY) benchmarks/recording.py

$(COMPAT_DIR)/torch-%/.installed: pyproject.toml
	$(PYTHON) -m venv $(COMPAT_DIR)/torch-$*
	$(COMPAT_DIR)/torch-$*/bin/python -m pip install -q --upgrade pip
	$(COMPAT_DIR)/torch-$*/bin/python -c "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$*')" 2>/dev/null \
		|| $(COMPAT_DIR)/torch-$*/bin/python -m pip install -q $(COMPAT_PIP) "torch==$*"
	$(COMPAT_DIR)/torch-$*/bin/python -m pip install -q -e ".[test]"
	touch $@

compat: browser $(foreach v,$(COMPAT_TORCH),$(COMPAT_DIR)/torch-$(v)/.installed)
	@failed=""; for v in $(COMPAT_TORCH); do \
		echo "== torch $$v"; \
		$(COMPAT_DIR)/torch-$$v/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) $(COMPAT_TESTS) || failed="$$failed $$v"; \
	done; \
	if [ -n "$$failed" ]; then echo "compat: failed on torch$$failed"; exit 1; fi; echo "compat: passed on torch $(COMPAT_TORCH)"

$(COMPAT_DIR)/torch-$(REAL_MODELS_TORCH)/.torchvision: $(COMPAT_DIR)/torch-$(REAL_MODELS_TORCH)/.installed
	$(COMPAT_DIR)/torch-$(REAL_MODELS_TORCH)/bin/python -m pip install -q --no-deps "torchvision==$(TORCHVISION)"
	$(COMPAT_DIR)/torch-$(REAL_MODELS_TORCH)/bin/python -m pip install -q pillow
	touch $@

# Every model of benchmarks/real_models.py: outputs match eager, every kernel linked or explained, save/load.
real-models: $(COMPAT_DIR)/torch-$(REAL_MODELS_TORCH)/.torchvision
	PYTHONPATH=$(CURDIR) $(COMPAT_DIR)/torch-$(REAL_MODELS_TORCH)/bin/python benchmarks/real_models.py

# Every kernel's nodes and lines checked against torch's own provenance records: every op of PyTorch's op
# database (first CPU sample), the real models and the programs of docs/ownership.md, then torchvision's
# models on the torch that has torchvision; writes docs/conformance.md (about 10 minutes here). CI runs a
# slice of it (tests/conformance/test_conformance.py); tests/gpu/test_gpu_conformance.py is the GPU's.
conformance: setup $(COMPAT_DIR)/torch-$(REAL_MODELS_TORCH)/.torchvision
	$(PY) -m tests.conformance --all --report docs/conformance.md
	$(COMPAT_DIR)/torch-$(REAL_MODELS_TORCH)/bin/python -m tests.conformance --models resnet18 mobilenet_v3_small \
		--report docs/conformance.md --append

# `make version-diff`: one small program (tests/record_version_traces.py: two Linears, a layer norm, a softmax)
# captured, profiled and checked under torch TORCH_A and TORCH_B, then `python -m explorer diff` of the two
# traces: kernels paired by the user's lines they compute, with code, time and numerics side by side. Each
# torch runs in its venv: the main one for the torch it installs (TORCH_CPU), else COMPAT_DIR/torch-<version>,
# made as `make compat` makes it.
TORCH_A ?= 2.13.0
TORCH_B ?= 2.14.1
VERSION_DIFF_DIR ?= out/version-diff
torch_venv = $(if $(filter torch==$(1),$(TORCH_CPU)),$(VENV),$(COMPAT_DIR)/torch-$(1))
torch_ready = $(if $(filter torch==$(1),$(TORCH_CPU)),$(VENV)/.installed-core,$(COMPAT_DIR)/torch-$(1)/.installed)

version-diff: $(call torch_ready,$(TORCH_A)) $(call torch_ready,$(TORCH_B))
	PYTHONPATH=$(CURDIR) $(call torch_venv,$(TORCH_A))/bin/python -m tests.record_version_traces --out $(VERSION_DIFF_DIR)
	PYTHONPATH=$(CURDIR) $(call torch_venv,$(TORCH_B))/bin/python -m tests.record_version_traces --out $(VERSION_DIFF_DIR)
	$(call torch_venv,$(TORCH_A))/bin/python -m explorer diff $(VERSION_DIFF_DIR)/version_$(TORCH_A).json.gz \
		$(VERSION_DIFF_DIR)/version_$(TORCH_B).json.gz

lab: setup
	$(VENV)/bin/jupyter lab examples/

# Rebuild widgets/static/explorer.{js,css} from widgets/js (needs node + npm); commit the result.
bundle:
	cd widgets && npm ci --no-audit --no-fund && node build.mjs

# On a CUDA machine, with its own python3 (the package's core deps, triton and pytest; no JupyterLab or
# Playwright, which nothing in tests/gpu/ imports): every test marked gpu.
gpu-test:
	PYTHONPATH=$(CURDIR) python3 -m pytest -m gpu tests/gpu

clean:
	rm -rf $(VENV) .pytest_cache $(COMPAT_DIR) site build/notebooks build/docs-notebooks build/mkdocs-jupyter-cache
