"""ament_python build for robot_dynamics (colcon on a robot; pip here)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = 'robot_dynamics'

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*']),
    package_data={PACKAGE: ['models/*.urdf']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE]),
        ('share/' + PACKAGE, ['package.xml']),
        ('share/' + PACKAGE + '/launch', glob('launch/*.launch.py')),
        ('share/' + PACKAGE + '/config', glob('config/*.yaml') + glob('config/*.rviz')),
        ('share/' + PACKAGE + '/config/robot_profiles', glob('config/robot_profiles/*.yaml')),
        ('share/' + PACKAGE + '/models', glob('robot_dynamics/models/*.urdf')),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='robot_dynamics maintainers',
    maintainer_email='robot-dynamics@example.com',
    description='Live rigid-body dynamics, payload identification and inertia validation for ROS '
    '2.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'dynamics_node = robot_dynamics.ros.entry_points:dynamics_node',
            'centroidal_node = robot_dynamics.ros.entry_points:centroidal_node',
            'sim_robot = robot_dynamics.ros.entry_points:sim_robot',
            'robot_dynamics = robot_dynamics.cli:main',
        ],
    },
)
