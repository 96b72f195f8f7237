"""Bundled robot descriptions (package data, also installed to share/robot_dynamics/models).

* ``fr3_arm.urdf``: 7-DoF arm with Franka FR3 modified-DH kinematics.
* ``quadruped.urdf``: floating-base quadruped, torso + 12 revolute joints, feet frames.
"""

from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent
ARM_URDF = MODELS_DIR / 'fr3_arm.urdf'
QUADRUPED_URDF = MODELS_DIR / 'quadruped.urdf'


def model_path(name: str) -> Path:
    """Path of a bundled model file by name (e.g. ``'fr3_arm.urdf'``)."""
    path = MODELS_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f'no bundled model {name!r} in {MODELS_DIR}')
    return path
