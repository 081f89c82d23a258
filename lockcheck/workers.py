"""Bounded worker processes: each file is analysed in a forked child that caps its own
address space (``RLIMIT_AS``), while the parent enforces a wall-clock bound per file.

A file whose analysis crashes the child (even a segfault), runs past its time or exceeds its
memory bound becomes one ``LCK000`` finding on line 1 (``analysis stopped: REASON``); the
child is replaced and the other files go on.  Results come back in the order of the tasks,
whatever the number of workers.

A task that runs several bounded steps (fixing a file re-analyses its text after each round)
calls :func:`heartbeat` after each: the wall-clock bound then holds for each step, and for
their sum ``MAX_STEPS`` times the bound.

Test hook: ``LOCKCHECK_TEST_WORKER_FAULT=crash:NAME`` makes the worker kill itself with
SIGSEGV when it is handed a file whose base name is ``NAME``; ``fix-crash:NAME``,
``fix-hang:NAME`` and ``fix-memory:NAME`` make the worker that checks the fixes of ``NAME``
crash, hang or exhaust its memory; ``again-crash:NAME`` (and ``again-hang``, ``again-memory``)
the worker that analyses ``NAME`` again for the join of job definitions.  It is an environment variable of the lockcheck process,
so nothing in a scanned file can set it; the test suite uses it to simulate a frontend that
crashes, or a fixed text that is hostile.
"""

from __future__ import annotations

import gc
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from .hints import Any

FAULT_ENV = "LOCKCHECK_TEST_WORKER_FAULT"
MAX_STEPS = 16  # a task of several steps (heartbeat) gets at most this many bounds in all


class Unavailable(Exception):
    """No fork-based worker can be started here."""


def _set_memory_bound(limit: int | None) -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    want = resource.RLIM_INFINITY if not limit else limit
    if hard != resource.RLIM_INFINITY and (want == resource.RLIM_INFINITY or want > hard):
        want = hard
    if want != soft:
        resource.setrlimit(resource.RLIMIT_AS, (want, hard))


def _fault(task: Any) -> None:
    kind, _, name = os.environ.get(FAULT_ENV, "").partition(":")
    if not name or os.path.basename(getattr(task, "path", "")) != name:
        return
    prefix = getattr(task, "fault_prefix", "")  # "fix-" for a task that checks fixes
    if kind == prefix + "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif kind == prefix + "hang":
        time.sleep(3600)
    elif kind == prefix + "memory":
        import resource

        bound = resource.getrlimit(resource.RLIMIT_AS)[0]
        if bound == resource.RLIM_INFINITY:
            raise MemoryError  # no bound to run into: never eat the machine's memory
        _hog = bytearray(2 * bound)  # twice the bound: the allocation fails at it


_heartbeat: Callable[[], None] | None = None


def heartbeat() -> None:
    """One step of the current task is done: its wall-clock bound starts again (in a worker;
    elsewhere nothing)."""
    if _heartbeat is not None:
        _heartbeat()


