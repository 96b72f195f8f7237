"""/diagnostics helpers shared by the nodes: status messages and the input rate meter.
"""
from __future__ import annotations

import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue


class RateMeter:
    """Input rate [Hz] over a sliding count of wall-clock arrivals."""

    def __init__(self, window: int = 200):
        self._times = np.zeros(window)
        self._count = 0

    def tick(self) -> None:
        self._times[self._count % len(self._times)] = time.monotonic()
        self._count += 1

    def rate(self) -> float:
        filled = min(self._count, len(self._times))
        if filled < 2:
            return 0.0
        times = self._times[:filled]
        span = times.max() - times.min()
        return (filled - 1) / span if span > 0 else 0.0


def diagnostic_status(name: str, level: bytes, message: str, values: dict, hardware_id: str = '') -> DiagnosticStatus:
    """A diagnostic_msgs/DiagnosticStatus with ``values`` rendered as strings."""
    status = DiagnosticStatus(name=name, level=level, message=message, hardware_id=hardware_id)
    status.values = [KeyValue(key=str(key), value=_format_value(value)) for key, value in values.items()]
    return status


def _format_value(value) -> str:
    if isinstance(value, float):
        return f'{value:.6g}'
    return str(value)


DIAGNOSTICS_PERIOD = 1.0
"""Default period of /diagnostics [s]."""
