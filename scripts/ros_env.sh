#!/usr/bin/env bash
# Run a command with the environment robot_dynamics needs on a machine that uses the
# ROS 2 PyPI wheels (no apt ROS): the wheels' shared libraries on LD_LIBRARY_PATH and
# DDS discovery restricted to this machine. ROS_DOMAIN_ID is left as given: without it the
# demo and the benches take a domain no other node uses, the tests one per process.
# Usage: scripts/ros_env.sh COMMAND [ARGS...]
set -euo pipefail
VENV="${VENV:-$(cd "$(dirname "$0")/.." && pwd)/.venv}"
SITE="$("$VENV/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")"
LIBS="$(ls -d "$SITE"/ros_*.libs 2>/dev/null | tr '\n' ':')"
export LD_LIBRARY_PATH="${LIBS}${VENV}/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1
# Never let DDS discovery leave loopback.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# Small matrices: multi-threaded BLAS only adds contention on a shared machine.
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
export PATH="$VENV/bin:$PATH"
exec "$@"
