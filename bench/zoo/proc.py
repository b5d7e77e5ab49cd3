# Child processes for bench/zoo/zoo.py: each in a session of its own (so that a compile worker and the compiler
# processes it starts can be ended together), timed from spawn, optionally to a line the child prints when its
# first result is ready, with a time limit; and every child still running ended when the zoo is stopped.
import collections
import dataclasses
import os
import signal
import subprocess
import threading
import time

_live = set()
_live_lock = threading.Lock()


@dataclasses.dataclass
class Finished:
    rc: int
    stdout: str
    stderr_tail: str
    wall_ms: float
    mark_ms: float = None     # spawn to the marker line, when one was asked for and seen
    timed_out: bool = False
    limit_s: float = 0.0

    def why(self):
        """One line saying why the command failed."""
        if self.timed_out:
            return f"did not finish within {self.limit_s:.0f} s"
        if self.rc < 0:
            return f"killed by signal {-self.rc}" + (" (crashed)" if -self.rc in (signal.SIGSEGV, signal.SIGABRT,
                                                                              signal.SIGBUS) else "")
        lines = [l for l in self.stderr_tail.splitlines() if l.strip()]
        return f"exit {self.rc}: " + (lines[-1].strip()[:400] if lines else "(nothing on stderr)")


def _end_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def end_all():
    """Ends every child this module started that is still running (each with the processes it started)."""
    with _live_lock:
        procs = list(_live)
    for p in procs:
        _end_group(p)


def run(cmd, env=None, timeout_s=120.0, mark=None, stdout_path=None):
    """Runs CMD to its end or TIMEOUT_S; stdout is kept (or written to STDOUT_PATH with stderr), stderr's last
    lines kept."""
    start = time.perf_counter()
    sink = open(stdout_path, "w") if stdout_path else None
    proc = subprocess.Popen(cmd, env=env, text=True, start_new_session=True,
                            stdout=sink or subprocess.PIPE,
                            stderr=subprocess.STDOUT if sink else subprocess.PIPE)
    with _live_lock:
        _live.add(proc)
    out, err, seen = [], collections.deque(maxlen=60), {}

    def read_stdout():
        for line in proc.stdout:
            if mark and "mark" not in seen and line.strip() == mark:
                seen["mark"] = time.perf_counter()
            out.append(line)

    def read_stderr():
        for line in proc.stderr:
            err.append(line)

    readers = [] if sink else [threading.Thread(target=f, daemon=True) for f in (read_stdout, read_stderr)]
    for t in readers:
        t.start()
    timed_out = False
    try:
        rc = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _end_group(proc)
        rc = proc.wait()
    end = time.perf_counter()
    for t in readers:
        t.join(timeout=5)
    with _live_lock:
        _live.discard(proc)
    if sink:
        sink.close()
        with open(stdout_path, errors="replace") as f:
            err.extend(f.read()[-6000:].splitlines(keepends=True))
    return Finished(rc=rc, stdout="".join(out), stderr_tail="".join(err), wall_ms=(end - start) * 1e3,
                    mark_ms=(seen["mark"] - start) * 1e3 if "mark" in seen else None, timed_out=timed_out,
                    limit_s=timeout_s)
