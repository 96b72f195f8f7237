"""What differs between the rclpy releases the package runs on, in this one module.

The nodes use the rclpy API common to Humble (rclpy 3.3), Jazzy (7.1) and Kilted (9.1); these
are its differences that touch the package. Everything else the package uses (QoS profiles,
the single-threaded executor, signal handler options, parameter declarations, descriptors and
``set_parameters``, graph queries, timers on a given clock) behaves the same on Jazzy 7.1.6 and
Kilted 9.1.2, the two releases CI runs the whole test suite on:

- :data:`EventsExecutor`, rclpy's C++ executor (``rclpy.experimental``): Kilted, and Jazzy from
  rclpy 7.1.4 on (the backport ros2/rclpy#1435). ``None`` where rclpy has no such module
  (Humble, Jazzy up to 7.1.3); :class:`~robot_dynamics.ros.spinning.NodeSpinner` then spins
  on the single-threaded executor.
- :class:`PublisherEventCallbacks`, :class:`SubscriptionEventCallbacks`: in
  ``rclpy.event_handler`` from Iron on, in ``rclpy.qos_event`` on Humble.
- :func:`parameter_type`: ``Parameter.Type`` is an ``Enum`` on Jazzy and Humble, an ``IntEnum``
  on Kilted, so only its ``value`` is the ``rcl_interfaces/ParameterType`` number everywhere.
- :func:`add_post_set_callback`: post-set parameter callbacks exist from Iron on; on Humble the
  callback runs as an on-set callback (before every check of the request has passed).
- :func:`parameter_overrides`: the names given to a node (``-p``, parameter files) that rclpy
  keeps in a private attribute on every release (no public accessor exists).

A module that is present but fails to import (a broken install) raises here instead of
silently choosing the older API."""

from __future__ import annotations

from rcl_interfaces.msg import SetParametersResult
from rclpy.parameter import Parameter

try:
    from rclpy.experimental import EventsExecutor
except ModuleNotFoundError as error:  # Humble; Jazzy before rclpy 7.1.4
    if error.name != 'rclpy.experimental':
        raise
    EventsExecutor = None

try:
    from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
except ModuleNotFoundError as error:  # Humble
    if error.name != 'rclpy.event_handler':
        raise
    from rclpy.qos_event import PublisherEventCallbacks, SubscriptionEventCallbacks


def parameter_type(value) -> int:
    """The ``rcl_interfaces/ParameterType`` number of a Python parameter value."""
    return Parameter.Type.from_parameter_value(value).value


def add_post_set_callback(node, callback) -> None:
    """Call ``callback(parameters)`` once a set of ``node``'s parameters has been accepted."""
    if hasattr(node, 'add_post_set_parameters_callback'):
        node.add_post_set_parameters_callback(callback)
        return

    def on_set(parameters):  # Humble
        callback(parameters)
        return SetParametersResult(successful=True)

    node.add_on_set_parameters_callback(on_set)


def add_pre_set_callback(node, callback) -> None:
    """Let ``callback(parameters) -> parameters`` rewrite a set of ``node``'s parameters before
    they are checked (rclpy ≥ 5); on Humble's rclpy, which has no such hook, nothing."""
    if hasattr(node, 'add_pre_set_parameters_callback'):
        node.add_pre_set_parameters_callback(callback)


def parameter_overrides(node) -> tuple:
    """The names of the parameters given to ``node`` at its start (declared or not)."""
    return tuple(getattr(node, '_parameter_overrides', {}))


__all__ = [
    'add_post_set_callback',
    'add_pre_set_callback',
    'parameter_overrides',
    'EventsExecutor',
    'PublisherEventCallbacks',
    'SubscriptionEventCallbacks',
    'parameter_type',
]
