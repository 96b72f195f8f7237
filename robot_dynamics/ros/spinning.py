"""How the package's node processes spin and stop.

Every node process runs :func:`run_nodes`: rclpy without its own signal handlers, SIGINT and
SIGTERM turned into one stop request from the first moment (also while the nodes are being
built), the nodes' topic callbacks on rclpy's EventsExecutor in the main thread (the
lowest-latency executor in rclpy; the single-threaded one where it does not exist) and their
:class:`~robot_dynamics.ros.service_host.ServiceHost` companions on a single-threaded executor
in a background thread, then an orderly teardown.

Why not rclpy's handlers: they shut the context down from the signal handler while both
executors may be inside a wait (an RCLError or InvalidHandle traceback, or a crash, in the
other thread), and a second signal (a terminal's Ctrl-C reaches the whole process group and
``ros2 launch`` forwards another SIGINT to each node) raises KeyboardInterrupt in the middle
of the teardown. Here the first signal stops the executors; later ones are ignored.

A teardown that has not ended :data:`TEARDOWN_LIMIT` seconds after the signal (a thread stuck in
the middleware or in a child process's exit) would otherwise hang until ``ros2 launch`` kills
the process with SIGKILL: the process then writes every thread's Python stack to stderr and
exits with status 1, so that the hang ends and shows where it was. Stderr can be a pipe nobody
reads any more (``ros2 launch`` dies of a SIGTERM to the process group at once), so one second
before, the stacks also go to the node's ROS log file (``ROS_LOG_DIR``) when a thread can run,
as does an exception that ends the process.

:class:`NodeSpinner` is also what :class:`~robot_dynamics.ros.runner.InProcessRunner` spins
its executors with, in background threads.
"""

from __future__ import annotations

import faulthandler
import gc
import signal
import socket
import sys
import threading
import time
import traceback
from typing import Callable, Optional, Sequence

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from robot_dynamics.core.errors import RobotDynamicsError
from robot_dynamics.ros.rclpy_compat import EventsExecutor

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

TEARDOWN_LIMIT = 12.0
"""Seconds a node process may take to end after SIGINT/SIGTERM before it reports its stacks and
exits with status 1: longer than the description listener may take to end
(:data:`~robot_dynamics.ros.description_listener.STOP_TIMEOUT`), shorter than the 15 s after which
``ros2 launch`` kills a node (SIGTERM after 5 s, which the node ignores, SIGKILL 10 s later)."""


