"""Launch dynamics_node (`dynamics`) and centroidal_node (`centroidal`) for a real robot.

    ros2 launch robot_dynamics robot_dynamics.launch.py [namespace:=arm] \
        [config_file:=/path/to/my_robot_dynamics.yaml] [use_sim_time:=true] \
        [urdf_file:=/path/to/robot.urdf] [root_joint:=floating]

Both nodes read `config/robot_dynamics.yaml` (every parameter with its default and a
comment; copy it and pass `config_file:=`). `urdf_file` and `root_joint` override the file
only when given: by default the model comes from the `robot_description` topic
(robot_state_publisher). `joint_states`, `robot_description` and `odom` are resolved in
`namespace`.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = 'robot_dynamics'


def _nodes(context) -> list:
    """Both nodes with the parameter file, then the launch arguments that were given."""
    def argument(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    overrides = {'use_sim_time': argument('use_sim_time').lower() in ('true', '1')}
    overrides.update({name: argument(name) for name in ('urdf_file', 'root_joint') if argument(name)})
    parameters = [argument('config_file'), overrides]
    namespace = argument('namespace')
    return [
        Node(package=PACKAGE, executable='dynamics_node', name='dynamics', namespace=namespace,
             parameters=parameters, output='screen'),
        Node(package=PACKAGE, executable='centroidal_node', name='centroidal', namespace=namespace,
             parameters=parameters, output='screen'),
    ]


def generate_launch_description() -> LaunchDescription:
    default_config = os.path.join(get_package_share_directory(PACKAGE), 'config', 'robot_dynamics.yaml')
    arguments = [
        DeclareLaunchArgument('namespace', default_value='', description='namespace of both nodes and their topics'),
        DeclareLaunchArgument('config_file', default_value=default_config,
                              description='parameter file with `dynamics` and `centroidal` sections'),
        DeclareLaunchArgument('use_sim_time', default_value='false', description='use the /clock topic'),
        DeclareLaunchArgument('urdf_file', default_value='',
                              description='URDF file of the robot; empty: as in config_file (there: the '
                                          'robot_description topic)'),
        DeclareLaunchArgument('root_joint', default_value='',
                              description="'fixed' (arm) or 'floating' (legged or mobile base with odom); "
                                          "empty: as in config_file (there: fixed)"),
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=_nodes)])
