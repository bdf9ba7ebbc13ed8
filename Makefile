# The course's commands. Each target creates/updates .venv itself, so any one of them works on a
# fresh machine with Python 3.11 and make. See README.md.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Deterministic runs: one thread, fixed hash seed; the stored notebook outputs come from these settings.
export OMP_NUM_THREADS := 1
export MKL_NUM_THREADS := 1
export PYTHONHASHSEED := 0
export JUPYTER_PLATFORM_DIRS := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1
NOTEBOOKS = $(wildcard notebooks/*.ipynb)
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=300 -p no:randomly

.PHONY: help env lab test test-unit test-notebooks test-portable test-slow test-browser notebooks lint format bench data checkpoints clean

help:
	@echo "make lab            set up .venv and my_work/ (your copies of the lessons), open them in JupyterLab"
	@echo "make workspace      copy new lessons into my_work/ (never overwrites); list outdated copies"
	@echo "make reset-lesson LESSON=02   back up my_work/02_*.ipynb and copy the lesson afresh"
	@echo "make test-editions  run every lesson's student edition untouched, top to bottom (about 3 min)"
	@echo "make test           set up .venv and run every test (unit, hygiene, lint, nbval)"
	@echo "make test-portable  nbval under every CPU kernel setting this machine can run (AVX-512, AVX2, scalar, NumPy baseline)"
	@echo "make test-browser   run each lesson in JupyterLab in headless Chromium (needs /usr/bin/chromium)"
	@echo "make site           build the course website into site/ (open site/index.html)"
	@echo "make notebooks      re-execute every lesson in place (normalized)"
	@echo "make bench          run the benchmarks and print their tables"
	@echo "make data           regenerate data/ (bit-identical) and verify checksums"
	@echo "make checkpoints    retrain the shipped model checkpoints in data/checkpoints/"
	@echo "make grade SUBMISSIONS=path | SERVICE=https://hub/services/class-report/ [JOBS=N]   every student notebook in its own sandbox -> grades.csv, grades.html (SERVICE: collects first)"
	@echo "make collect FROM=folder | SERVICE=https://hub/services/class-report/   the submissions that count -> collected/ (then make grade SUBMISSIONS=collected/submissions)"
	@echo "make lti-push [MARKS=marks.csv] [DRY_RUN=1]   send marks.csv to the LMS gradebook over LTI 1.3 (course.toml [lti], docs/marks.md)"
	@echo "make marks [ROSTER=roster.csv | ROSTER_HUB=https://hub/hub/api]   marks.csv, canvas.csv, moodle.csv from course.toml and the graded collection (docs/marks.md)"
	@echo "make publish [AS_OF=now|2026-12-10T12:00+01:00]   commit the student edition to the branch 'student', for a JupyterHub (docs/hub.md)"
	@echo "make pull-link HUB=https://hub... REPO=https://...   the nbgitpuller link that gives each student the course"
	@echo "make test-hub       start a real JupyterHub (6.1.1, then 5.5.0) on loopback: pull link, live report, restart"
	@echo "make check-py312    every pin has a Python 3.12 wheel (TLJH's Python; needs the package registry)"

$(STAMP): requirements.txt pyproject.toml jupyter/lab/settings/overrides.d/attention-course.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt
	$(BIN)/python -m pip install --disable-pip-version-check -q --no-deps --no-build-isolation -e .
	# JupyterLab defaults for the course (RISE's "white" theme: its fonts ship with RISE, nothing is fetched)
	mkdir -p $(VENV)/share/jupyter/lab/settings/overrides.d
	cp jupyter/lab/settings/overrides.d/attention-course.json $(VENV)/share/jupyter/lab/settings/overrides.d/
	touch $(STAMP)

env: $(STAMP)

# Students work in their own copies ($(COURSE_WORKSPACE)/, git-ignored): the student edition of each lesson in notebooks/
# (solution regions stubbed, hidden regions removed, outputs cleared: scripts/editions.py), written the first time only,
# never overwritten (scripts/workspace.py; standard library only, so no .venv needed).
.PHONY: workspace reset-lesson test-editions
COURSE_WORKSPACE := my_work

lab: env workspace
	$(BIN)/jupyter lab $$([ "$$(id -u)" = 0 ] && echo --allow-root) \
		--ServerApp.root_dir="$(CURDIR)" --FileContentsManager.preferred_dir=$(COURSE_WORKSPACE) $(COURSE_WORKSPACE)/00_start_here.ipynb

workspace:
	$(PYTHON) scripts/workspace.py --workspace $(COURSE_WORKSPACE) sync

reset-lesson:
	$(PYTHON) scripts/workspace.py --workspace $(COURSE_WORKSPACE) reset "$(LESSON)"

# Every lesson's student edition, as `make workspace` writes it (into a temporary folder), run untouched in a fresh
# kernel: no error, and every check cell says "not attempted" (scripts/run_editions.py).
test-editions: export MPLBACKEND := module://matplotlib_inline.backend_inline
test-editions: env
	$(BIN)/python scripts/run_editions.py

test: test-unit test-notebooks site

# The course website (site/index.html): the committed executed notebooks as static HTML, not re-executed.
.PHONY: site
site: env
	$(BIN)/python scripts/build_site.py

test-unit: env
	$(BIN)/python -m pytest tests -m "not slow and not browser" -q

# The stored outputs hold inline figures: a shell's MPLBACKEND=Agg (or any other backend) would drop them, so every
# target that runs a kernel pins the inline backend.
INLINE := module://matplotlib_inline.backend_inline
test-notebooks notebooks lab grade test-browser test-portable: export MPLBACKEND := $(INLINE)
test-notebooks: env
	$(BIN)/python -m pytest $(NBVAL) $(NOTEBOOKS) -q

# The stored outputs hold on any CPU: nbval again with PyTorch's kernels forced to the scalar path, to AVX2 and to
# AVX-512 (where this CPU has them), and with NumPy's optional SIMD and OpenBLAS's newer kernels off
# (scripts/nbval_portable.py --list shows the variables). About 2 minutes a setting; PORTABLE_JOBS at a time.
PORTABLE_SETTINGS ?= all
PORTABLE_JOBS ?= 2
test-portable: env
	$(BIN)/python scripts/nbval_portable.py --settings $(PORTABLE_SETTINGS) --jobs $(PORTABLE_JOBS) -- $(NBVAL) $(NOTEBOOKS)

test-slow: env
	$(BIN)/python -m pytest tests -m slow -q

test-browser: env
	$(BIN)/python -m pytest tests/browser -m browser -q

notebooks: env
	$(BIN)/python scripts/run_notebooks.py $(NOTEBOOKS)

lint: env
	$(BIN)/ruff check course_utils tests benchmarks scripts notebooks site_src
	$(BIN)/ruff format --check course_utils tests benchmarks scripts notebooks site_src

format: env
	$(BIN)/ruff check --fix course_utils tests benchmarks scripts notebooks site_src
	$(BIN)/ruff format course_utils tests benchmarks scripts notebooks site_src

bench: env
	$(BIN)/python benchmarks/attention.py
	$(BIN)/python benchmarks/reversal.py
	$(BIN)/python benchmarks/retrieval.py

data: env
	$(BIN)/python -m course_utils.data --write data

checkpoints: env
	$(BIN)/python -m course_utils.reversal.checkpoints --write-checkpoints data/checkpoints

# The class report: make grade SUBMISSIONS=path (path/<student>/NN_*.ipynb -> path/grades.csv, path/grades.html).
# Each notebook in its own bubblewrap sandbox (course_utils/grading/sandbox.py); JOBS at once (default: the cores);
# MEMORY (all of a notebook's processes together, default 4G) and PROCESSES (default 256) per notebook.
.PHONY: grade
JOBS ?= $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 1)
MEMORY ?= 4G
PROCESSES ?= 256
# `make grade SERVICE=https://hub.example.edu/services/class-report/ [TOKEN=...]` collects the submissions that count
# from the service (as `make collect SERVICE=...`, into $(COLLECTED)) and grades $(COLLECTED)/submissions at once.
grade: env
	@test -n "$(SUBMISSIONS)$(SERVICE)" || { echo "usage: make grade SUBMISSIONS=path/to/submissions | SERVICE=https://hub.example.edu/services/class-report/ [TOKEN=...] [COURSE_FILE=course.toml] [COLLECTED=collected] [JOBS=4]"; exit 2; }
	$(if $(SERVICE),$(BIN)/python -m course_utils.marks collect --course "$(COURSE_FILE)" --out "$(COLLECTED)" --service "$(SERVICE)" $(if $(TOKEN),--token "$(TOKEN)"))
	$(BIN)/python -m course_utils.grading "$(or $(SUBMISSIONS),$(COLLECTED)/submissions)" --jobs $(JOBS) --memory $(MEMORY) --processes $(PROCESSES)

# Marks (docs/marks.md): the course file (course.toml; course.example.toml documents it) gives points, due dates, the
# late policy and extensions. `make collect` writes the submission that counts per student and lesson into
# $(COLLECTED)/submissions/<student>/NN_*.ipynb with $(COLLECTED)/manifest.json (and, from the service, records.jsonl);
# `make grade SUBMISSIONS=$(COLLECTED)/submissions` grades them; `make marks` writes the marks and the LMS files.
.PHONY: collect marks
COURSE_FILE ?= course.toml
COLLECTED ?= collected
collect: env
	@test -n "$(FROM)$(SERVICE)" || { echo "usage: make collect FROM=submissions_folder | SERVICE=https://hub.example.edu/services/class-report/ [TOKEN=...] [COURSE_FILE=course.toml] [COLLECTED=collected]"; exit 2; }
	$(BIN)/python -m course_utils.marks collect --course "$(COURSE_FILE)" --out "$(COLLECTED)" $(if $(FROM),--from "$(FROM)",--service "$(SERVICE)" $(if $(TOKEN),--token "$(TOKEN)"))

marks: env
	$(BIN)/python -m course_utils.marks marks --course "$(COURSE_FILE)" --collected "$(COLLECTED)" $(if $(ROSTER),--roster "$(ROSTER)") $(if $(ROSTER_HUB),--roster-hub "$(ROSTER_HUB)") --out "$(or $(MARKS_OUT),$(COLLECTED)/marks)"

# LTI 1.3 (AGS): the reviewed marks.csv into the LMS's gradebook, one line item per lesson (course.toml's [lti]).
.PHONY: lti-push
lti-push: env
	$(BIN)/python -m course_utils.marks lti --course "$(COURSE_FILE)" --marks "$(or $(MARKS),$(COLLECTED)/marks/marks.csv)" $(if $(ROSTER),--roster "$(ROSTER)") $(if $(DRY_RUN),--dry-run)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis .cache

# --- A class on JupyterHub (docs/hub.md): the student edition as a branch, its pull link, the hub's tests.
.PHONY: publish pull-link hub-env test-hub check-py312 measure-server
EDITION_BRANCH ?= student
# AS_OF (default never: withhold nothing; "now" or an ISO time: withhold the answers of lessons not yet due): the library's answers of lessons not due by then are stubs (docs/hub.md)
publish:
	$(PYTHON) scripts/publish_student_edition.py build --branch $(EDITION_BRANCH) --as-of "$(or $(AS_OF),never)" $(if $(wildcard $(COURSE_FILE)),--course-file "$(COURSE_FILE)")

pull-link:
	@test -n "$(HUB)" -a -n "$(REPO)" || { echo "usage: make pull-link HUB=https://hub.example.edu REPO=https://github.com/ORG/attention-course [LESSON=01] [EDITION_BRANCH=student]"; exit 2; }
	@$(PYTHON) scripts/publish_student_edition.py link --hub "$(HUB)" --repo "$(REPO)" --branch "$(EDITION_BRANCH)" --lesson "$(or $(LESSON),00)"

# The hub's packages (hub/requirements.txt, installed with the course's pins so pip checks they agree),
# JupyterHub 5.x side by side in .venv-hub5 (hub/requirements-hub5.txt: Zero to JupyterHub's and TLJH's hub) and
# configurable-http-proxy (hub/package-lock.json, `npm ci`): the only downloads; the tests then run on loopback only.
HUB_STAMP := $(VENV)/.hub-installed
HUB5_VENV := .venv-hub5
HUB5_STAMP := $(HUB5_VENV)/.installed
CHP := hub/node_modules/.bin/configurable-http-proxy
$(HUB_STAMP): $(STAMP) hub/requirements.txt
	$(BIN)/python -m pip install --disable-pip-version-check -q -r requirements.txt -r hub/requirements.txt
	touch $(HUB_STAMP)

$(HUB5_STAMP): hub/requirements-hub5.txt requirements.txt
	test -x $(HUB5_VENV)/bin/python || $(PYTHON) -m venv $(HUB5_VENV)
	$(HUB5_VENV)/bin/python -m pip install --disable-pip-version-check -q -r hub/requirements-hub5.txt -c requirements.txt
	touch $(HUB5_STAMP)

$(CHP): hub/package.json hub/package-lock.json
	cd hub && npm ci --no-audit --no-fund --loglevel=error
	touch $(CHP)

hub-env: $(HUB_STAMP) $(HUB5_STAMP) $(CHP)

# The service's parts and its store (SQLite, and PostgreSQL on a server the tests start: Debian's `postgresql`), the
# pull rules, then the class on a real hub three times, the students' servers always on 6.1.1 (the course's pins):
# everything on 6.1.1; the hub and the class-report service on 5.5.0 (.venv-hub5), as Zero to JupyterHub runs them;
# the hub on 5.5.0 and the service on 6.1.1 (the course's environment), as the TLJH recipe runs them, with the
# records in PostgreSQL (a server the test starts) in place of SQLite.
HUBTEST := $(BIN)/python -m pytest hub/tests/test_hub.py -q -p no:randomly -p no:cacheprovider
test-hub: hub-env
	$(BIN)/ruff check hub && $(BIN)/ruff format --check hub
	HUBTEST_REQUIRE_POSTGRES=1 $(BIN)/python -m pytest hub/tests -q -p no:randomly -p no:cacheprovider
	HUBTEST_HUB_PYTHON=$(HUB5_VENV)/bin/python $(HUBTEST)
	HUBTEST_HUB_PYTHON=$(HUB5_VENV)/bin/python HUBTEST_SERVICE_PYTHON=$(BIN)/python HUBTEST_RECORDS=postgresql $(HUBTEST)

# Python 3.12 (TLJH's user environment): every pin of requirements.txt and hub/requirements.txt has a 3.12 wheel
# (pip's resolver as a 3.12 installer, wheels only; hub/tests/test_python312.py). Needs the package registry.
check-py312: env
	CHECK_PY312=1 $(BIN)/python -m pytest hub/tests/test_python312.py -q -p no:randomly -p no:cacheprovider

# Memory and CPU of one student's server over the lessons (docs/hub.md): re-run after the lessons change.
measure-server: hub-env
	$(BIN)/python hub/measure_server.py --markdown
