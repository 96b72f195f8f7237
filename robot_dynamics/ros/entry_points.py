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


NODE_MODULES = {
    'dynamics_node': 'robot_dynamics.ros.dynamics_node',
    'centroidal_node': 'robot_dynamics.ros.centroidal_node',
    'sim_robot': 'robot_dynamics.ros.sim_robot',
}
"""Console script → the module whose ``main`` it runs."""


def _main_of(script: str):
    for number in STOP_SIGNALS:
        signal.signal(number, _stop_before_start)
    return importlib.import_module(NODE_MODULES[script]).main()


def dynamics_node():
    return _main_of('dynamics_node')


def centroidal_node():
    return _main_of('centroidal_node')


def sim_robot():
    return _main_of('sim_robot')
