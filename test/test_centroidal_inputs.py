"""centroidal_node's stream inputs have no QoS event handlers; a publisher its reliable inputs
cannot match (best effort) is named in its diagnostics instead, through real rclpy."""

import itertools

import pytest

from robot_dynamics.models import QUADRUPED_URDF

pytest.importorskip('rclpy')
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from ros_harness import wait_for  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from robot_dynamics.ros.centroidal_node import CentroidalNode  # noqa: E402

_namespaces = itertools.count()


def _inputs_status(diagnostics: list, node_name: str):
    """(message, values) of the newest '<node>: inputs' status, or None."""
    for array in reversed(diagnostics):
        for status in array.status:
            if status.name == f'{node_name}: inputs':
                return status.message, {kv.key: kv.value for kv in status.values}
    return None


@pytest.mark.parametrize('reliability', [ReliabilityPolicy.BEST_EFFORT, ReliabilityPolicy.RELIABLE])
def test_a_best_effort_joint_state_publisher_is_named_in_diagnostics(ros, reliability):
    namespace = f'/centroidal_inputs_{next(_namespaces)}'
    node = CentroidalNode(
        namespace=namespace,
        parameter_overrides=[
            Parameter('urdf_file', value=str(QUADRUPED_URDF)),
            Parameter('root_joint', value='floating'),
            Parameter('diagnostics_period', value=0.2),
        ],
    )
    harness = ros(node)
    try:
        assert len(list(node.waitables)) <= 2  # rclpy's own /parameter_events publisher only
        topic = f'{namespace}/joint_states'
        harness.probe.create_publisher(
            JointState, topic, QoSProfile(depth=10, reliability=reliability)
        )
        diagnostics = harness.collect(DiagnosticArray, '/diagnostics', 10)
        expected = topic if reliability == ReliabilityPolicy.BEST_EFFORT else 'none'
        assert wait_for(
            lambda: (
                (_inputs_status(diagnostics, node.get_name()) or ('', {}))[1].get(
                    'best_effort_publishers'
                )
                == expected
            ),
            timeout=10.0,
        )
        message, _ = _inputs_status(diagnostics, node.get_name())
        assert (f'best-effort publisher on {topic}' in message) == (
            reliability == ReliabilityPolicy.BEST_EFFORT
        )
        assert message.startswith('no complete state yet')
    finally:
        harness.close()
