# The two commands: `make test` and `make book` (see README.md).
# Both create the virtual environment .venv on first use and reinstall into it whenever
# pyproject.toml changes. Only python3 (3.10+) with venv and pip is assumed; MathJax for
# the book comes from the npm registry (scripts/fetch_mathjax.sh).

VENV    := .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
MATHJAX := book/_mathjax_extra/_static/mathjax/tex-mml-chtml.js

.PHONY: test book env clean distclean

test: $(STAMP)
	$(PYTHON) -m pytest -q

# -W: warnings (broken references, unknown citations, ...) are errors; -n: nitpicky;
# --keep-going: report every warning before failing. _config.yml sets execute_notebooks:
# force and nb_execution_raise_on_error, so every chapter runs and a failing cell fails.
book: $(STAMP) $(MATHJAX)
	$(VENV)/bin/jupyter-book build . --all -W -n --keep-going
	@echo "Book: _build/html/index.html"

env: $(STAMP)

# uv (from PyPI) installs the book toolchain in seconds; pip takes over a minute.
$(VENV)/bin/uv:
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip --version >/dev/null 2>&1 || $(PYTHON) -m ensurepip --upgrade
	$(PYTHON) -m pip install --quiet uv

# Reinstall when pyproject.toml changes, and when a package __init__.py appears or changes: the
# editable install records which folders were namespace packages (no __init__.py) at install time.
$(STAMP): pyproject.toml $(wildcard calnotes/__init__.py calnotes/*/__init__.py) | $(VENV)/bin/uv
	$(VENV)/bin/uv pip install -p $(VENV) -e '.[book,test,data,scale]'
	touch $@

$(MATHJAX): scripts/fetch_mathjax.sh
	scripts/fetch_mathjax.sh

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

# Also remove the environment and the downloaded MathJax.
distclean: clean
	rm -rf $(VENV) book/_mathjax_extra *.egg-info
