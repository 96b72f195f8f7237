"""Choosing a ROS domain no other participant on this machine uses, for the processes a run
starts (the benches, and the demo when ROS_DOMAIN_ID is not set): a fixed or pid-derived
domain could be one a robot's own graph runs on, and their topics (``joint_states``...)
would mix."""

from __future__ import annotations

import os
import sys
import time

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.ros.dds_files import dds_files_of, remove_unused_dds_files


class DomainUnavailable(RobotDynamicsError):
    """Every ROS domain tried has another participant on it."""


def claim_ros_domain(attempts: int = 12, listen: float = 5.0) -> int:
    """Pick a ROS domain no other participant uses and export it (ROS_DOMAIN_ID, with
    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST) for this process and its children.

    Tried in turn: ROS_DOMAIN_ID if set, then domains derived from this process id; each is
    listened to for ``listen`` seconds. Raises :class:`DomainUnavailable` when none is free."""
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    first = int(os.environ.get('ROS_DOMAIN_ID') or os.getpid() % 100 + 1)
    candidates = [first] + [(os.getpid() + 37 * k) % 100 + 1 for k in range(1, attempts)]
    for domain in dict.fromkeys(candidates):
        others = other_nodes_on_domain(domain, listen)
        if not others:
            os.environ['ROS_DOMAIN_ID'] = str(domain)
            return domain
        print(
            f'ROS domain {domain} is in use ({", ".join(sorted(others)[:3])}...): trying another',
            file=sys.stderr,
        )
    raise DomainUnavailable(
        f'no free ROS domain among {sorted(set(candidates))}: another run is using each of them'
    )


def other_nodes_on_domain(domain: int, listen: float = 5.0) -> set:
    """Fully qualified names of the ROS nodes discovered on ``domain`` within ``listen`` seconds
    (loopback discovery), other than the probe itself."""
    import rclpy

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain)
    name = f'domain_probe_{os.getpid()}'
    node = rclpy.create_node(name, context=context)
    try:
        deadline = time.monotonic() + listen
        while True:
            others = {
                f'{namespace.rstrip("/")}/{other}'
                for other, namespace in node.get_node_names_and_namespaces()
                if other != name
            }
            if others or time.monotonic() > deadline:
                return others
            time.sleep(0.05)
    finally:
        node.destroy_node()
        shutdown_context(context)


def shutdown_context(context) -> None:
    """Shut the rclpy ``context`` down and remove the Fast DDS segment files it leaves."""
    import rclpy

    owned = dds_files_of(os.getpid())
    rclpy.try_shutdown(context=context)
    remove_unused_dds_files(owned, ports=False)
