"""Which ``contact_frames`` entries can be contact points of a model, and why the others cannot.

An entry is left out when the model has no such frame, when it repeats an earlier entry (one
point would take each copy's share of one force), or, where forces are estimated from the joint
torques, when no joint lies between it and the root link (the root link or a frame fixed to it:
no joint torque shows a force there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from robot_dynamics.core.model.model import RobotModel, listed_names


@dataclass(frozen=True)
class ContactFrameChoice:
    """``names``: the entries kept (given order); ``indices``: their places in the given list;
    ``missing``: the names the model lacks; ``refused``: each other entry left out, with why in
    words."""

    names: tuple
    indices: tuple
    missing: tuple
    refused: tuple

    @property
    def left_out(self) -> bool:
        """Whether some entry is left out."""
        return bool(self.missing or self.refused)


def chosen_contact_frames(
    robot: RobotModel, given: Sequence[str], need_joint: bool = True
) -> ContactFrameChoice:
    """``given`` (the ``contact_frames``) split into the entries ``robot`` can take and those
    it cannot (module docstring); ``need_joint``: refuse the root link and frames fixed to it."""
    given = tuple(given)
    kept, missing, refused = [], [], []
    for index, name in enumerate(given):
        if not robot.model.existFrame(name):
            missing.append(name)
        elif name in given[:index]:
            refused.append(f'contact frame {name} given twice')
        elif need_joint and on_root(robot, name):
            refused.append(
                f'contact frame {name} is the root link (or fixed to it): no joint torque shows '
                'a force there'
            )
        else:
            kept.append(index)
    names = tuple(given[i] for i in kept)
    return ContactFrameChoice(names, tuple(kept), tuple(missing), tuple(refused))


def on_root(robot: RobotModel, name: str) -> bool:
    """Whether frame ``name`` of ``robot`` has no joint between it and the root link (the
    floating base's own joint, pinocchio's joint 1, aside)."""
    parent = robot.model.frames[robot.frame_id(name)].parentJoint
    return parent <= (1 if robot.floating_base else 0)


def choice_words(robot: RobotModel, choice: ContactFrameChoice) -> str:
    """The entries left out, with why, in words ('' when none is)."""
    parts = list(choice.refused)
    if choice.missing:
        names = ', '.join(choice.missing)
        verb = 'is not a frame' if len(choice.missing) == 1 else 'are not frames'
        parts.insert(
            0,
            f'contact frame {names} {verb} of model "{robot.name}" (its links: '
            f'{listed_names(robot.description.links)})',
        )
    return '; '.join(parts)
