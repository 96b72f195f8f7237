"""The lifecycle (managed node) behaviour dynamics_node and centroidal_node share.

With ``managed: true`` a node is a ROS 2 lifecycle node (its ``~/change_state`` and
``~/get_state`` services, ``ros2 lifecycle`` or ``ros2 service call``): configure loads the model
(a :class:`~robot_dynamics.ros.model_source.ModelSource`), activate starts the outputs of the
joint-state stream, deactivate stops them (joint states are dropped and counted), cleanup and
shutdown forget the model. Unmanaged (the default) a node loads its model and publishes from the
start and has no lifecycle interface.
"""

from __future__ import annotations

from typing import Optional

from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.lifecycle import LifecycleNodeMixin, TransitionCallbackReturn

from robot_dynamics.ros.diagnostics import diagnostic_status
from robot_dynamics.ros.model_source import ModelSource
from robot_dynamics.ros.parameter_schema import ParameterSpec

MANAGED = ParameterSpec(
    'managed',
    False,
    'run as a lifecycle node: configure loads the model, activate starts the outputs (ros2 '
    'lifecycle set); false: load and publish from the start',
)
"""The ``managed`` row of both nodes' parameter tables."""


class ManagedModelNode(LifecycleNodeMixin):
    """Mixed into a node (before rclpy's ``Node``) that has ``parameters``, ``robot``,
    ``_on_model`` and ``_drop_model``; call :meth:`start_lifecycle` once its parameters are read."""

    def start_lifecycle(self, managed: bool) -> None:
        LifecycleNodeMixin.__init__(self, enable_communication_interface=managed)
        self.managed, self.active, self.dropped_inactive = managed, not managed, 0
        self.finalized = False
        self.model_source = None if managed else ModelSource(self, self._on_model, self.parameters)

    def unconfigured_status(self) -> DiagnosticStatus:
        """The model's diagnostic status before configure, after cleanup or once finalized."""
        words = (
            'finalized (managed: shut down): start the node again'
            if self.finalized
            else 'unconfigured (managed: configure loads the model)'
        )
        return diagnostic_status(
            f'{self.get_name()}: model', DiagnosticStatus.WARN, words, {'managed': 'true'}
        )

    def inactive_input_status(self, name: str, values: dict) -> Optional[DiagnosticStatus]:
        """The joint-state input's status ``name`` of a managed node that is not active: OK, its
        lifecycle state and the joint states it dropped (``values`` gets
        ``dropped_inactive``); None while active (and always when unmanaged)."""
        if self.active:
            return None
        dropped = self.dropped_inactive  # once: the stream counts on while this runs
        values['dropped_inactive'] = dropped
        if self.finalized:
            state = 'finalized (managed: shut down)'
        elif self.model_source is None:
            state = 'unconfigured (managed: configure, then activate, to start the outputs)'
        else:
            state = 'inactive (managed: activate starts the outputs)'
        return diagnostic_status(
            name,
            DiagnosticStatus.OK,
            f'{state}: {dropped} joint states dropped',
            values,
        )

    def no_model_words(self) -> str:
        """Why a service has no model to work on, and what to do, in words."""
        if not self.managed or self.model_source is not None:
            return 'no robot model loaded yet'
        if self.finalized:
            return 'the node is finalized (managed: shut down): start it again'
        return (
            f'the node is unconfigured (managed: true): configure it (ros2 lifecycle set '
            f'{self.get_fully_qualified_name()} configure)'
        )

    def model_refusal(self) -> str:
        """Why a model that loaded was not taken into use ('' when it was, or when no model
        loaded: the model source then says why); a node that refuses models overrides it."""
        return ''

    def accepts_joint_states(self) -> bool:
        """Whether the stream runs (counts a dropped joint state when it does not)."""
        if not self.active:
            self.dropped_inactive += 1
        return self.active

    def on_configure(self, state) -> TransitionCallbackReturn:
        self.model_source = ModelSource(self, self._on_model, self.parameters)
        if self.model_source.source != 'topic' and self.robot is None:
            reason = self.model_source.last_error or self.model_refusal()
            self.get_logger().error(f'configure failed: {reason}')
            self._forget_model()
            return TransitionCallbackReturn.FAILURE
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state) -> TransitionCallbackReturn:
        self.active = True
        return TransitionCallbackReturn.SUCCESS

    def on_deactivate(self, state) -> TransitionCallbackReturn:
        self.active = False
        return TransitionCallbackReturn.SUCCESS

    def on_cleanup(self, state) -> TransitionCallbackReturn:
        self._forget_model()
        return TransitionCallbackReturn.SUCCESS

    def on_shutdown(self, state) -> TransitionCallbackReturn:
        self.active, self.finalized = False, True
        self._forget_model()
        return TransitionCallbackReturn.SUCCESS

    def destroy_node(self):
        """Destroy the node, then rcl's lifecycle state machine: it holds the node handle, and
        left to the garbage collector it keeps the DDS participant (and its /dev/shm segment)
        alive past the process's orderly end."""
        result = super().destroy_node()
        machine = getattr(self, '_state_machine', None)  # None when __init__ failed before it
        if machine is not None:
            machine.destroy_when_not_in_use()
        return result

    def _forget_model(self) -> None:
        source, self.model_source = self.model_source, None
        if source is not None:
            source.close()
        self._drop_model()
