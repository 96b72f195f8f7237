"""Launch dynamics_node (`dynamics`) and centroidal_node (`centroidal`) for a real robot.

    ros2 launch robot_dynamics robot_dynamics.launch.py [namespace:=arm] \
        [config_file:=/path/to/my_robot_dynamics.yaml] [use_sim_time:=true] \
        [urdf_file:=/path/to/robot.urdf] [root_joint:=floating]

Both nodes read `config/robot_dynamics.yaml` (every parameter with its default and a
comment; copy it and pass `config_file:=`). `urdf_file` and `root_joint` override the file
only when given: by default the model comes from the `robot_description` topic
(robot_state_publisher). `joint_states`, `robot_description` and `odom` are resolved in
`namespace`. `use_sim_time:=true` needs a `/clock` publisher (a simulator) for the nodes' clock;
the torques follow joint_states and /diagnostics the steady clock either way.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription

PACKAGE = 'robot_dynamics'
BOOLEAN_CHOICES = ['true', 'false', 'True', 'False', '1', '0']
"""What a yes-or-no argument takes; anything else (`maybe`, `yes`) stops the launch by name."""


def dynamics_nodes(namespace: str, config_file: str, use_sim_time: bool, overrides: dict) -> list:
    """Both nodes in ``namespace`` with the parameter file ``config_file``, then ``use_sim_time``
    and the parameter ``overrides`` (only the ones that were given). demo.launch.py uses it too."""
    parameters = [config_file, {'use_sim_time': use_sim_time, **overrides}]
    return [
        Node(
            package=PACKAGE,
            executable='dynamics_node',
            name='dynamics',
            namespace=namespace,
            parameters=parameters,
            output='screen',
        ),
        Node(
            package=PACKAGE,
            executable='centroidal_node',
            name='centroidal',
            namespace=namespace,
            parameters=parameters,
            output='screen',
        ),
    ]


def _nodes(context) -> list:
    """Both nodes with the parameter file, then the launch arguments that were given."""

    def argument(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    overrides = {name: argument(name) for name in ('urdf_file', 'root_joint') if argument(name)}
    return dynamics_nodes(
        argument('namespace'),
        argument('config_file'),
        argument('use_sim_time').lower() in ('true', '1'),
        overrides,
    )


def generate_launch_description() -> LaunchDescription:
    default_config = os.path.join(
        get_package_share_directory(PACKAGE), 'config', 'robot_dynamics.yaml'
    )
    arguments = [
        DeclareLaunchArgument(
            'namespace', default_value='', description='namespace of both nodes and their topics'
        ),
        DeclareLaunchArgument(
            'config_file',
            default_value=default_config,
            description='parameter file with `/**/dynamics` and `/**/centroidal` sections',
        ),
        DeclareLaunchArgument(
            'use_sim_time',
            default_value='false',
            choices=BOOLEAN_CHOICES,
            description='use the /clock topic (a simulator must publish it)',
        ),
        DeclareLaunchArgument(
            'urdf_file',
            default_value='',
            description='URDF file of the robot; empty: as in config_file (there: the '
            'robot_description topic)',
        ),
        DeclareLaunchArgument(
            'root_joint',
            default_value='',
            description="'fixed' (arm) or 'floating' (legged or mobile base with odom); empty: as "
            "in config_file (there: fixed)",
        ),
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=_nodes)])