def _quiet() -> None:
    """The report is the parent's: nothing a worker (or a native library dying in it) writes
    may reach standard output, nor, unless LOCKCHECK_DEBUG is set, standard error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        if not os.environ.get("LOCKCHECK_DEBUG"):
            os.dup2(devnull, 2)
        os.close(devnull)
    except OSError:
        pass
    if not os.environ.get("LOCKCHECK_DEBUG"):
        import faulthandler  # a handler the embedding process enabled on its own copy of

        faulthandler.disable()  # stderr (pytest does) would print a dying worker's stack


def _child(conn, func: Callable[[Any], Any]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles ^C and ends us
    _quiet()
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        if msg is None:
            break
        index, task, memory = msg
        _set_memory_bound(memory)
        global _heartbeat
        _heartbeat = lambda index=index: conn.send((index, "tick", None))  # noqa: E731
        try:
            _fault(task)
            result = func(task)
        except MemoryError:
            result = None
        except Exception as exc:  # a bug: this file's result says so, the worker goes on
            _set_memory_bound(None)
            conn.send((index, "error", f"internal error: {type(exc).__name__}: {exc}"))
            continue
        _set_memory_bound(None)
        if result is None:  # the heap may be in any state: report and make way for another
            conn.send((index, "memory", None))
            break
        try:
            conn.send((index, "ok", result))
        except MemoryError:
            conn.send((index, "memory", None))
            break
    conn.close()
    os._exit(0)  # no atexit handlers, no flushing of buffers inherited from the parent


def _pickle():
    """The C pickler: ``pickle.dumps``/``loads`` are its functions, and the ``pickle`` module
    around them (pure Python, ~2 ms to import) is not needed."""
    try:
        import _pickle as pickle
    except ImportError:  # pragma: no cover - an interpreter without the accelerator
        import pickle
    return pickle


class _Conn:
    """One end of a pair of pipes: whole pickled messages, each behind its length."""

    def __init__(self, rfd: int, wfd: int) -> None:
        self.rfd, self.wfd = rfd, wfd

    def fileno(self) -> int:
        return self.rfd

    def send(self, obj: Any) -> None:
        data = _pickle().dumps(obj, 5)  # pickle.HIGHEST_PROTOCOL of every supported Python
        view = memoryview(len(data).to_bytes(8, "little") + data)
        while view:
            view = view[os.write(self.wfd, view) :]

    def _read(self, n: int) -> bytes:
        parts, left = [], n
        while left:
            chunk = os.read(self.rfd, min(left, 1 << 20))
            if not chunk:
                raise EOFError  # the other end died (before or while sending)
            parts.append(chunk)
            left -= len(chunk)
        return b"".join(parts)

    def recv(self) -> Any:
        return _pickle().loads(self._read(int.from_bytes(self._read(8), "little")))

    def close(self) -> None:
        for fd in (self.rfd, self.wfd):
            try:
                os.close(fd)
            except OSError:
                pass


class _Worker:
    """A forked child (``os.fork``: no ``multiprocessing``, whose import alone costs more
    than a small run's analysis) reading tasks from one pipe, answering on another."""

    def __init__(self, func) -> None:
        to_child = os.pipe()
        to_parent = os.pipe()
        # what this process holds now (the modules above all) goes to the collector's
        # permanent generation, as the gc module's documentation advises before a fork: no
        # collection, here or in the child, traverses it again (in the child, that would copy
        # every page it touches); run_bounded gives it back when the run ends
        gc.freeze()
        try:
            pid = os.fork()
        except OSError:
            for fd in to_child + to_parent:
                os.close(fd)
            raise
        if pid == 0:  # the child: never returns
            try:
                os.close(to_child[1])
                os.close(to_parent[0])
                _child(_Conn(to_child[0], to_parent[1]), func)
            finally:
                os._exit(0)
        os.close(to_child[0])
        os.close(to_parent[1])
        self.pid = pid
        self.status: int | None = None  # the wait status, once reaped
        self.conn = _Conn(to_parent[0], to_child[1])  # the child's death reads as EOF here
        self.index: int | None = None
        self.started = self.deadline = 0.0
        self.asked = False  # told to end

    def give(self, index: int, task: Any, timeout: float | None, memory: int | None) -> None:
        self.index = index
        self.started = time.monotonic()
        self.deadline = self.started + timeout if timeout else float("inf")
        self.conn.send((index, task, memory))

    def _reap(self, timeout: float | None) -> bool:
        """Wait up to ``timeout`` seconds (None: for ever) for the child to end."""
        end = None if timeout is None else time.monotonic() + timeout
        delay = 0.0002  # a child told to stop exits within a millisecond or so: poll soon
        while self.status is None:
            try:
                pid, status = os.waitpid(self.pid, 0 if end is None else os.WNOHANG)
            except ChildProcessError:
                self.status = 0
                break
            if pid:
                self.status = status
                break
            if time.monotonic() >= end:
                return False
            time.sleep(delay)  # a worker told to end is gone by the next poll or two
            delay = min(2 * delay, 0.001)
        return True

    def ask_to_stop(self) -> None:
        """Tell the idle child to end (:meth:`stop` then waits for it)."""
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.asked = True

    def stop(self, kill: bool = False) -> None:
        if not kill and not self.asked:
            self.ask_to_stop()
        if kill or not self._reap(5):
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            self._reap(None)
        self.conn.close()

    def death(self, memory: int | None) -> str:
        self._reap(5)
        code = None if self.status is None else os.waitstatus_to_exitcode(self.status)
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            # how native code meets a failed malloc: an abort, or a segfault on the NULL it got
            if memory and -code in (signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS):
                likely = "likely" if -code == signal.SIGABRT else "possibly"
                return (
                    f"the analysis crashed ({name}), {likely} at the memory bound ({_size(memory)})"
                )
            return f"the analysis crashed ({name})"
        return f"the analysis process exited unexpectedly (status {code})"


def _size(n: int) -> str:
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return f"{n} bytes"


def _seconds(t: float) -> str:
    return f"{t:g} s"


def _wait(conns: list[_Conn], timeout: float | None) -> list[_Conn]:
    """The connections with something to read (a message, or EOF: a death)."""
    import select

    while True:
        try:
            return select.select(conns, [], [], timeout)[0]
        except InterruptedError:  # pragma: no cover - PEP 475 retries; a handler may raise
            continue


def run_bounded(
    tasks: Iterable[Any],
    func: Callable[[Any], Any],
    stopped: Callable[[Any, str], Any],
    bounds: Callable[[Any], tuple[float | None, int | None]],
    workers: int,
    progress: Callable[[int, int], None] | None = None,
    weight: Callable[[Any], float] | None = None,
    before_fork: Callable[[list[Any]], None] | None = None,
) -> list[Any]:
    """``func(task)`` for every task in at most ``workers`` forked children; a task whose
    child dies, overruns ``bounds(task)[0]`` seconds or exceeds ``bounds(task)[1]`` bytes
    gets ``stopped(task, reason)`` instead.  Raises :class:`Unavailable` without fork.

    ``tasks`` may be an iterator that takes a while to yield each task (a walk of the tree):
    each is handed to a worker as soon as it is yielded, while the iterator goes on; a None
    it yields is no task, only a moment to collect results and hand out the tasks waiting.  The
    first worker starts with the first task; another one (up to ``workers``) each time the
    tasks waiting for a worker weigh 1 or more (``weight(task)``: its share of the work one
    more worker pays for), and when the iterator ends with tasks waiting, as many as all the
    tasks pay for (one, plus one per whole 1 of weight).  ``before_fork(tasks so far)`` runs
    before each fork."""
    if not hasattr(os, "fork"):
        gc.unfreeze()  # what lockcheck.runner.preload froze for the fork
        raise Unavailable("no fork on this platform")

    stream = None if isinstance(tasks, Sequence) else iter(tasks)
    tasks = [] if stream is not None else list(tasks)
    results: list[Any] = [None] * len(tasks)
    pending = deque(range(len(tasks)))
    pool: list[_Worker | None] = []
    retried: dict[int, int] = {}
    done = 0
    weights: list[float] = []  # of a stream's tasks
    waiting = 0.0  # the weight of a stream's pending tasks

    def finish(w: _Worker, value: Any) -> None:
        nonlocal done
        assert w.index is not None
        results[w.index] = value
        w.index = None
        done += 1
        if progress:
            progress(done, len(tasks))

    def grow(want: int) -> None:
        nonlocal workers
        while len(pool) < want:
            if before_fork is not None:
                before_fork(tasks)
            try:
                pool.append(_Worker(func))
            except OSError as exc:
                if not pool:
                    raise Unavailable(str(exc)) from exc
                workers = len(pool)  # run with the workers there are
                return

    def pull() -> None:
        """The stream's next task, pending."""
        nonlocal stream, waiting
        assert stream is not None
        try:
            task = next(stream)
        except StopIteration:
            stream = None
            if pending:  # the walk is done: the workers the whole run pays for finish it
                grow(min(workers, int(sum(weights)) + 1, len(pool) + len(pending)))
            return
        if task is None:  # nothing new yet: look after the workers
            return
        tasks.append(task)
        results.append(None)
        pending.append(len(tasks) - 1)
        weights.append(weight(task) if weight is not None else 1.0)
        waiting += weights[-1]

    streamed = stream is not None
    try:
        if not streamed:
            grow(max(1, min(workers, len(tasks))))
        while (
            stream is not None
            or pending
            or any(w is not None and w.index is not None for w in pool)
        ):
            if stream is not None:
                pull()
            if streamed and pending and not pool:
                grow(1)  # the first task: the first worker
            for i, w in enumerate(pool):
                if pending and w is None:
                    w = pool[i] = _Worker(func)
                if w is not None and w.index is None and pending:
                    k = pending.popleft()
                    if streamed:
                        waiting -= weights[k]
                    timeout, memory = bounds(tasks[k])
                    try:
                        w.give(k, tasks[k], timeout, memory)
                    except OSError:  # died while idle: replace it and retry the task once
                        retried[k] = retried.get(k, 0) + 1
                        if retried[k] > 1:
                            finish(w, stopped(tasks[k], "the analysis process did not start"))
                        else:
                            pending.appendleft(k)
                            if streamed:
                                waiting += weights[k]
                            w.index = None
                        w.stop(kill=True)
                        pool[i] = None
            if streamed and waiting >= 1.0 and len(pool) < workers:
                grow(len(pool) + 1)  # the tasks waiting pay for one more worker
                continue  # which takes one of them now
            busy = [w for w in pool if w is not None and w.index is not None]
            if not busy:
                continue  # the stream has yielded nothing yet
            now = time.monotonic()
            wait_for = max(0.0, min(w.deadline for w in busy) - now)
            if stream is not None:
                wait_for = 0.0  # what is done now, then the next task of the stream
            ready = _wait([w.conn for w in busy], None if wait_for == float("inf") else wait_for)
            now = time.monotonic()
            for i, w in enumerate(pool):
                if w is None or w.index is None:
                    continue
                task = tasks[w.index]
                if w.conn in ready:
                    try:
                        index, kind, value = w.conn.recv()
                    except Exception:  # EOF: the worker died (a torn message: it died sending)
                        finish(w, stopped(task, w.death(bounds(task)[1])))
                        w.stop(kill=True)
                        pool[i] = None
                        continue
                    if kind == "tick":  # a step done: the next one has its own bound
                        timeout = bounds(task)[0]
                        if timeout:
                            w.deadline = min(now + timeout, w.started + MAX_STEPS * timeout)
                        continue
                    if kind == "ok":
                        finish(w, value)
                        continue
                    if kind == "error":
                        finish(w, stopped(task, value))
                        continue
                    memory = bounds(task)[1]
                    reason = "memory bound exceeded" + (f" ({_size(memory)})" if memory else "")
                    finish(w, stopped(task, reason))
                    w.stop(kill=True)
                    pool[i] = None
                elif now >= w.deadline:
                    timeout = bounds(task)[0] or 0.0
                    finish(w, stopped(task, f"timed out after {_seconds(timeout)}"))
                    w.stop(kill=True)
                    pool[i] = None
    finally:
        live = [w for w in pool if w is not None]
        for w in live:  # all told first: they end side by side
            if w.index is None:
                w.ask_to_stop()
        for w in live:
            w.stop(kill=w.index is not None)
        gc.unfreeze()  # what the forks (and preload) froze is collectable again
    return results
