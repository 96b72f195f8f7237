# One-command entry points for machines without an apt ROS 2 install.
# `make demo` and `make test` create .venv, install everything from requirements*.txt
# and this package, and run with the loopback-only ROS environment (scripts/ros_env.sh).
PYTHON ?= python3
VENV ?= .venv
RUN := VENV=$(abspath $(VENV)) scripts/ros_env.sh
STAMP := $(VENV)/.installed

.PHONY: install demo test bench clean

$(STAMP): requirements.txt requirements-test.txt setup.py
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r requirements-test.txt
	$(VENV)/bin/pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(RUN) $(VENV)/bin/python -m robot_dynamics demo $(ARGS)

test: $(STAMP)
	$(RUN) $(VENV)/bin/python -m pytest -q test $(ARGS)

bench: $(STAMP)
	$(RUN) $(VENV)/bin/python -m robot_dynamics bench $(ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
