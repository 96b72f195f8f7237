"""PyBullet as a third judge of a URDF's inertial parameters.

:func:`judge_inertials` loads a URDF text with ``pybullet.loadURDF`` in a DIRECT (headless)
client, fixed base, its ``<visual>`` and ``<collision>`` elements removed (as for the MuJoCo
judge), twice: with the default flags and with ``URDF_USE_INERTIA_FROM_FILE``. Bullet prints
its warnings with C ``printf``; they are read back from the process's standard output
(redirected to a temporary file while a file loads). Measured with PyBullet 3.2.7:

* by default ``loadURDF`` keeps the URDF mass but not the inertia tensor: it computes the
  inertia from the collision shapes (with none, a tiny default box), so no inertia defect is
  reported or simulated;
* with ``URDF_USE_INERTIA_FROM_FILE`` it uses the tensor's principal moments, and for a tensor
  whose principal moments are negative or violate the triangle inequality it prints
  "Bad inertia tensor properties, setting inertia to zero for link: NAME" and simulates the
  link with zero rotational inertia.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field

_BAD_INERTIA = re.compile(r'Bad inertia tensor properties, setting inertia to zero for link: (\S+)')


@dataclass(frozen=True)
class PyBulletVerdict:
    """What PyBullet did with one URDF: ``refusal`` (why ``loadURDF`` failed, '' if it loaded);
    ``zeroed``: links whose inertia it set to zero with ``URDF_USE_INERTIA_FROM_FILE`` (with its
    warning); ``default_inertias``: link → principal moments [kg·m²] it uses with the default
    flags; ``file_inertias``: the same with ``URDF_USE_INERTIA_FROM_FILE``."""

    refusal: str = ''
    zeroed: dict = field(default_factory=dict)
    default_inertias: dict = field(default_factory=dict)
    file_inertias: dict = field(default_factory=dict)


def judge_inertials(text: str, keep_geometry: bool = False) -> PyBulletVerdict:
    """PyBullet's verdict on the inertial parameters of a URDF text (its visual and collision
    elements removed unless ``keep_geometry``: primitives only, no mesh is resolved)."""
    import pybullet

    try:
        text = text if keep_geometry else geometry_free_urdf(text)
    except ElementTree.ParseError:
        pass  # PyBullet judges the text as it is
    handle, path = tempfile.mkstemp(suffix='.urdf')
    try:
        with os.fdopen(handle, 'w', encoding='utf-8') as stream:
            stream.write(text)
        default, _, refusal = _load(path, 0)
        from_file, printed, _ = _load(path, pybullet.URDF_USE_INERTIA_FROM_FILE)
    finally:
        os.unlink(path)
    zeroed = {match.group(1): match.group(0) for match in _BAD_INERTIA.finditer(printed)}
    return PyBulletVerdict(refusal, zeroed, default, from_file)


def geometry_free_urdf(text: str) -> str:
    """The URDF with every <visual> and <collision> element removed (ParseError if not XML)."""
    root = ElementTree.fromstring(text)
    for link in root.findall('link'):
        for tag in ('visual', 'collision'):
            for element in link.findall(tag):
                link.remove(element)
    return ElementTree.tostring(root, encoding='unicode')


def _load(path: str, flags: int) -> tuple:
    """({link: local inertia diagonal}, what Bullet printed, refusal or '') for one load."""
    import pybullet

    client = pybullet.connect(pybullet.DIRECT)
    try:
        with _captured_stdout() as printed:
            try:
                body = pybullet.loadURDF(
                    path, useFixedBase=True, flags=flags, physicsClientId=client
                )
            except pybullet.error as error:
                return {}, '', str(error)
        inertias = {}
        for index in range(pybullet.getNumJoints(body, physicsClientId=client)):
            link = pybullet.getJointInfo(body, index, physicsClientId=client)[12].decode()
            inertias[link] = tuple(pybullet.getDynamicsInfo(body, index, physicsClientId=client)[2])
        return inertias, ''.join(printed), ''
    finally:
        pybullet.disconnect(client)


@contextlib.contextmanager
def _captured_stdout():
    """Yield a list that receives, when the block ends, what was written to the C-level
    standard output (file descriptor 1) inside it."""
    sys.stdout.flush()
    saved = os.dup(1)
    printed: list = []
    with tempfile.TemporaryFile(mode='w+') as capture:
        os.dup2(capture.fileno(), 1)
        try:
            yield printed
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            capture.seek(0)
            printed.append(capture.read())
