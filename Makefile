# Two commands do all the set-up from a fresh clone (see README.md):
#   make book   - create .venv if needed, execute every notebook, build the HTML book
#   make test   - create .venv if needed, run the test suite
# Only the package registries are reached: PyPI (pip) and npm (MathJax).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
HARDWARE ?= a100-80gb
# Test processes (pytest-xdist): the suite is serial Python, so two processes use both cores of a CI machine
# (a fresh clone's pytest: 260 s with one, 141 s with two); TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= 2
BOOK := book
HTML := $(BOOK)/_build/html
MATHJAX_VERSION := 3.2.2
NPM_PREFIX := build/npm
MATHJAX := $(BOOK)/_mathjax/_static/mathjax/es5/tex-chtml.js
# The calculator page's script, printed from the derivations (lgacc.book.jsgen); html_extra_path copies
# book/_calculator into the HTML root (outside book/_static, whose .js files go into every page).
CALCULATOR := $(BOOK)/_calculator/_static/lgacc-calculator.js
# The schedule explorer's timelines, precomputed by the simulator (lgacc.book.jsgen.schedules).
SCHEDULES_JS := $(BOOK)/_calculator/_static/lgacc-schedules.js

.PHONY: book test fuzz notebooks calculator check-book venv clean

# The virtual environment is (re)built when missing or when pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m ipykernel install --sys-prefix --name lgacc --display-name "Python (lgacc)" >/dev/null
	touch $@

venv: $(STAMP)

# MathJax 3 from the npm registry, kept outside book/_static (Jupyter Book injects
# every .js found there into every page). html_extra_path copies book/_mathjax into
# the HTML root, so the files land in _static/mathjax/ where mathjax_path points.
$(MATHJAX):
	mkdir -p $(NPM_PREFIX)
	npm install --prefix $(NPM_PREFIX) --no-audit --no-fund --no-save --loglevel=error mathjax@$(MATHJAX_VERSION)
	rm -rf $(BOOK)/_mathjax && mkdir -p $(BOOK)/_mathjax/_static/mathjax
	cp -R $(NPM_PREFIX)/node_modules/mathjax/es5 $(BOOK)/_mathjax/_static/mathjax/es5

notebooks: $(STAMP)
	$(BIN)/python -m lgacc.book.run --hardware $(HARDWARE)

calculator: $(STAMP)
	$(BIN)/python -m lgacc.book.jsgen $(CALCULATOR) --hardware $(HARDWARE)
	$(BIN)/python -m lgacc.book.jsgen.schedules $(SCHEDULES_JS)

# The HTML is built aside (build/book-next) and swapped in once complete, like the notebook phase: an
# interrupted or failed build leaves the previous book/_build whole.  It starts from a copy of the previous
# build when that was made from the same configuration, extensions, package and versions (lgacc.book.htmlbuild),
# so Sphinx reads and writes only the pages that changed; the calculator's script is copied in every time
# (Sphinx copies html_extra_path only when some page is out of date).
BOOK_NEXT := build/book-next
book: notebooks $(MATHJAX) calculator
	rm -rf $(BOOK_NEXT)
	$(BIN)/python -m lgacc.book.htmlbuild seed $(BOOK) $(BOOK_NEXT)
	$(BIN)/jupyter-book build $(BOOK) -W -n --keep-going --path-output $(BOOK_NEXT)
	cp -R $(BOOK)/_calculator/. $(BOOK_NEXT)/_build/html/
	rm -rf $(BOOK)/_build.old
	if [ -e $(BOOK)/_build ]; then mv $(BOOK)/_build $(BOOK)/_build.old; fi
	mv $(BOOK_NEXT)/_build $(BOOK)/_build
	rm -rf $(BOOK)/_build.old $(BOOK_NEXT)
	@echo "Book built for hardware $(HARDWARE): $(abspath $(HTML))/index.html"

# The quick suite (under 5 minutes on 2 cores): everything but the property-based fuzz suites (make fuzz)
# and the checks of the built book in a browser (make check-book); .ci/run runs all three.
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) -m "not fuzz and not book"

fuzz: $(STAMP)
	$(BIN)/python -m pytest -m fuzz

# Checks of the built book in headless Chromium at 1400 px and 390 px (needs `make book` first);
# a full-page screenshot of every page at each width is kept in $(SCREENSHOTS) (a CI artifact;
# .ci/run passes build/screenshots/<spec>/ for each spec it builds). Only the folder's own PNGs
# are replaced, so the other specs' subfolders survive a check of the default build.
SCREENSHOTS ?= build/screenshots
check-book: $(STAMP)
	mkdir -p $(SCREENSHOTS) && rm -f $(SCREENSHOTS)/*.png
	LGACC_REQUIRE_BOOK=1 LGACC_SCREENSHOTS="$(abspath $(SCREENSHOTS))" $(BIN)/python -m pytest -m book tests/book
	@echo "Screenshots of every page: $(abspath $(SCREENSHOTS))/"

clean:
	rm -rf $(BOOK)/_build $(BOOK)/_build.old $(BOOK)/generated $(BOOK)/.generated.* $(BOOK)/_mathjax $(BOOK)/_calculator build
