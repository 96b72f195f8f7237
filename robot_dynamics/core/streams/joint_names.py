"""Why the joint names a stream sends miss the model's: a prefix that differs.

The usual cause of joint states that match no model joint is a prefix: a driver's
``tf_prefix`` (``ur_shoulder_pan_joint`` against ``shoulder_pan_joint``), arms of a two-arm
cell (``left_``), or the same arm described under another name (``panda_joint1`` against
``fr3_joint1``). :func:`renamed_prefix_hint` finds the one prefix substitution that turns the
most sent names into model names and says it in words.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Optional, Sequence

MIN_COMMON_SUFFIX = 3
"""Characters two names must share at their end to be read as one joint under two prefixes."""

SEPARATORS = '_-/.'
"""Characters that end a prefix."""

MAX_NAMES = 64
"""Names of each side looked at (the pairs are compared)."""

MAX_CANDIDATES = 8
"""Prefix substitutions tried (those the most pairs of names share)."""


def renamed_prefix_hint(sent: Iterable[str], expected: Sequence[str]) -> str:
    """A sentence (starting with '; ') saying which prefix turns the ``sent`` names into the
    ``expected`` model names, when one prefix substitution explains at least half of the
    expected names (and one of them at least); '' otherwise."""
    sent = set(list(sent)[:MAX_NAMES])
    expected = list(expected)[:MAX_NAMES]
    best, best_count = None, 0
    for candidate, _ in _prefix_pairs(sent, expected).most_common(MAX_CANDIDATES):
        count = sum(1 for name in expected if _renamed(name, *candidate) in sent)
        if count > best_count:
            best, best_count = candidate, count
    if best is None or 2 * best_count < len(expected):
        return ''
    ours, theirs = best
    example = next(name for name in expected if _renamed(name, ours, theirs) in sent)
    pair = f"'{_renamed(example, ours, theirs)}' for '{example}'"
    if not ours:
        change = f"carry the prefix '{theirs}' where the model's have none"
    elif not theirs:
        change = f"lack the model's prefix '{ours}'"
    else:
        change = f"have '{theirs}' where the model's have '{ours}'"
    return f"; the names {change} ({pair}): a tf_prefix, or another robot's description"


def _prefix_pairs(sent: set, expected: list) -> Counter:
    """How many pairs of names share an ending of at least :data:`MIN_COMMON_SUFFIX`
    characters and differ before it, per (model prefix, sent prefix)."""
    pairs: Counter = Counter()
    for theirs in sent:
        for ours in expected:
            shared = _common_suffix(theirs, ours)
            while shared and ours[len(ours) - shared] in SEPARATORS:  # the prefix keeps its '_'
                shared -= 1
            if shared >= MIN_COMMON_SUFFIX and theirs != ours:
                pairs[(ours[: len(ours) - shared], theirs[: len(theirs) - shared])] += 1
    return pairs


def _renamed(name: str, ours: str, theirs: str) -> Optional[str]:
    """``name`` with the model's prefix ``ours`` replaced by ``theirs`` (None without it)."""
    return theirs + name[len(ours) :] if name.startswith(ours) else None


def _common_suffix(first: str, second: str) -> int:
    count = 0
    for a, b in zip(reversed(first), reversed(second)):
        if a != b:
            break
        count += 1
    return count
