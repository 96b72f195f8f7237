"""The demo as separate processes: sim_robot (bundled arm with a hidden payload),
dynamics_node and centroidal_node, and with rviz robot_state_publisher (TF) and rviz2.

    ros2 launch robot_dynamics demo.launch.py [rviz:=false] [namespace:=arm] \
        [config_file:=...] [sim_config_file:=...]
    ros2 service call /dynamics/identify_payload std_srvs/srv/Trigger

sim_robot reads `config/sim_robot.yaml`, the two nodes `config/robot_dynamics.yaml` (built as
robot_dynamics.launch.py builds them); all of them, and robot_state_publisher, run in
`namespace`. rviz2 shows the model, CoM, ZMP and support polygon with
`config/robot_dynamics.rviz` (fixed frame `odom`; its topics moved into `namespace`).
robot_state_publisher publishes the TF of the bundled arm with its base `fr3_link0` at the
origin of `odom`: if you point sim_robot at another URDF, change it here too. The simulator
follows the wall clock and publishes no /clock, so the demo offers no use_sim_time.
`robot_dynamics demo` runs the same nodes in one process and drives the services itself.
"""

import importlib.util
import os
import tempfile

from ament_index_python.packages import get_package_share_directory
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from launch import LaunchDescription

PACKAGE = 'robot_dynamics'


def _robot_launch(share: str):
    """robot_dynamics.launch.py as a module (its node builder; including it would also offer its
    use_sim_time, which the demo cannot honour)."""
    spec = importlib.util.spec_from_file_location(
        'robot_dynamics_launch', os.path.join(share, 'launch', 'robot_dynamics.launch.py')
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _viewer(share: str, namespace: str) -> list:
    """robot_state_publisher (TF of the bundled arm, its base at the origin of `odom`) and rviz2."""
    with open(os.path.join(share, 'models', 'fr3_arm.urdf')) as urdf:
        description = urdf.read()
    # Its own copy of robot_description is remapped away from sim_robot's.
    placed = description.replace(
        '</robot>',
        '<link name="odom"/><joint name="odom_to_fr3_link0" type="fixed"><parent '
        'link="odom"/><child link="fr3_link0"/></joint></robot>',
    )
    state_publisher = Node(
        package='robot_state_publisher',
        executable='robot_state_publisher',
        namespace=namespace,
        parameters=[{'robot_description': placed}],
        remappings=[('robot_description', 'robot_state_publisher/robot_description')],
    )
    with open(os.path.join(share, 'config', 'robot_dynamics.rviz')) as config:
        rviz_config = config.read()
    if namespace:  # the displays' topics are absolute
        rviz_config = rviz_config.replace('Value: /', f'Value: /{namespace.strip("/")}/')
    moved = tempfile.NamedTemporaryFile('w', prefix='robot_dynamics_', suffix='.rviz', delete=False)
    with moved:
        moved.write(rviz_config)
    rviz = Node(package='rviz2', executable='rviz2', name='rviz2', arguments=['-d', moved.name])
    return [state_publisher, rviz]


def _nodes(context) -> list:
    def argument(name: str) -> str:
        return LaunchConfiguration(name).perform(context)

    share = get_package_share_directory(PACKAGE)
    namespace = argument('namespace')
    simulator = Node(
        package=PACKAGE,
        executable='sim_robot',
        name='sim_robot',
        namespace=namespace,
        parameters=[argument('sim_config_file')],
        output='screen',
    )
    nodes = [simulator] + _robot_launch(share).dynamics_nodes(
        namespace, argument('config_file'), False, {}
    )
    if argument('rviz').lower() in ('true', '1'):
        nodes += _viewer(share, namespace)
    return nodes


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    arguments = [
        DeclareLaunchArgument(
            'rviz',
            default_value='true',
            choices=_robot_launch(share).BOOLEAN_CHOICES,
            description='start rviz2 and robot_state_publisher (its TF)',
        ),
        DeclareLaunchArgument(
            'namespace', default_value='', description='namespace of every node and its topics'
        ),
        DeclareLaunchArgument(
            'config_file',
            default_value=os.path.join(share, 'config', 'robot_dynamics.yaml'),
            description='parameter file of dynamics and centroidal',
        ),
        DeclareLaunchArgument(
            'sim_config_file',
            default_value=os.path.join(share, 'config', 'sim_robot.yaml'),
            description='parameter file of sim_robot',
        ),
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=_nodes)])
