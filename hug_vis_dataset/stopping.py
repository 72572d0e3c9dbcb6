"""Stop signals: SIGINT, SIGTERM and SIGHUP end every command the same way, by construction.

The rule (docs/ARCHITECTURE.md, "Stop signals"):

* :func:`install` (called once by ``hugvis``'s ``main``) turns SIGTERM and SIGHUP, like SIGINT, into an
  exception raised in the main thread, :class:`Stopped` (a :class:`KeyboardInterrupt`, so no
  ``except Exception`` swallows it), so every ``try/finally`` and context manager on the way out
  runs: worker processes are ended and joined, temporary files and folders are removed, and what
  is complete (the resume state) stays. A second signal while that cleanup runs is ignored, so
  the cleanup is never cut short.
* The command says what was kept and how to resume with :func:`resume_note`; the note of the
  innermost block the stop left is the one printed.
* ``main`` prints ONE line to stderr, :func:`stop_line` (``stopped by SIGTERM: 3 of 8 clips kept
  in RESULTS/matting/.work-x; run the same command again to resume``), and exits
  :func:`exit_code` (130 for SIGINT, 143 for SIGTERM).
* Child worker processes never print nor clean up: :func:`child_init` (their pool initializer)
  makes them ignore SIGINT and SIGHUP (a Ctrl-C or a hang-up reaches the whole foreground process
  group) and die on SIGTERM; the parent terminates and joins them (:func:`end_processes`). A worker
  whose parent is gone without ending it (SIGKILL, the OOM killer) ends itself. Children are started
  inside :func:`children_start`, which holds those signals blocked, so a child ignores them from its
  first instruction on (a signal mask is inherited across fork and exec). A command starts
  :func:`worker_count` workers: as many as asked, never more than its pieces of work
  (:func:`worker_pool` is that rule for a ``multiprocessing`` pool).
* Work in another thread (the Space's scoring in Gradio's worker threads) calls :func:`check`
  between steps and registers what it must not leave behind with :func:`removed_on_stop`;
  ``main`` waits a moment for those threads to unwind (:func:`drain`), then removes what is left.

Example:
    >>> try:
    ...     with resume_note(lambda: "2 of 4 clips kept in out/.work-m; run the same command again to resume"):
    ...         raise Stopped(signal.SIGTERM)  # what the handler raises in the main thread
    ... except Stopped as err:
    ...     stop = err
    >>> exit_code(stop.signum), stop_line(stop.signum)
    (143, 'stopped by SIGTERM: 2 of 4 clips kept in out/.work-m; run the same command again to resume')
    >>> reset()
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

#: The signals that stop a command, and the exit status of each (128 + the signal number). SIGHUP (the terminal
#: closed, an ssh session dropped) stops a command as the others do, unless it was started to ignore it (nohup).
STOP_SIGNALS: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM, *((signal.SIGHUP,) if hasattr(signal, "SIGHUP")
                                                                  else ()))
#: Signals a worker process leaves to its parent (it ends the workers itself, :func:`end_processes`).
_PARENTS_SIGNALS = frozenset(s for s in STOP_SIGNALS if s != signal.SIGTERM)
#: How often a worker looks whether its parent is still there (:func:`child_init`): the parent may be killed
#: (SIGKILL, the OOM killer) without a chance to end it.
PARENT_CHECK_S = 0.5
#: The note when a command registered none (it stopped before it had made anything to keep).
NOTHING_KEPT = "nothing was kept; run the same command again"


class Stopped(KeyboardInterrupt):
    """The command was stopped by ``signum`` (SIGINT or SIGTERM); raised in the main thread.

    Example:
        >>> Stopped(signal.SIGINT).name, Stopped(signal.SIGTERM).exit_code
        ('SIGINT', 143)
    """

    def __init__(self, signum: int):
        self.signum = int(signum)
        super().__init__(f"stopped by {self.name}")

    @property
    def name(self) -> str:
        return signal_name(self.signum)

    @property
    def exit_code(self) -> int:
        return exit_code(self.signum)


def signal_name(signum: int) -> str:
    """``SIGTERM`` for 15.

    >>> signal_name(2)
    'SIGINT'
    """
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def exit_code(signum: int) -> int:
    """The exit status of a command stopped by ``signum``: 128 + the number, the shell's convention.

    >>> exit_code(signal.SIGINT), exit_code(signal.SIGTERM)
    (130, 143)
    """
    return 128 + int(signum)


class _State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.received: "int | None" = None
        self.event = threading.Event()
        self.notes: list[Callable[[], str]] = []
        self.final_note: "str | None" = None
        self.paths: dict[int, tuple[Path, int]] = {}  # key -> (path, the registering thread's ident)
        self.working = 0
        self.next_key = 0
        self.installed = False
        self.signals: tuple[int, ...] = STOP_SIGNALS  # those install() handles
        self.holding = 0  # nesting of blocks a stop must not cut (_held)


_STATE = _State()


def reset() -> None:
    """Forget a received stop and every note (tests; a long-lived process serving again)."""
    global _STATE
    installed, signals = _STATE.installed, _STATE.signals
    _STATE = _State()
    _STATE.installed, _STATE.signals = installed, signals


def _handler(signum: int, frame: object) -> None:
    state = _STATE
    with state.lock:
        if state.received is not None:
            return  # cleanup of the first stop is running: a second signal must not cut it short
        state.received = signum
        state.event.set()
        if state.holding:  # inside a block that must not be cut (_held): raised when it ends
            return
    raise Stopped(signum)


@contextlib.contextmanager
def _held(signals: "set[int]") -> Iterator[None]:
    """Block ``signals`` in the main thread and hold any stop that arrives anyway until the block ends.

    The mask alone is not enough: a signal sent to the process is taken by any thread that does not block it
    (a library's thread pool), and Python then runs the handler in the main thread all the same. So the
    handler, seeing the block, only records the stop, and the block's end raises it.
    """
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    state = _STATE
    old = signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    state.holding += 1
    try:
        yield
    finally:
        state.holding -= 1
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    if not state.holding and state.received is not None:
        raise Stopped(state.received)


def install(again: bool = False) -> None:
    """Handle SIGINT and SIGTERM in this process by raising :class:`Stopped` in the main thread.

    Called once by ``hugvis``'s ``main``; a call from another thread, or a second call, does nothing.
    ``again`` puts the handlers back after a library replaced them (``ray.init`` sets a SIGTERM
    handler that calls ``sys.exit``), only where they were installed: a library user's own
    handlers are never replaced.
    """
    if threading.current_thread() is not threading.main_thread() or (_STATE.installed and not again):
        return
    if again and not _STATE.installed:
        return
    if not again:  # started under nohup (SIGHUP ignored): that choice stays
        hangup = getattr(signal, "SIGHUP", None)
        _STATE.signals = tuple(s for s in STOP_SIGNALS if s != hangup or signal.getsignal(s) is not signal.SIG_IGN)
    for signum in _STATE.signals:
        signal.signal(signum, _handler)
    if not again and not getattr(sys.unraisablehook, "_hugvis_stop", False):
        sys.unraisablehook = _unraisable_hook(sys.unraisablehook)
    _STATE.installed = True


def _unraisable_hook(previous: Callable) -> Callable:
    """``sys.unraisablehook`` that keeps quiet about a :class:`Stopped` raised where Python cannot propagate it (the
    handler ran inside a callback that C code called: numba's JIT compiler calls llvmlite's ctypes callbacks), which
    Python would print as a traceback. The stop is recorded already (:func:`requested`): the command raises it at its
    next :func:`check` (the runner checks between clips) and ends with the one stop line. Anything else goes to
    ``previous``."""

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, Stopped):
            return
        previous(unraisable)

    hook._hugvis_stop = True  # type: ignore[attr-defined]
    return hook


def requested() -> "int | None":
    """The stop signal received so far (None: none)."""
    return _STATE.received


def check() -> None:
    """Raise :class:`Stopped` if a stop signal was received: for loops outside the main thread.

    >>> check()  # nothing received: returns
    """
    received = _STATE.received
    if received is not None:
        raise Stopped(received)


@contextlib.contextmanager
def resume_note(describe: Callable[[], str], overrides: bool = False) -> Iterator[None]:
    """Say what a stop inside the block keeps and how to resume (``describe()``, called at the stop).

    The innermost block a stop leaves is the one whose note is printed, unless an outer one
    ``overrides`` it (the queue worker's note about its request says more than the runner's about its
    clips); ``describe`` runs after the inner blocks cleaned up, so it can count what is really left.
    """
    state = _STATE
    state.notes.append(describe)
    stopped = False
    try:
        yield
    except KeyboardInterrupt:
        stopped = True
        raise
    finally:
        if describe in state.notes:
            state.notes.remove(describe)
        # Also when a library caught the stop on the way (Gradio's server loop catches KeyboardInterrupt).
        if (stopped or state.received is not None) and (state.final_note is None or overrides):
            try:
                state.final_note = describe()
            except Exception as failed:  # noqa: BLE001 - the note must not replace the stop
                state.final_note = f"(what was kept could not be counted: {type(failed).__name__})"


def stop_line(signum: int, note: "str | None" = None) -> str:
    """The one line a stopped command prints: ``stopped by SIGTERM: <what was kept, how to resume>``.

    >>> stop_line(signal.SIGINT, "nothing to keep")
    'stopped by SIGINT: nothing to keep'
    """
    text = note if note is not None else (_STATE.final_note or NOTHING_KEPT)
    return f"stopped by {signal_name(signum)}: {' '.join(str(text).split())}"


# ----------------------------------------------------------------------------- child processes
def child_init() -> None:
    """Initializer of every worker process: ignore SIGINT and SIGHUP (the parent decides), die on SIGTERM, and
    end itself as soon as its parent is gone, however the parent ended (SIGKILL included).

    A child never prints about a stop nor cleans half of it: the parent ends it
    (:func:`end_processes`) and removes what it left.
    """
    for signum in _PARENTS_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, set(_PARENTS_SIGNALS))
    _end_with_parent()


def _end_with_parent() -> None:
    """A daemon thread that ends this worker when its parent is gone (it is then adopted: its parent id changes).

    Not the kernel's parent-death signal: that fires when the *thread* that started the child ends, and the
    Space and the queue worker start pools from threads that end long before their process.
    """
    import multiprocessing

    parent = multiprocessing.parent_process()
    expected = parent.pid if parent is not None and parent.pid else os.getppid()

    def watch() -> None:
        while os.getppid() == expected:
            time.sleep(PARENT_CHECK_S)
        os._exit(128 + signal.SIGKILL)  # the parent died without ending us: nothing here is worth keeping

    if os.getppid() != expected:  # it died before this worker got this far
        os._exit(128 + signal.SIGKILL)
    threading.Thread(target=watch, name="hugvis-parent-watch", daemon=True).start()


def worker_count(requested: int, work: int) -> int:
    """The workers a command starts: as many as asked, never more than the pieces of work, at least one.

    >>> worker_count(24, 6), worker_count(2, 100), worker_count(8, 0)
    (6, 2, 1)
    """
    return max(1, min(int(requested), int(work)))


@contextlib.contextmanager
def worker_pool(requested: int, work: int, initializer: "Callable[[], None] | None" = None) -> Iterator:
    """A spawn ``multiprocessing.Pool`` under the one rule for workers: :func:`worker_count` of them, started
    inside :func:`children_start` with :func:`child_init` (or ``initializer``, which must call it), terminated
    and joined when the block is left, however it is left.
    """
    from multiprocessing import get_context

    pool = None
    try:
        with children_start():  # a stop held meanwhile is raised at its end: inside the try, so they are ended
            pool = get_context("spawn").Pool(worker_count(requested, work), initializer=initializer or child_init)
        yield pool
    finally:
        if pool is not None:
            end_pool(pool)


#: The longest the main thread waits on a pool at a time (:func:`pool_results`).
POLL_S = 0.5


def pool_results(iterator: Iterator, poll: float = POLL_S) -> Iterator:
    """The results of a pool's ``imap`` iterator, in order, waiting at most ``poll`` seconds at a time.

    The kernel hands a signal to any thread that does not block it (a pool's helper thread, a progress bar's
    monitor); Python runs the handler only when the main thread executes Python again. A wait without a timeout
    then outlasts the stop for good when no result comes (the workers were killed with the group: seen here, a build
    stopped by SIGTERM to its group waited forever). With the timeout the stop is raised within ``poll`` seconds.

    >>> list(pool_results(iter([1, 2])))
    [1, 2]
    """
    from multiprocessing import TimeoutError as PoolTimeout

    timed = getattr(iterator, "next", None)  # a pool's IMapIterator: next(timeout); anything else: plain next
    while True:
        try:
            yield timed(poll) if timed is not None else next(iterator)
        except PoolTimeout:
            continue
        except StopIteration:
            return


#: How long :func:`end_pool` lets ``multiprocessing`` terminate a pool before it kills the workers itself.
POOL_END_S = 10.0


def end_pool(pool, timeout: float = POOL_END_S) -> None:
    """Terminate and join a ``multiprocessing`` pool, never waiting for good.

    ``Pool.terminate`` puts to the workers' task queue under a lock shared with them; a stop sent to the whole
    process group kills workers at any moment, and one killed inside that lock leaves it held for good: the
    parent then waited forever (seen here: a build stopped by SIGTERM to its group). So the terminate runs in a
    thread given ``timeout`` seconds; past it every worker is killed and the pool left to its daemon threads
    (nothing of it is used again: the block that made it is being left).
    """
    ender = threading.Thread(target=_terminate_and_join, args=(pool,), daemon=True, name="hugvis-pool-end")
    ender.start()
    ender.join(timeout)
    if ender.is_alive():
        end_processes(list(getattr(pool, "_pool", [])), timeout=1.0)  # the pool's current workers, replacements too
        ender.join(1.0)


def _terminate_and_join(pool) -> None:
    with contextlib.suppress(Exception):
        pool.terminate()
        pool.join()


@contextlib.contextmanager
def children_start() -> Iterator[None]:
    """Start child processes inside this block: they are born with SIGINT and SIGHUP blocked.

    The mask is inherited across fork and exec, so a Ctrl-C (or a hang-up) during a child's start-up
    cannot raise a KeyboardInterrupt in it (with a traceback on the shared stderr) or kill it before
    :func:`child_init` ignores them. In the parent a stop that arrives during the block is held and raised
    when it ends (:func:`_held`): a child is never left half-started (it would read a cut start-up message
    and print a traceback).
    """
    with _held(set(_PARENTS_SIGNALS)):  # SIGTERM stays deliverable to a child: the parent ends it with it
        yield


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP while a short step that must not be cut in two runs (a file put in place
    and recorded as the toolkit's); a stop that arrives meanwhile is raised when the block ends (:func:`_held`).

    Outside the main thread (where no stop is raised) it does nothing.

    >>> with deferred():
    ...     pass
    """
    with _held(set(STOP_SIGNALS)):
        yield


def end_processes(processes: Iterable, timeout: float = 5.0) -> None:
    """Terminate (SIGTERM), join, and if need be kill the given ``multiprocessing`` processes."""
    processes = [p for p in processes if p is not None]
    for process in processes:
        with contextlib.suppress(Exception):
            if process.is_alive():
                process.terminate()
    deadline = time.monotonic() + timeout
    for process in processes:
        with contextlib.suppress(Exception):
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(1.0)


# ----------------------------------------------------------------------------- other threads
def register_removal(path: "str | Path") -> int:
    """Register ``path`` to be removed if the process is stopped before :func:`unregister_removal`; returns
    the key. Call it *before* the path exists, and unregister only once the path is gone or in place:
    a stop at any instruction in between then still ends with the path removed (:func:`drain`)."""
    state = _STATE
    with state.lock:
        key = state.next_key
        state.next_key += 1
        state.paths[key] = (Path(path), threading.get_ident())
    return key


def unregister_removal(key: int) -> None:
    """Forget a registration of :func:`register_removal` (the path is gone, or was put in place)."""
    state = _STATE
    with state.lock:
        state.paths.pop(key, None)


@contextlib.contextmanager
def removed_on_stop(path: "str | Path") -> Iterator[Path]:
    """Register ``path`` (a temporary file or folder made by work outside the main thread).

    The block's own cleanup removes it as usual; when the process is stopped, ``main`` waits a
    moment for the block to end (:func:`drain`) and removes the path itself if it is still there.
    """
    key = register_removal(path)
    try:
        yield Path(path)
    finally:
        unregister_removal(key)


@contextlib.contextmanager
def working() -> Iterator[None]:
    """Mark work outside the main thread that a stop waits for (:func:`drain`) while it unwinds.

    Work that makes temporary files registers them inside with :func:`removed_on_stop`; this outer
    block is what ``main`` waits for, so it never prints the stop line while the work is still
    removing them.
    """
    state = _STATE
    with state.lock:
        state.working += 1
    try:
        yield
    finally:
        with state.lock:
            state.working -= 1


def drain(timeout: float = 15.0) -> list[Path]:
    """After a stop: wait up to ``timeout`` s for :func:`working` blocks and :func:`removed_on_stop`
    registrations of other threads to end (they see :func:`check`), then remove what is still
    registered; returns those paths. Registrations of the calling thread are not waited for: the stop
    unwound its stack, so what it registered and did not unregister is removed at once."""
    me = threading.get_ident()
    deadline = time.monotonic() + timeout

    def others_busy() -> bool:
        with _STATE.lock:
            return _STATE.working > 0 or any(ident != me for _, ident in _STATE.paths.values())

    while others_busy() and time.monotonic() < deadline:
        time.sleep(0.05)
    with _STATE.lock:
        left = [path for path, _ in _STATE.paths.values()]
        _STATE.paths.clear()
    for path in left:
        remove(path)
    return left


def remove(path: "str | Path") -> None:
    """Remove a file or a folder tree, if it is there."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def finish(err: "BaseException | None" = None) -> int:
    """What ``main`` does once a command was stopped: drain other threads, print the one line to
    stderr, and return the exit status (``err`` is the :class:`Stopped`, if it got that far)."""
    import sys

    signum = err.signum if isinstance(err, Stopped) else (requested() or signal.SIGINT)
    drain()
    print(stop_line(signum), file=sys.stderr, flush=True)
    return exit_code(signum)


__all__ = ["NOTHING_KEPT", "PARENT_CHECK_S", "POLL_S", "POOL_END_S", "STOP_SIGNALS", "Stopped", "check", "child_init",
           "children_start", "deferred", "drain", "end_pool", "end_processes", "exit_code", "finish", "install",
           "pool_results", "register_removal", "remove", "removed_on_stop", "requested", "reset", "resume_note",
           "signal_name", "stop_line", "unregister_removal", "worker_count", "worker_pool", "working"]
