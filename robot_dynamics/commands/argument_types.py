"""argparse types shared by the commands: a refused value is named with its allowed range."""

from __future__ import annotations

import argparse
import math


def whole_number(low: int, high: float = math.inf):
    """An argparse type: a whole number in [``low``, ``high``], refused with the range."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'{text!r} is not a whole number') from None
        if not low <= value <= high:
            upper = '' if high == math.inf else f' and ≤ {high:g}'
            raise argparse.ArgumentTypeError(f'must be ≥ {low}{upper}, got {value}')
        return value

    return parse


def number(low: float, high: float = math.inf, above: bool = False):
    """An argparse type: a finite number in [``low``, ``high``] (``above``: in (``low``,
    ``high``]), refused with the range."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f'{text!r} is not a number') from None
        inside = (value > low if above else value >= low) and value <= high
        if not (math.isfinite(value) and inside):
            lower = f'> {low:g}' if above else f'≥ {low:g}'
            upper = '' if high == math.inf else f' and ≤ {high:g}'
            raise argparse.ArgumentTypeError(f'must be {lower}{upper}, got {text}')
        return value

    return parse
