"""`robot_dynamics bench payload`: the identify_payload service's answer on the proving ground, for
the `ideal` profile, the `realistic` one without effort scale errors and the `realistic` one,
in the same run.

For each profile and each of ``--seeds`` profile draws the bundled arm tracks the scripted
excitation on MuJoCo (published at 250 Hz, tracking bandwidth 30 Hz, as the demo's sim_robot):
four periods (20 s) with the gripper empty, the baseline, then the demo's 1.5 kg payload
(config/sim_robot.yaml) is welded to tool0 at the period boundary and four more periods are
recorded. The core call the service makes
(:func:`~robot_dynamics.core.identification.payload.identify_payload`, mode auto, the node's
default options, ``effort_scale_uncertainty`` 0.02) gets the loaded recording and the baseline.

Targets: on `realistic` with no scale error, mass within 10 g and CoM within 2 mm; with the
profile's ±2 % per-joint effort scale errors, every error within 3× the reported 1σ (mass, and
the CoM per axis).
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from robot_dynamics.commands.argument_types import whole_number

MASS_TARGET = 0.010  # [kg]
COM_TARGET = 0.002  # [m]
SIGMA_TARGET = 3.0
RATES = (1000.0, 250.0)  # [Hz] joint-state rates identified from the same run; the first is judged
PERIODS = 4
PROFILES = ('ideal', 'realistic, no scale error', 'realistic')


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group('bench payload')
    group.add_argument(
        '--seeds',
        type=whole_number(1),
        default=5,
        help='payload: profile draws per profile (default 5)',
    )


def _profile(name: str):
    import yaml

    from robot_dynamics.simulation.profiles import load_profile, profile_from_dict, profile_path

    if name != 'realistic, no scale error':
        return load_profile(name)
    document = yaml.safe_load(profile_path('realistic').read_text())
    document['joints']['default']['scale_error'] = 0.0
    return profile_from_dict(document, name)


def _demo_settings() -> dict:
    from robot_dynamics.ros.runner import shipped_parameters

    return shipped_parameters('sim_robot.yaml', 'sim_robot')


def _demo_payload():
    from robot_dynamics.core.model.inertia import InertialParameters

    settings = _demo_settings()
    ixx, ixy, ixz, iyy, iyz, izz = (float(x) for x in settings['payload_inertia'])
    inertia = [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]
    return (
        settings['payload_link'],
        InertialParameters(float(settings['payload_mass']), settings['payload_com'], inertia),
    )


def identify_once(profile_name: str, seed: int) -> dict:
    """One baseline + loaded run and the service's answer at each of :data:`RATES`: {rate [Hz]:
    errors and 1σ [kg, m]}."""
    from robot_dynamics.models import ARM_URDF
    from robot_dynamics.simulation.scenes import ArmScene

    link, payload = _demo_payload()
    scene = ArmScene(
        ARM_URDF.read_text(),
        _profile(profile_name),
        seed,
        bandwidth_hz=float(_demo_settings()['tracking_bandwidth']),
        payload_link=link,
        payload=payload,
    )
    duration = PERIODS * scene.trajectory.duration
    baseline = scene.record(duration, RATES[0])
    scene.set_carrying(True)
    loaded = scene.record(duration, RATES[0])
    answers = {}
    for rate in RATES:
        every = round(RATES[0] / rate)
        answer = _answer(
            scene.nominal, _every(loaded, every), _every(baseline, every), link, payload
        )
        answers[rate] = {'profile': profile_name, 'seed': seed, 'rate_hz': rate, **answer}
    return answers


def _every(recording, every: int):
    """Every ``every``-th sample of ``recording`` (from the first)."""
    from robot_dynamics.core.identification.recording import Recording

    return Recording(
        recording.time[::every],
        recording.positions[::every],
        recording.velocities[::every],
        recording.efforts[::every],
        recording.joint_names,
    )


def _answer(robot, loaded, baseline, link: str, payload) -> dict:
    """The service's answer for ``loaded`` with ``baseline``: errors and 1σ [kg, m]."""
    from robot_dynamics.core.identification.payload import identify_payload

    report = identify_payload(robot, loaded, link, baseline=baseline)
    if not report.success:
        return {'success': False, 'reason': report.reason}
    return {
        'success': True,
        'mass_error_kg': report.mass - payload.mass,
        'mass_std_kg': report.mass_std,
        'com_error_m': (np.asarray(report.com) - payload.com).tolist(),
        'com_std_m': list(report.com_std),
    }


