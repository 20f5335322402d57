"""SIGINT and SIGTERM while running: the first stops training at the next
step boundary (the end of the sink in sink mode); a second aborts at once,
even inside a sink's device call (:class:`SignalGuard`)."""
from __future__ import annotations

import _thread
import signal
import socket
import sys
import threading
from contextlib import contextmanager


class Interrupted(KeyboardInterrupt):
    """A run stopped by a signal: its exit status is 128 + ``signum`` (130
    for Ctrl-C, 143 for SIGTERM), as a shell reports a process it killed."""

    def __init__(self, signum: int = signal.SIGINT, message: str = ""):
        super().__init__(message)
        self.signum = int(signum)

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


@contextmanager
def sigterm_as_interrupt():
    """SIGTERM stops the code run inside as Ctrl-C does (training stops at a
    step boundary with a checkpoint, ``irc run`` writes run.json), raising
    :class:`Interrupted` (exit status 143)."""
    def handler(signum, frame):
        raise Interrupted(signum)
    if threading.current_thread() is not threading.main_thread():
        yield                # only the main thread may install handlers
        return
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class SignalGuard:
    """SIGINT and SIGTERM while training.  The first asks the loop to stop
    at the next step boundary (where it checkpoints); the second aborts at
    once, even in the middle of a long device call.

    Python runs a signal's handler only when the main thread is back in the
    interpreter, and runs it once for all the signals that arrived
    meanwhile, so the main thread blocked in a sink's onnxruntime call would
    neither see the second Ctrl-C nor tell it from the first.  The C-level
    handler also writes each signal's number to the wakeup fd: a watcher
    thread counts them there and, on the second, sets ``terminate`` on the
    device calls' RunOptions (onnxruntime returns between two nodes) and
    wakes the main thread's handler, which raises KeyboardInterrupt.  No
    thread hand-off per device call (``Program.run``: only calls longer than
    LONG_CALL_S take RunOptions, which cost 65 us a call)."""

    def __init__(self, stopping_at: str, on_abort, *, sigterm: bool = True):
        self.stopping_at, self.on_abort = stopping_at, on_abort
        # A rank of a multi-rank job leaves SIGTERM to its default: the
        # launcher ends the ranks with it, and a rank blocked in a collective
        # on a dead peer never reaches a step boundary.
        self.signals = (signal.SIGINT, signal.SIGTERM) if sigterm else (signal.SIGINT,)
        self.stop = threading.Event()      # first signal: stop at the next step boundary
        self.abort = threading.Event()     # second: stop now
        self.signum = 0                    # the signal that stopped (or aborted) the run
        self.count = 0                     # signals seen (by the watcher)
        self._handlers: dict = {}
        self._sockets: tuple | None = None

    def __enter__(self):
        if threading.current_thread() is not threading.main_thread():
            return self                    # only the main thread may install handlers
        reader, writer = socket.socketpair()     # a socket: what Windows' wakeup fd takes too
        writer.setblocking(False)
        self._sockets = (reader, writer)
        self._previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        self._handlers = {s: signal.signal(s, self._handler) for s in self.signals}
        threading.Thread(target=self._watch, args=(reader,), name="irc-signals",
                         daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._sockets is None:
            return
        for s, previous in self._handlers.items():
            if previous is not None:       # None: a handler not installed from Python
                signal.signal(s, previous)
        signal.set_wakeup_fd(self._previous_fd)
        self._sockets[1].close()           # the watcher reads end-of-file and returns
        self._sockets = None

    def _handler(self, signum, frame) -> None:
        # the watcher counts; stopping here too makes the loop stop at the
        # boundary right after the signal, not one step later
        if not self.stop.is_set():
            self.signum = signum
            self.stop.set()
        if self.abort.is_set():
            raise KeyboardInterrupt

    def _watch(self, reader) -> None:
        with reader:
            while data := reader.recv(64):
                for signum in data:
                    if signum in self.signals:
                        self._count(signum)

    def _count(self, signum: int) -> None:
        self.count += 1
        if self.count == 1:
            self.signum = self.signum or signum
            self.stop.set()
            name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
            print(f"\nirc: {name}: stopping {self.stopping_at} to write a checkpoint "
                  f"(Ctrl-C again to abort)", file=sys.stderr, flush=True)
        elif self.count == 2:
            self.signum = signum
            self.abort.set()
            self.on_abort()
            _thread.interrupt_main(signal.SIGINT)    # the handler raises in the main thread
