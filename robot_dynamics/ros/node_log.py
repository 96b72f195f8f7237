"""Logging that a message cannot flood: cut texts, rate-limited lines, rejection counts, service
handlers that answer instead of raising.
"""

from __future__ import annotations

import functools
import time
from collections import Counter

LOG_TEXT_LIMIT = 200
"""Characters of one log line (or diagnostics value) beyond which the text is cut: a message
field (a joint name, a description) can be as long as its sender likes."""


def shorten(text, limit: int = LOG_TEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    text = str(text)
    return text if len(text) <= limit else f'{text[:limit]}… ({len(text)} characters in all)'


class RateLimitedLogger:
    """Logs each key at most once per ``period`` seconds (wall time)."""

    def __init__(self, logger, period: float = 1.0):
        self._logger = logger
        self._period = period
        self._last: dict = {}

    def _due(self, key: str) -> bool:
        now = time.monotonic()
        if now - self._last.get(key, -1e9) < self._period:
            return False
        self._last[key] = now
        return True

    def warn(self, key: str, message: str) -> None:
        if self._due(key):
            self._logger.warning(shorten(message))

    def error(self, key: str, message: str) -> None:
        if self._due(key):
            self._logger.error(shorten(message))


class RejectionCounter:
    """Counts rejected inputs by reason and logs each reason at most once per second."""

    def __init__(self, logger):
        self.counts: Counter = Counter()
        self.last_message: dict = {}  # reason -> the latest rejection's words
        self._log = RateLimitedLogger(logger)
        self._said: Counter = Counter()

    def reject(self, reason: str, message: str) -> None:
        self.counts[reason] += 1
        self.last_message[reason] = message
        self._log.warn(
            reason, f'rejected input ({reason}, {self.counts[reason]} so far): {message}'
        )

    def total(self) -> int:
        return sum(self.counts.values())

    def news(self) -> str:
        """The rejections since the previous call (a diagnostics period), most frequent reason
        first with its latest words, e.g. '; rejected since the last status: out_of_order 410
        (stamp 12.3 s is older than ...)'; '' when there were none."""
        counts = Counter(self.counts)
        recent, self._said = counts - self._said, counts
        if not recent:
            return ''
        reasons = recent.most_common()
        listed = ', '.join(f'{reason} {count}' for reason, count in reasons[:4])
        return (
            f'; rejected since the last status: {listed} '
            f'({shorten(self.last_message.get(reasons[0][0], ""))})'
        )


def never_raises(handler):
    """A node's service handler that answers ``success=false`` with the error instead of
    raising (and logs it): an exception in a callback would take the node's executor, and the
    node, down. For any service response with ``success`` and ``message`` (Trigger, SetBool)."""

    @functools.wraps(handler)
    def guarded(node, request, response):
        try:
            return handler(node, request, response)
        except Exception as error:  # a node never dies from a call
            node.get_logger().error(
                f'{handler.__name__.lstrip("_")} failed: {shorten(repr(error))}'
            )
            response.success, response.message = False, f'internal error: {shorten(error)}'
            return response

    return guarded
