"""The two ROS 2 distributions the suite runs on have consistent install files: Kilted
(requirements-test.txt, constraints.txt) and Jazzy (requirements-jazzy.txt, which names the
Jazzy release of every ROS wheel requirements.txt names, and constraints-jazzy.txt). Each
constraints file pins everything its requirements name for its Python (environment markers
evaluated), and the rclpy of its distribution; so does the file of the core's run on Python 3.10
(Humble's), which has no ROS wheels."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = {
    # requirements file: (constraints file, Python, rclpy major version of the distribution)
    'requirements-test.txt': ('constraints.txt', '3.11', 9),  # Kilted
    'requirements-jazzy.txt': ('constraints-jazzy.txt', '3.12', 7),  # Jazzy
}


def _normalized(name: str) -> str:
    return re.sub(r'[-_.]+', '-', name).lower()


def _requirements(file_name: str, python: str = '3.11') -> set:
    """Normalized project names ``file_name`` requires on Python ``python``, following ``-r``
    includes."""
    names = set()
    for line in (ROOT / file_name).read_text().splitlines():
        line = line.split('#')[0].strip()
        if line.startswith('-r '):
            names |= _requirements(line[3:].strip(), python)
        elif line:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is None or marker.evaluate({'python_version': python}):
                names.add(_normalized(requirement.name))
    return names


def _pins(file_name: str) -> dict:
    pins = {}
    for line in (ROOT / file_name).read_text().splitlines():
        if '==' in line and not line.startswith('#'):
            name, version = line.split('==')
            pins[_normalized(name)] = version.strip()
    return pins


def test_jazzy_names_the_jazzy_release_of_every_ros_wheel():
    ros = {name for name in _requirements('requirements.txt') if name.startswith('ros-')}
    jazzy = {name for name in _requirements('requirements-jazzy.txt') if name.startswith('ros-')}
    assert len(ros) >= 10
    assert {name.replace('ros-', 'ros-jazzy-', 1) for name in ros} == jazzy - ros


@pytest.mark.parametrize('requirements', sorted(DISTRIBUTIONS))
def test_every_requirement_is_pinned_with_the_distributions_rclpy(requirements):
    constraints, python, rclpy_major = DISTRIBUTIONS[requirements]
    pins = _pins(constraints)
    assert sorted(_requirements(requirements, python) - set(pins)) == []
    assert int(pins['ros-rclpy'].split('.')[0]) == rclpy_major
    assert int(pins['rclpy'].split('.')[0]) == rclpy_major
    jazzy_pins = {name: version for name, version in pins.items() if 'jazzy' in name}
    assert bool(jazzy_pins) == (constraints == 'constraints-jazzy.txt')


def test_the_python_310_core_file_names_every_runtime_requirement_but_ros_and_is_pinned():
    """requirements-core-py310.txt (`make test-core-py310`): requirements.txt without the ROS
    wheels (none exist for Python 3.10) and matplotlib (the demo's plots: the demo needs ROS 2);
    constraints-core-py310.txt pins all of it, MuJoCo at a 3.x release (4 needs Python 3.11)."""
    runtime = _requirements('requirements.txt', '3.10')
    core = _requirements('requirements-core-py310.txt', '3.10')
    assert {name for name in runtime if not name.startswith('ros-')} - {'matplotlib'} <= core
    assert not {name for name in core if name.startswith('ros-')}
    pins = _pins('constraints-core-py310.txt')
    assert sorted(core - set(pins)) == []
    assert pins['mujoco'].startswith('3.')
    assert not {name for name in pins if name.startswith('ros-') or name == 'rclpy'}
