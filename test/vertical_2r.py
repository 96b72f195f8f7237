"""A 2R arm in a vertical plane and its closed-form Lagrangian dynamics (test fixture).

Joint axes z, gravity along −y, angles from +x; link i has length L_i, mass M_i, CoM C_i on
its axis and inertia I_i about the CoM (z). The closed form is Lynch & Park, Modern Robotics
eq. (8.9) generalised to links with inertia.
"""

from __future__ import annotations

import math

import numpy as np

from robot_dynamics.core.model.model import RobotModel

G = 9.8
L1, L2, M1, M2, C1, C2, I1, I2 = 0.4, 0.3, 1.5, 1.0, 0.2, 0.15, 0.02, 0.01


def urdf(effort1: float = 10.0, effort2: float = 4.0) -> str:
    return f"""<robot name="vertical_2r">
  <link name="base"/>
  <link name="link1"><inertial><origin xyz="{C1} 0 0"/><mass value="{M1}"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="{I1}" iyz="0" izz="{I1}"/></inertial></link>
  <link name="link2"><inertial><origin xyz="{C2} 0 0"/><mass value="{M2}"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="{I2}" iyz="0" izz="{I2}"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="link1"/>
    <axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="{effort1}" velocity="2"/></joint>
  <joint name="elbow" type="revolute"><parent link="link1"/><child link="link2"/>
    <origin xyz="{L1} 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="{effort2}" velocity="2"/></joint>
</robot>"""


def model(effort1: float = 10.0, effort2: float = 4.0) -> RobotModel:
    return RobotModel.from_urdf_string(urdf(effort1, effort2), gravity=(0.0, -G, 0.0))


def torques(
    q, qd, qdd, second_mass: float = M2, second_com: float = C2, second_inertia: float = I2
) -> np.ndarray:
    """τ [N·m] with link 2 a body of mass ``second_mass``, CoM ``second_com`` and inertia
    ``second_inertia``."""
    c1, c2, s2, c12 = math.cos(q[0]), math.cos(q[1]), math.sin(q[1]), math.cos(q[0] + q[1])
    m2, r2, i2 = second_mass, second_com, second_inertia
    m11 = I1 + M1 * C1**2 + i2 + m2 * (L1**2 + r2**2 + 2 * L1 * r2 * c2)
    m12 = i2 + m2 * (r2**2 + L1 * r2 * c2)
    m22 = i2 + m2 * r2**2
    h = m2 * L1 * r2 * s2
    tau1 = m11 * qdd[0] + m12 * qdd[1] - h * (2 * qd[0] * qd[1] + qd[1] ** 2)
    tau2 = m12 * qdd[0] + m22 * qdd[1] + h * qd[0] ** 2
    return np.array(
        [tau1 + G * ((M1 * C1 + m2 * L1) * c1 + m2 * r2 * c12), tau2 + G * m2 * r2 * c12]
    )


def tip_torques_per_kilogram(q, qd, qdd) -> np.ndarray:
    """The torques [N·m/kg] one kilogram at the tip of link 2 adds."""
    return torques(q, qd, qdd, 1.0, L2, 0.0) - torques(q, qd, qdd, 0.0, 0.0, 0.0)


def with_tip_payload(q, qd, qdd, mass: float) -> np.ndarray:
    """τ [N·m] of the arm with a point mass ``mass`` [kg] at the tip of link 2."""
    return torques(q, qd, qdd) + mass * tip_torques_per_kilogram(q, qd, qdd)
