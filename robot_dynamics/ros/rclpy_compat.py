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

A module that is present but fails to import (a broken install) raises here instead of
silently choosing the older API."""

from __future__ import annotations

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


__all__ = [
    'EventsExecutor',
    'PublisherEventCallbacks',
    'SubscriptionEventCallbacks',
    'parameter_type',
]
