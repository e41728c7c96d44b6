# Two commands (see README): `make all` runs every notebook (quick profile), `make test` runs the tests.
# Both create .venv and install the pinned dependencies first when needed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all test notebooks bench chromium paper-plan paper

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

all: $(STAMP)
	LOOPS_HEADLESS=1 $(PY) -m lib.run_all --profile quick

# the browser test drives Debian's Chromium (no browser download)
chromium:
	@command -v chromium >/dev/null || ($(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends chromium >/dev/null)

# one 1-thread worker per core (-n auto); --dist loadfile keeps each test file, and each notebook's
# cells, in one worker and in order (nbval needs its cells run in sequence by one kernel)
# lint first (ruff, configured in pyproject.toml); the notebooks' results and figures go to a scratch
# folder (LOOPS_ARTIFACTS), and the tree must be as clean after the suite as before it: the checks never
# rewrite or add a file of the checkout
test: $(STAMP) chromium
	$(PY) -m ruff check lib tests bench searches
	@git status --porcelain --untracked-files=all > .test-status-before 2>/dev/null || true
	LOOPS_HEADLESS=1 OMP_NUM_THREADS=1 LOOPS_ARTIFACTS=$$(mktemp -d) $(PY) -m pytest -n auto --dist loadfile tests \
		notebooks/0*.ipynb --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --durations=25
	@git status --porcelain --untracked-files=all | diff .test-status-before - \
		|| (echo "make test: the suite changed or added files of the checkout (above)"; rm -f .test-status-before; exit 1)
	@rm -f .test-status-before

# developers: re-execute the committed notebooks in place after editing their .py sources
notebooks: $(STAMP)
	$(PY) -m lib.run_all --profile quick --in-place

# the paper profile, planned: every section's paper configs built and trained 2 steps on the CPU,
# with the profile's training FLOPs and estimated H200 hours (bench/paper_plan.py)
paper-plan: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m bench.paper_plan

# the paper profile on a GPU machine: every notebook, missing runs trained on the GPU; stopped runs
# resume from their checkpoints and finished ones load from the store, so rerunning it continues
paper: $(STAMP)
	LOOPS_HEADLESS=1 $(PY) -m lib.run_all --profile paper