def summarise(runs: list) -> dict:
    """Worst errors, the largest error / 1σ ratios and the verdicts over one profile's runs."""
    answered = [run for run in runs if run['success']]
    if not answered:
        return {'answered': 0, 'runs': len(runs), 'met': False}
    mass_errors = np.array([abs(run['mass_error_kg']) for run in answered])
    com_errors = np.array([run['com_error_m'] for run in answered])
    mass_ratio = mass_errors / np.array([run['mass_std_kg'] for run in answered])
    com_ratio = np.abs(com_errors) / np.array([run['com_std_m'] for run in answered])
    return {
        'answered': len(answered),
        'runs': len(runs),
        'mass_error_max_kg': float(mass_errors.max()),
        'mass_std_median_kg': float(np.median([run['mass_std_kg'] for run in answered])),
        'com_error_max_m': float(np.linalg.norm(com_errors, axis=1).max()),
        'com_std_median_m': float(
            np.median(np.linalg.norm([r['com_std_m'] for r in answered], axis=1))
        ),
        'mass_error_over_sigma_max': float(mass_ratio.max()),
        'com_error_over_sigma_max': float(com_ratio.max()),
        'within_accuracy': bool(
            len(answered) == len(runs)
            and mass_errors.max() <= MASS_TARGET
            and np.linalg.norm(com_errors, axis=1).max() <= COM_TARGET
        ),
        'within_3_sigma': bool(
            len(answered) == len(runs)
            and mass_ratio.max() <= SIGMA_TARGET
            and com_ratio.max() <= SIGMA_TARGET
        ),
    }


def run(args: argparse.Namespace) -> int:
    """Print the table; exit 0 when both targets are met (accuracy without scale errors, 3σ with
    them)."""
    answers = {name: [identify_once(name, seed) for seed in range(args.seeds)] for name in PROFILES}
    runs = {
        rate: {name: [each[rate] for each in answers[name]] for name in PROFILES} for rate in RATES
    }
    summaries = {
        rate: {name: summarise(results) for name, results in by_profile.items()}
        for rate, by_profile in runs.items()
    }
    met = _met(summaries[RATES[0]])
    if args.format == 'json':
        print(json.dumps({'runs': runs, 'summaries': summaries, 'met': met}, indent=2))
    else:
        print('\n'.join(_text(summaries[rate], args.seeds, rate) for rate in RATES))
    return 0 if met else 1


def _met(summaries: dict) -> bool:
    """Both targets: accuracy without scale errors, 3σ with them."""
    return summaries['realistic, no scale error'].get('within_accuracy', False) and summaries[
        'realistic'
    ].get('within_3_sigma', False)


def _text(summaries: dict, seeds: int, rate: float) -> str:
    judged = '' if rate == RATES[0] else ' (not judged)'
    lines = [
        f'bench payload: proving ground arm, 1.5 kg on tool0, {PERIODS} periods with a baseline, '
        f'joint states at {rate:g} Hz{judged}, {seeds} profile draws per column; worst over the '
        'draws',
        f'{"":34}' + ''.join(f'{name:>28}' for name in summaries),
    ]

    def row(label: str, key: str, scale: float, digits: int):
        cells = ''
        for summary in summaries.values():
            value = summary.get(key)
            cells += f'{"n/a" if value is None else f"{scale * value:.{digits}f}":>28}'
        lines.append(f'{label:34}{cells}')

    answered = [f"{s['answered']} of {s['runs']}" for s in summaries.values()]
    lines.append(f'{"answered":34}' + ''.join(f'{cell:>28}' for cell in answered))
    row('mass error, worst [g]', 'mass_error_max_kg', 1e3, 2)
    row('mass 1σ, median [g]', 'mass_std_median_kg', 1e3, 2)
    row('CoM error, worst [mm]', 'com_error_max_m', 1e3, 2)
    row('CoM 1σ (vector), median [mm]', 'com_std_median_m', 1e3, 2)
    row('mass error / 1σ, worst', 'mass_error_over_sigma_max', 1.0, 2)
    row('CoM error / 1σ per axis, worst', 'com_error_over_sigma_max', 1.0, 2)
    accuracy = summaries['realistic, no scale error'].get('within_accuracy', False)
    honesty = summaries['realistic'].get('within_3_sigma', False)
    lines.append(
        f'{rate:g} Hz: target realistic without scale error within {1e3 * MASS_TARGET:g} g and '
        f'{1e3 * COM_TARGET:g} mm: {"met" if accuracy else "NOT met"}; realistic within '
        f'{SIGMA_TARGET:g}σ: {"met" if honesty else "NOT met"}'
    )
    return '\n'.join(lines)
