"""One-row declarations for a node without a parameter table yet (sim_robot): each helper
declares one :class:`~robot_dynamics.ros.parameter_schema.ParameterSpec` with
:func:`~robot_dynamics.ros.parameter_schema.declare_parameter`, the mechanism the tables of
dynamics_node and centroidal_node use (read once, read-only afterwards; a bad start-up value is
logged and its default used).
"""

from __future__ import annotations

from typing import Callable, Optional

from rclpy.node import Node

from robot_dynamics.ros.parameter_schema import (
    GRAVITY,
    NON_NEGATIVE,
    POSITIVE,
    ParameterSpec,
    declare_parameter,
)


def checked_parameter(
    node: Node,
    name: str,
    default,
    description: str,
    is_valid: Optional[Callable] = None,
    requirement: str = '',
):
    """Declare ``name`` (read once, then read-only) and return the value the node uses: the
    given one converted to the type of ``default`` if ``is_valid`` holds for it, else
    ``default`` (``requirement`` says why, in the log)."""
    check = None if is_valid is None else (lambda value, _node: is_valid(value))
    return declare_parameter(
        node, ParameterSpec(name, default, description, check=check, requirement=requirement)
    )


def positive_parameter(
    node: Node, name: str, default: float, description: str, quantity: str = 'time [s]'
) -> float:
    """:func:`checked_parameter` for a positive, finite number (a ``quantity``)."""
    spec = ParameterSpec(
        name, default, description, requirement=f'is not a positive {quantity}', **POSITIVE
    )
    return declare_parameter(node, spec)


def non_negative_parameter(node: Node, name: str, default: float, description: str) -> float:
    """:func:`checked_parameter` for a non-negative, finite number."""
    spec = ParameterSpec(
        name,
        default,
        description,
        requirement='is not a non-negative, finite number',
        **NON_NEGATIVE,
    )
    return declare_parameter(node, spec)


def gravity_parameter(node: Node) -> list:
    """:func:`checked_parameter` ``gravity``: the gravity vector in the world frame [m/s²]."""
    return declare_parameter(node, GRAVITY)