class NodeSpinner:
    """An executor spinning ``nodes`` in the calling thread until :meth:`stop`.

    ``low_latency``: rclpy's EventsExecutor (C++; the single-threaded executor where rclpy
    has none, see :mod:`~robot_dynamics.ros.rclpy_compat`), which does not rebuild a wait set
    in Python for every callback; otherwise rclpy's single-threaded executor.

    :meth:`stop` may be called from any thread (or a signal watcher) and ends the spin at once
    even when no message arrives and every timer waits on a clock that stands still
    (``use_sim_time`` without ``/clock``): it triggers a guard condition of the first node, or,
    on the EventsExecutor (no guard conditions; its ``wake`` neither interrupts a wait nor
    returns while one without timeout is under way), creates a due timer on the steady clock;
    the EventsExecutor also waits at most :attr:`POLL_PERIOD`. :meth:`close` shuts the executor
    down once :meth:`spin` has returned: ``Executor.shutdown`` destroys its own guard condition,
    which a thread still waiting in the executor would then use."""

    POLL_PERIOD = 0.1  # [s] longest wait of the EventsExecutor between two looks at stop()

    def __init__(self, nodes: Sequence[Node], low_latency: bool = False):
        self._nodes = list(nodes)
        context = nodes[0].context if nodes else None
        self._events = low_latency and EventsExecutor is not None and bool(nodes)
        if self._events:
            self.executor = EventsExecutor(
                context=context
            )  # enables faulthandler (a C++ crash shows Python stacks)
            self._wake = None
        else:
            self.executor = SingleThreadedExecutor(context=context)
            self._wake = nodes[0].create_guard_condition(lambda: None) if nodes else None
        self._stopping = threading.Event()
        self._wake_lock = threading.Lock()
        self._wake_timer = None
        self._spun_out = False
        for node in nodes:
            self.executor.add_node(node)

    def add(self, node: Node) -> None:
        """Spin ``node`` too (also while :meth:`spin` runs)."""
        self.executor.add_node(node)

    def spin(self) -> None:
        """Execute callbacks until :meth:`stop` (or until the context is shut down)."""
        if not self._nodes:
            return
        timeout = self.POLL_PERIOD if self._events else None
        try:
            while not self._stopping.is_set() and self.executor.context.ok():
                self.executor.spin_once(timeout_sec=timeout)
        except ExternalShutdownException:
            pass
        finally:
            self._drop_wake_timer()

    def stop(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._wake is not None:
            self._wake.trigger()
        elif self._events:
            self._wake_events_executor()

    def _wake_events_executor(self) -> None:
        """A timer due at once on the steady clock: an event the waiting EventsExecutor acts on."""
        with self._wake_lock:
            if self._spun_out:
                return
            try:
                self._wake_timer = self._nodes[0].create_timer(
                    0.0, lambda: None, clock=Clock(clock_type=ClockType.STEADY_TIME)
                )
            except (
                Exception
            ):  # node or context already gone: the spin ends within POLL_PERIOD anyway
                pass

    def _drop_wake_timer(self) -> None:
        """Once the spin is over: the wake-up timer would fire without end on another executor."""
        with self._wake_lock:
            self._spun_out = True
            timer, self._wake_timer = self._wake_timer, None
        if timer is not None:
            self._nodes[0].destroy_timer(timer)

    def close(self) -> None:
        self.executor.shutdown()


def steady_timer(node: Node, period: float, callback: Callable[[], None]):
    """A timer of ``node`` every ``period`` seconds of the steady (monotonic) clock, whatever
    ``use_sim_time`` says: for the nodes' housekeeping (diagnostics, effective mass).

    Timers on the node's ROS clock stand still while a bag is paused and, on rclpy's
    EventsExecutor with simulated time, can stop for minutes: with ``/clock`` ten times faster
    than real time and the executor busy, the executor dispatched one ROS-time timer dozens of
    times at the same instant, each call moving its next expiry one period on, so the next
    diagnostics came that many periods of simulated time later (docs/reliability.md)."""
    return node.create_timer(period, callback, clock=Clock(clock_type=ClockType.STEADY_TIME))


class ShutdownSignals:
    """SIGINT and SIGTERM as one stop request, acted on at once.

    Python runs a signal handler only when the main thread executes bytecode, which it does
    not while an executor waits, so the signal is read from :func:`signal.set_wakeup_fd`'s
    socket by a thread, which calls the registered callbacks (once). The Python-level handler
    does nothing: installing it replaces the default actions (KeyboardInterrupt, termination),
    so no later signal interrupts the teardown. Main thread only. :meth:`close` leaves both
    signals ignored: the process is exiting, and Python's exit would restore the default
    actions (a late signal then killed the process with status −2)."""

    def __init__(self):
        self.requested = threading.Event()
        self._callbacks: list = []
        self._lock = threading.Lock()
        self._reader, self._writer = socket.socketpair()
        self._writer.setblocking(False)  # required by set_wakeup_fd
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        for number in STOP_SIGNALS:
            signal.signal(number, _ignore_in_python)
        self._thread = threading.Thread(target=self._watch, name='signal watcher', daemon=True)
        self._thread.start()

    def on_request(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` at the first signal (at once if one has already arrived)."""
        with self._lock:
            self._callbacks.append(callback)
            requested = self.requested.is_set()
        if requested:
            callback()

    def _watch(self) -> None:
        while self._reader.recv(64):  # b'' once the writer is closed
            with self._lock:
                if self.requested.is_set():
                    continue
                self.requested.set()
                callbacks = list(self._callbacks)
            for callback in callbacks:
                callback()

    def close(self) -> None:
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
        signal.set_wakeup_fd(self._previous_fd)
        self._writer.close()
        self._thread.join(timeout=1.0)
        self._reader.close()


def _ignore_in_python(number, frame) -> None:
    """The Python-level SIGINT/SIGTERM handler of :class:`ShutdownSignals` (see there)."""


def spin_nodes(nodes: Sequence[Node], signals: Optional[ShutdownSignals] = None) -> None:
    """Spin ``nodes`` until the first SIGINT/SIGTERM (``signals``; watched here when None and
    this is the main thread) or until rclpy is shut down, then destroy them and shut rclpy
    down. Topic callbacks run on an executor in this thread, the nodes' ``service_host``
    companions on a second executor in a background thread."""
    own_signals = signals is None and threading.current_thread() is threading.main_thread()
    if own_signals:
        rclpy.signals.uninstall_signal_handlers()
        signals = ShutdownSignals()
    hosts = [
        node.service_host.node for node in nodes if getattr(node, 'service_host', None) is not None
    ]
    stream, services = NodeSpinner(nodes, low_latency=True), NodeSpinner(hosts)
    if signals is not None:
        signals.on_request(stream.stop)
    context = stream.executor.context
    # Let the stream thread take the GIL back quickly while a service computes in Python.
    sys.setswitchinterval(0.0005)
    # Everything alive now (imported modules, the model) is never garbage: exempt it from the
    # cyclic collector, whose full passes over it would stall the stream for tens of milliseconds.
    gc.freeze()
    service_thread = threading.Thread(target=services.spin, name='services', daemon=True)
    service_thread.start()
    try:
        stream.spin()
    finally:
        services.stop()
        service_thread.join()
        for spinner in (services, stream):
            spinner.close()
        for node in (*hosts, *nodes):
            node.destroy_node()
        # not rclpy.try_shutdown(): that puts back the handlers found at rclpy.init
        context.try_shutdown()
        if own_signals:
            signals.close()


def run_nodes(
    build: Callable[[], Sequence[Node]], args=None, program: str = 'robot_dynamics'
) -> None:
    """The ``main`` of a node process: rclpy initialised without its signal handlers,
    :class:`ShutdownSignals` watched from the start, the nodes built by ``build()`` and spun
    by :func:`spin_nodes`. A signal while they are being built ends the process cleanly after
    the build; a :class:`RobotDynamicsError` or ValueError from the build (a configuration
    that cannot work) is printed as ``program: reason`` and exits with status 1, and so are ROS
    arguments rcl cannot parse (``--ros-args -p name`` without ``:=value``...)."""
    from rclpy._rclpy_pybind11 import RCLError

    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except RCLError as error:
        print(f'{program}: cannot start ROS 2 with these arguments: {error}', file=sys.stderr)
        raise SystemExit(1)
    signals = ShutdownSignals()
    signals.on_request(_watch_teardown)
    try:
        try:
            nodes = list(build())
        except (RobotDynamicsError, ValueError) as error:
            print(f'{program}: {error}', file=sys.stderr)
            raise SystemExit(1)
        if signals.requested.is_set():
            for node in nodes:
                host = getattr(node, 'service_host', None)
                if host is not None:
                    host.node.destroy_node()
                node.destroy_node()
            return
        try:
            spin_nodes(nodes, signals)
        except Exception:
            _log_to_file(f'{program} ended by an exception:\n{traceback.format_exc()}')
            raise
    finally:
        rclpy.try_shutdown()
        signals.close()
        faulthandler.cancel_dump_traceback_later()


def _watch_teardown() -> None:
    """From the stop request on: stacks to stderr and exit status 1 after :data:`TEARDOWN_LIMIT`
    (and to the log file one second before, from a thread)."""
    faulthandler.dump_traceback_later(TEARDOWN_LIMIT, exit=True)
    threading.Thread(target=_log_a_long_teardown, name='teardown watch', daemon=True).start()


def _log_a_long_teardown() -> None:
    time.sleep(TEARDOWN_LIMIT - 1.0)  # a teardown that ends in time ends the process first
    stacks = ''.join(
        f'\nthread {ident}:\n' + ''.join(traceback.format_stack(frame))
        for ident, frame in sys._current_frames().items()
    )
    _log_to_file(
        f'teardown not ended {TEARDOWN_LIMIT - 1.0:g} s after the stop request; stacks:{stacks}'
    )


def _log_to_file(text: str) -> None:
    """``text`` as an error of logger ``robot_dynamics`` (stderr and the ROS log file), if the
    logging still works."""
    try:
        rclpy.logging.get_logger('robot_dynamics').error(text)
    except Exception:  # logging already shut down: stderr is all there is
        pass
