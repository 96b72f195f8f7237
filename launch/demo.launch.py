"""The demo as separate processes: sim_robot (bundled arm with a hidden payload),
dynamics_node, centroidal_node, robot_state_publisher (TF for rviz) and rviz2.

    ros2 launch robot_dynamics demo.launch.py [rviz:=false] [use_sim_time:=false]
    ros2 service call /dynamics/identify_payload std_srvs/srv/Trigger

sim_robot reads `config/sim_robot.yaml`, the two nodes `config/robot_dynamics.yaml`
(through robot_dynamics.launch.py); rviz2 shows the model, CoM, ZMP and support polygon
with `config/robot_dynamics.rviz` (fixed frame `odom`). robot_state_publisher publishes the
TF of the bundled arm with its base `fr3_link0` at the origin of `odom`: if you point
sim_robot at another URDF, change it here too. `robot_dynamics demo` runs the same nodes in one process
and drives the services itself.
"""
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

PACKAGE = 'robot_dynamics'


def generate_launch_description() -> LaunchDescription:
    share = get_package_share_directory(PACKAGE)
    use_sim_time = ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)
    arguments = [
        DeclareLaunchArgument('use_sim_time', default_value='false', description='use the /clock topic'),
        DeclareLaunchArgument('rviz', default_value='true', description='start rviz2'),
        DeclareLaunchArgument('sim_config_file', default_value=os.path.join(share, 'config', 'sim_robot.yaml'),
                              description='parameter file of sim_robot'),
    ]
    simulator = Node(package=PACKAGE, executable='sim_robot', name='sim_robot',
                     parameters=[LaunchConfiguration('sim_config_file'), {'use_sim_time': use_sim_time}],
                     output='screen')
    dynamics = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, 'launch', 'robot_dynamics.launch.py')),
        launch_arguments={'use_sim_time': LaunchConfiguration('use_sim_time')}.items())
    with open(os.path.join(share, 'models', 'fr3_arm.urdf')) as urdf:
        description = urdf.read()
    # TF for rviz: the arm's URDF with its base fixed at the origin of `odom` (the centroidal
    # world frame). Its own copy of robot_description is remapped away from sim_robot's.
    placed = description.replace('</robot>', '<link name="odom"/><joint name="odom_to_fr3_link0" type="fixed">'
                                             '<parent link="odom"/><child link="fr3_link0"/></joint></robot>')
    state_publisher = Node(package='robot_state_publisher', executable='robot_state_publisher',
                           parameters=[{'robot_description': placed, 'use_sim_time': use_sim_time}],
                           remappings=[('robot_description', 'robot_state_publisher/robot_description')])
    rviz = Node(package='rviz2', executable='rviz2', name='rviz2',
                arguments=['-d', os.path.join(share, 'config', 'robot_dynamics.rviz')],
                parameters=[{'use_sim_time': use_sim_time}], condition=IfCondition(LaunchConfiguration('rviz')))
    return LaunchDescription(arguments + [simulator, dynamics, state_publisher, rviz])
