"""dynamics_node's wrist force/torque sensor: readings on ``ft_sensor_topic``
(geometry_msgs/WrenchStamped in a frame of the URDF) compensated for the sensor's bias and the
payload in use and published on ``~/compensated_wrench``; services ``~/tare_ft_sensor`` and
``~/identify_tool_from_ft`` (std_srvs/Trigger). The math is
:class:`~robot_dynamics.core.live.ft_sensor.FtSensor`.

``~/compensated_wrench``: the wrench the environment applies to the tool [N, N·m], at the origin of
``wrench_frame`` in its axes when that is set, else of the sensor's frame; stamp copied from the
reading. A tool preset with an ``ft_bias`` sets the bias when it is selected. A reading that cannot
be used (a frame the model lacks, NaN, no joint state within 50 ms)
is skipped and counted by reason (``ft_<reason>``).
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from std_srvs.srv import Trigger

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.core.identification.ft_tool import FtToolFit, mass_disagreement
from robot_dynamics.core.live.ft_sensor import FtSensor, FtSensorError, JointMotion
from robot_dynamics.core.live.live_dynamics import LiveDynamics
from robot_dynamics.ros.diagnostics import diagnostic_status
from robot_dynamics.ros.node_log import RejectionCounter
from robot_dynamics.ros.topics import SENSOR_QOS, create_output_publisher, stamp_seconds


class FtSensorInput:
    """The F/T sensor of ``node`` (module docstring); ``live()`` gives the pipeline in use (None
        before a model), ``wrench_frame`` where the compensated wrench is expressed ('' the sensor's
        frame), ``tool_bias()`` the name of the tool preset in use and its F/T bias (('', None)
    without one). Services are served by ``service_host`` as ``node``'s own."""

    def __init__(
        self,
        node: Node,
        service_host,
        topic: str,
        wrench_frame: str,
        live: Callable[[], Optional[LiveDynamics]],
        tool_bias: Callable[[], tuple],
        rejections: RejectionCounter,
    ):
        self._live, self._rejections, self._wrench_frame = live, rejections, wrench_frame
        self._tool_bias, self._tool = tool_bias, ''
        self.sensor: Optional[FtSensor] = None
        self.last_fit: Optional[FtToolFit] = None
        self._publisher = create_output_publisher(
            node, WrenchStamped, '~/compensated_wrench', SENSOR_QOS
        )
        self._message = WrenchStamped()
        node.create_subscription(WrenchStamped, topic, self._on_reading, SENSOR_QOS)
        service_host.create_service(Trigger, '~/tare_ft_sensor', self._tare)
        service_host.create_service(Trigger, '~/identify_tool_from_ft', self._identify)

    def _on_reading(self, message: WrenchStamped) -> None:
        live = self._live()
        if live is None:
            return
        try:
            self._compensate(live, message)
        except FtSensorError as error:
            self._rejections.reject(f'ft_{error.reason}', str(error))
        except Exception as error:  # a node never dies from a message
            self._rejections.reject('ft_internal_error', repr(error))

    def _compensate(self, live: LiveDynamics, message: WrenchStamped) -> None:
        sensor = self.sensor
        if sensor is None:
            sensor = self.sensor = FtSensor(live.robot)
        elif sensor.robot is not live.robot:
            sensor.use_robot(live.robot)
        tool, bias = self._tool_bias()
        if tool != self._tool:
            self._tool = tool
            if bias is not None:
                sensor.bias = np.array(bias, dtype=float)
        latest = live.latest_torques
        joints = None
        if latest is not None:
            joints = JointMotion(
                latest.stamp, latest.positions, latest.velocities, latest.accelerations
            )
        force, torque = message.wrench.force, message.wrench.torque
        reading = (force.x, force.y, force.z, torque.x, torque.y, torque.z)
        frame = message.header.frame_id
        compensated = sensor.take(stamp_seconds(message.header.stamp), frame, reading, joints)
        if self._wrench_frame and self._wrench_frame != frame:
            compensated = sensor.expressed_in(self._wrench_frame, frame, compensated)
            frame = self._wrench_frame
        out = self._message
        out.header.stamp, out.header.frame_id = message.header.stamp, frame
        out.wrench.force.x, out.wrench.force.y, out.wrench.force.z = (
            float(x) for x in compensated[:3]
        )
        out.wrench.torque.x, out.wrench.torque.y, out.wrench.torque.z = (
            float(x) for x in compensated[3:]
        )
        self._publisher.publish(out)

    def status(self, name: str, joint_payload: Optional[tuple]) -> DiagnosticStatus:
        """The sensor's diagnostics: its bias, the last tool identified from it and, with the
        joint torques' identified ``joint_payload`` (mass, 1σ) [kg], whether they agree."""
        sensor, fit = self.sensor, self.last_fit
        if sensor is None:
            return diagnostic_status(name, DiagnosticStatus.WARN, 'no F/T reading yet', {})
        values = {'bias': ' '.join(f'{x:.4g}' for x in sensor.bias)}
        if fit is None:
            return diagnostic_status(name, DiagnosticStatus.OK, 'compensating', values)
        values['tool_from_ft'] = fit.summary()
        warning = ''
        if joint_payload is not None:
            warning = mass_disagreement(fit.tool.mass, fit.mass_sigma, *joint_payload)
        level = DiagnosticStatus.WARN if warning else DiagnosticStatus.OK
        return diagnostic_status(name, level, warning or 'compensating', values)

    def _tare(self, _request, response):
        sensor = self.sensor
        try:
            if sensor is None:
                raise FtSensorError('no_readings', 'no F/T reading yet')
            bias = sensor.tare()
        except RobotDynamicsError as error:
            response.success, response.message = False, f'not tared: {error}'
            return response
        response.success = True
        response.message = (
            f'F/T bias set: force {np.round(bias[:3], 4).tolist()} N, moment '
            f'{np.round(bias[3:], 5).tolist()} N·m'
        )
        return response

    def _identify(self, _request, response):
        sensor = self.sensor
        try:
            if sensor is None:
                raise FtSensorError('no_readings', 'no F/T reading yet')
            fit = sensor.identify_tool()
        except RobotDynamicsError as error:
            response.success, response.message = False, f'no tool identified: {error}'
            return response
        sensor.bias, self.last_fit = fit.bias, fit
        response.success = True
        response.message = f'{fit.summary()}; the bias is now in use'
        return response
