"""Real rclpy nodes for tests: an executor spinning in a background thread, a probe node
with real publishers/subscribers, and bounded waits. No mocks."""

from __future__ import annotations

import threading
import time

import rclpy
from rclpy.node import Node

from robot_dynamics.instruments.processes import start_node_process, stop_node_process  # noqa: F401  node processes that end with the test run
from robot_dynamics.instruments.reliability_common import (
    wait_for,
)  # also imported by the tests from here
from robot_dynamics.ros.spinning import NodeSpinner


class RosHarness:
    """Spins the given nodes plus a probe node on a single-threaded executor in a background
    thread until closed (rclpy's multi-threaded executor starved timer-heavy nodes here), with
    the package's own :class:`~robot_dynamics.ros.spinning.NodeSpinner`: closing stops the
    spin before any node is destroyed."""

    def __init__(self, *nodes: Node):
        self.probe = rclpy.create_node(f'test_probe_{id(self)}')
        self.spinner = NodeSpinner([self.probe])
        self.nodes = [self.probe]
        for node in nodes:
            self.add(node)
        self._thread = threading.Thread(target=self.spinner.spin, daemon=True)
        self._thread.start()

    def add(self, node: Node) -> Node:
        """Spin ``node`` (and its service companion node, if it has one)."""
        for member in (node, getattr(getattr(node, 'service_host', None), 'node', None)):
            if member is not None:
                self.nodes.append(member)
                self.spinner.add(member)
        return node

    def collect(self, message_type, topic: str, qos=10) -> list:
        """Subscribe the probe to ``topic``; returns the (growing) list of received messages."""
        received: list = []
        self.probe.create_subscription(message_type, topic, received.append, qos)
        return received

    def call(
        self, service_type, name: str, request=None, timeout: float = 180.0, resend: float = 0.0
    ):
        """The response of service ``name``, within ``timeout`` s. ``resend`` [s]: for a query
        that may be asked twice, ask again at this interval (a reply sent before the server
        has discovered the probe's reply reader, as can happen with a node in another process
        under load, is lost); 0: one request."""
        # identify_payload and explain_residual fit seconds of data: on a 2-core machine shared
        # with other CPU-bound work they took over 60 s
        client = self.probe.create_client(service_type, name)
        assert client.wait_for_service(timeout_sec=10.0), f'service {name} not available'
        response = answer(client, request or service_type.Request(), timeout, resend)
        assert response is not None, f'service {name} did not answer in {timeout} s'
        return response

    def close(self) -> None:
        self.spinner.stop()
        self._thread.join()
        self.spinner.close()
        for node in self.nodes:
            node.destroy_node()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def answer(client, request, timeout: float, resend: float = 0.0):
    """The response of ``client``'s service to ``request`` within ``timeout`` s, else None;
    ``resend`` [s]: ask again at this interval (0: once), see :meth:`RosHarness.call`."""
    deadline = time.monotonic() + timeout
    while True:
        future = client.call_async(request)
        left = deadline - time.monotonic()
        if wait_for(future.done, min(left, resend) if resend > 0.0 else left):
            return future.result()
        if time.monotonic() >= deadline:
            return None
