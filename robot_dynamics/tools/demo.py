"""Run the main job on the bundled arm: gravity torques, total mass and centre of mass."""
from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--urdf', help='robot description to use (default: the bundled 7-DoF arm)')


def run(args: argparse.Namespace) -> int:
    import numpy as np
    import pinocchio as pin

    from robot_dynamics.core import dynamics
    from robot_dynamics.core.model import RobotModel
    from robot_dynamics.models import ARM_URDF

    robot = RobotModel.from_urdf_file(args.urdf or ARM_URDF)
    positions = np.clip([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785][:robot.num_joints] +
                        [0.0] * max(0, robot.num_joints - 7), robot.limits.lower, robot.limits.upper)
    q = robot.configuration(positions)
    torques = dynamics.gravity_torques(robot, q)
    margins = dynamics.torque_margins(robot, torques)
    com = pin.centerOfMass(robot.model, robot.data, q)
    print(f'model {robot.name}: {robot.num_joints} joints, total mass {robot.total_mass():.3f} kg')
    print(f'centre of mass (base frame) [m]: {np.array2string(com, precision=4)}')
    print(f'{"joint":<16}{"q [rad]":>10}{"g(q) [N·m]":>14}{"|τ|/limit":>11}')
    for name, position, torque, margin in zip(robot.joint_names, positions, torques, margins):
        print(f'{name:<16}{position:>10.3f}{torque:>14.4f}{margin:>11.3f}')
    return 0
