# The two commands: `make test` and `make book` (see README.md).
# Both create the virtual environment .venv on first use and reinstall into it whenever
# pyproject.toml changes. Only python3 (3.10+) with venv and pip is assumed; MathJax for
# the book comes from the npm registry (scripts/fetch_mathjax.sh).

VENV    := .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
MATHJAX := book/_mathjax_extra/_static/mathjax/tex-mml-chtml.js

.PHONY: test book browser-check browser-check-course course course-smoke env clean distclean

# The browser check's own test (tests/test_browser_check.py) needs Debian's chromium and
# chromium-driver: installed here when missing and we are root with apt-get; else that test skips.
test: $(STAMP)
	@scripts/ensure_chromium.sh --optional
	$(PYTHON) -m pytest -q

# -W: warnings (broken references, unknown citations, ...) are errors; -n: nitpicky;
# --keep-going: report every warning before failing. _config.yml sets execute_notebooks:
# force and nb_execution_raise_on_error, so every chapter runs and a failing cell fails.
book: $(STAMP) $(MATHJAX)
	$(VENV)/bin/jupyter-book build . --all -W -n --keep-going
	@echo "Book: _build/html/index.html"

# Every page of the built book in headless Chromium (scripts/browser_check.py): math typeset,
# nothing fetched from outside the book, no console error, images loaded, no horizontal
# overflow at 1280 px, internal links and anchors resolve. Screenshots in _build/screenshots.
# Builds the book first only when there is none; after editing the book, run `make book`.
browser-check: $(STAMP) | _build/html/index.html
	scripts/ensure_chromium.sh
	$(PYTHON) scripts/browser_check.py --html _build/html --screenshots _build/screenshots

_build/html/index.html:
	$(MAKE) book

# The course edition (scripts/course.py, scripts/course_pdf.py), next to the teacher book that
# `make book` builds in _build/html: the student edition, solutions removed (each replaced by how
# to check an answer with calnotes.book.exercises.check), built like `make book` (-W -n) into
# _build/course/html; every chapter as a notebook for plain Jupyter (numbers filled in, an answer
# and a check cell per exercise, kernel `calnotes`; no glue plumbing, runs in plain Jupyter) in
# _build/course/notebooks; the student edition printed by headless Chromium, offline, as a course
# reader to _build/course/calnotes.pdf: title page, contents with page numbers, bookmarks by part,
# page numbers, no web interface (code toggles, rerun boxes), dropdowns open; without the
# reference appendices (ledger, benchmarks, API: `make course COURSE_PDF=--with-reference` prints
# them too). `make browser-check-course` checks the student HTML. Pages that the teacher build ran
# after their last edit are not run again (their outputs are reused: `make book course` executes
# each chapter once); without a teacher build every page is executed. The course extra adds
# JupyterLab and the kernel.
COURSE_STAMP := $(VENV)/.installed-course
COURSE_PDF   :=

course: $(COURSE_STAMP) $(MATHJAX)
	scripts/ensure_chromium.sh
	$(PYTHON) scripts/course.py
	$(PYTHON) scripts/course_pdf.py --verify $(COURSE_PDF)
	@echo "Course: _build/course/html/index.html, _build/course/notebooks/, _build/course/calnotes.pdf"

# The browser check (as `make browser-check`) over the student edition that `make course` built.
browser-check-course: $(STAMP) | _build/course/html/index.html
	scripts/ensure_chromium.sh
	$(PYTHON) scripts/browser_check.py --html _build/course/html --screenshots _build/course/screenshots \
	    --screenshot-pages book/intro.html book/appendix/papers_hold.html book/appendix/errata.html

_build/course/html/index.html:
	$(MAKE) course

# A few minutes, for CI (after `make book`, whose executed chapters it reuses): the student
# edition of the intro, one chapter and the two pages that sum up what holds (Do the papers
# hold?, Errata: their Markdown outputs are tables, math and references), solutions stripped
# from every page; the browser check over those pages (--partial: links to pages left out of this
# reduced build are let pass); every chapter's student notebook (converted, checked for leftover
# MyST and glue); and a PDF of the intro whose every page must carry its page number; in
# _build/course-smoke.
SMOKE_PAGES := book/foundations/measures book/appendix/papers_hold book/appendix/errata
course-smoke: $(COURSE_STAMP) $(MATHJAX) | _build/html/index.html
	scripts/ensure_chromium.sh
	$(PYTHON) scripts/course.py --out _build/course-smoke --only $(SMOKE_PAGES)
	$(PYTHON) scripts/browser_check.py --html _build/course-smoke/html --partial \
	    --pages index.html book/intro.html $(addsuffix .html,$(SMOKE_PAGES))
	$(PYTHON) scripts/course_pdf.py --html _build/course-smoke/html --toc _build/course-smoke-src/_toc.yml \
	    --pages book/intro --out _build/course-smoke/smoke.pdf --verify

$(COURSE_STAMP): $(STAMP) pyproject.toml
	$(VENV)/bin/uv pip install --compile-bytecode -p $(VENV) -e '.[course]'
	$(PYTHON) -m ipykernel install --sys-prefix --name calnotes --display-name "calnotes (Python 3)"
	touch $@

env: $(STAMP)

# uv (from PyPI) installs the book toolchain in seconds; pip takes over a minute.
$(VENV)/bin/uv:
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip --version >/dev/null 2>&1 || $(PYTHON) -m ensurepip --upgrade
	$(PYTHON) -m pip install --quiet uv

# --compile-bytecode: write the .pyc files at install time; with PYTHONDONTWRITEBYTECODE set (as on
# our machines) Python would otherwise recompile scipy & co. on every start (about 1 s per process).
# Reinstall when pyproject.toml changes, and when a package __init__.py appears or changes: the
# editable install records which folders were namespace packages (no __init__.py) at install time.
$(STAMP): pyproject.toml $(wildcard calnotes/__init__.py calnotes/*/__init__.py) | $(VENV)/bin/uv
	$(VENV)/bin/uv pip install --compile-bytecode -p $(VENV) -e '.[book,test,data,scale,browser]'
	touch $@

$(MATHJAX): scripts/fetch_mathjax.sh
	scripts/fetch_mathjax.sh

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

# Also remove the environment and the downloaded MathJax.
distclean: clean
	rm -rf $(VENV) book/_mathjax_extra *.egg-info
