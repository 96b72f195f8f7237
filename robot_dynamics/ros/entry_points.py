"""The nodes' console scripts (``ros2 run robot_dynamics dynamics_node``, launch files).

A node's modules take about a second to import (rclpy, pinocchio, MuJoCo). A SIGINT or SIGTERM
that arrives meanwhile (a Ctrl-C right after the start, a launch shut down as it starts) ends
the process quietly with status 0: nothing has been started yet that needs stopping. From
:func:`~robot_dynamics.ros.spinning.run_nodes` on, its own signal handling takes over.
"""

from __future__ import annotations

import importlib
import os
import signal

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _stop_before_start(_number, _frame) -> None:
    # Not SystemExit: raised inside an extension module's initialisation (MuJoCo's) it comes
    # out as an ImportError traceback. Nothing exists yet that an exit must close.
    os._exit(0)


def _main_of(module_name: str):
    for number in STOP_SIGNALS:
        signal.signal(number, _stop_before_start)
    return importlib.import_module(module_name).main()


def dynamics_node():
    return _main_of('robot_dynamics.ros.dynamics_node')


def centroidal_node():
    return _main_of('robot_dynamics.ros.centroidal_node')


def sim_robot():
    return _main_of('robot_dynamics.ros.sim_robot')
