# Two commands (see README): `make all` runs every notebook (quick profile), `make test` runs the tests.
# Both create .venv and install the pinned dependencies first when needed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: all test notebooks bench

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

all: $(STAMP)
	$(PY) -m lib.run_all --profile quick

test: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest tests notebooks/00_quickstart.ipynb notebooks/03_budget_law.ipynb \
		--nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

# developers: re-execute the committed notebooks in place after editing their .py sources
notebooks: $(STAMP)
	$(PY) -m lib.run_all --profile quick --in-place
