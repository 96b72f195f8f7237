"""The identified model written out: the URDF with identified ``<inertial>`` elements and the
friction YAML that :mod:`~robot_dynamics.core.dynamics.friction` reads back.

Input: a standard parameter vector of
:func:`~robot_dynamics.core.identification.whole_robot.identify`
(10 pinocchio parameters per body, about the joint frame, then the per-joint terms of its
:class:`~robot_dynamics.core.identification.whole_robot.ModelTerms`), SI units.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import numpy as np

from robot_dynamics.core.dynamics.regressor import body_link_names
from robot_dynamics.core.identification.whole_robot import ModelTerms, friction_values
from robot_dynamics.core.model.inertia import InertialParameters
from robot_dynamics.core.model.model import RobotModel
from robot_dynamics.core.text_files import yaml_scalar


def friction_yaml(
    robot: RobotModel, terms: ModelTerms, standard: np.ndarray, effort_delay: float = 0.0
) -> str:
    """YAML text of the per-joint terms: rotor_inertia [kg·m²], viscous [N·m·s/rad],
    coulomb [N·m], offset [N·m], with the ``stribeck`` term stribeck_static [N·m] and
    stribeck_velocity [rad/s], and with a smooth sign its sign_velocity [rad/s] (the model of
    :mod:`robot_dynamics.core.dynamics.friction`); and the ``effort_delay`` [s] the efforts
    were paired with for the fit."""
    lines = [
        '# Identified per-joint terms (robot_dynamics identify). Units: rotor_inertia kg·m²,',
        '# viscous N·m·s/rad, coulomb N·m, offset N·m, stribeck_static N·m,',
        '# stribeck_velocity rad/s, sign_velocity rad/s; tau = ... + viscous*dq + offset',
        '#   + (coulomb + (stribeck_static - coulomb)*exp(-(dq/stribeck_velocity)^2))',
        '#     * tanh(dq/sign_velocity)   (sign(dq) without a sign_velocity)',
        f'model: {yaml_scalar(robot.name)}',
        f'effort_delay: {float(effort_delay)!r}  # s: identified for dynamics_node\'s effort_delay',
        'joints:',
    ]
    sign_velocities = np.broadcast_to(terms.sign_velocity, (robot.num_joints,))
    for (joint, values), sign_velocity in zip(
        friction_values(robot, terms, standard).items(), sign_velocities
    ):
        if 'stribeck' in values:
            excess = values.pop('stribeck')
            values['stribeck_static'] = values.get('coulomb', 0.0) + excess
            values['stribeck_velocity'] = terms.stribeck_velocity
        if sign_velocity > 0.0 and {'coulomb', 'stribeck_static'} & set(values):
            values['sign_velocity'] = float(sign_velocity)
        lines.append(f'  {yaml_scalar(joint)}:')
        lines.extend(f'    {term}: {value!r}' for term, value in values.items())
    return '\n'.join(lines) + '\n'


def body_inertials(robot: RobotModel, standard: np.ndarray) -> dict:
    """{link: InertialParameters in that link's frame} for the body of every joint; a body
    with mass ≤ 1e-9 kg comes back massless."""
    inertials = {}
    for b, link in enumerate(body_link_names(robot)):
        parameters = standard[10 * b : 10 * b + 10]
        if parameters[0] <= 1e-9:
            inertials[link] = InertialParameters.point_mass(0.0, np.zeros(3))
        else:
            inertials[link] = InertialParameters.from_pinocchio_vector(parameters)
    return inertials


def identified_urdf(robot: RobotModel, standard: np.ndarray) -> str:
    """The model's URDF with every joint-moved link's ``<inertial>`` replaced by the
    identified body (CoM origin, rpy 0, inertia about the CoM in link axes).

    Links rigidly fixed to such a link are merged into its body by pinocchio, so their own
    ``<inertial>`` is removed to avoid counting their mass twice.
    """
    root = ElementTree.fromstring(robot.description.text)
    links = {element.get('name'): element for element in root.findall('link')}
    inertials = body_inertials(robot, standard)
    for link_name, parameters in inertials.items():
        element = links[link_name]
        for old in element.findall('inertial'):
            element.remove(old)
        element.insert(0, _inertial_element(parameters))
    for link_name in _fixed_descendants(robot, set(inertials)):
        for old in links[link_name].findall('inertial'):
            links[link_name].remove(old)
    ElementTree.indent(root, space='  ')
    return (
        '<?xml version="1.0"?>\n<!-- inertials identified by robot_dynamics identify -->\n'
        + ElementTree.tostring(root, encoding='unicode')
        + '\n'
    )


def _fixed_descendants(robot: RobotModel, body_links: set) -> list:
    """Links attached by fixed joints (transitively) to a body link."""
    found, frontier = [], list(body_links)
    while frontier:
        parent = frontier.pop()
        for joint in robot.description.joints.values():
            if joint.parent == parent and joint.type == 'fixed':
                found.append(joint.child)
                frontier.append(joint.child)
    return found


def _inertial_element(parameters: InertialParameters) -> ElementTree.Element:
    inertial = ElementTree.Element('inertial')
    ElementTree.SubElement(
        inertial, 'origin', xyz=' '.join(f'{v:.9g}' for v in parameters.com), rpy='0 0 0'
    )
    ElementTree.SubElement(inertial, 'mass', value=f'{parameters.mass:.9g}')
    tensor = parameters.inertia_com
    ElementTree.SubElement(
        inertial,
        'inertia',
        ixx=f'{tensor[0, 0]:.9g}',
        ixy=f'{tensor[0, 1]:.9g}',
        ixz=f'{tensor[0, 2]:.9g}',
        iyy=f'{tensor[1, 1]:.9g}',
        iyz=f'{tensor[1, 2]:.9g}',
        izz=f'{tensor[2, 2]:.9g}',
    )
    return inertial
