# Child processes for bench/zoo/zoo.py: each in a session of its own (so that a compile worker and the compiler
# processes it starts can be ended together), timed from spawn, optionally to a line the child prints when its
# first result is ready, with a time limit (and a shorter one to that line, so that a runner that crashes late or
# hangs while loading costs little); and every child still running ended when the zoo is stopped.
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
    mark_missed: bool = False   # ended because the marker line had not come within its limit

    def why(self):
        """One line saying why the command failed."""
        if self.mark_missed:
            return f"no first result within {self.limit_s:.0f} s (ended)"
        if self.timed_out:
            return f"did not finish within {self.limit_s:.0f} s"
        if self.rc < 0:
            return f"killed by signal {-self.rc}" + (" (crashed)" if -self.rc in (signal.SIGSEGV, signal.SIGABRT,
                                                                              signal.SIGBUS) else "")
        lines = [l.strip() for l in self.stderr_tail.splitlines() if l.strip()]
        if not lines:
            return f"exit {self.rc}: (nothing on stderr)"
        # A last line that points "above" (the model's own error, then mpspack's) keeps the lines it points at.
        shown = lines[-4:] if "(see above)" in lines[-1] else lines[-1:]
        return f"exit {self.rc}: " + " | ".join(shown)[:800]


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


def _wait(proc, start, timeout_s, seen, mark_limit_s):
    """The exit status, or None with the limit that passed first ("mark" or "total")."""
    limits = ([(mark_limit_s, "mark")] if mark_limit_s and mark_limit_s < timeout_s else []) + [(timeout_s, "total")]
    for limit_s, which in limits:
        try:
            return proc.wait(timeout=max(0.0, start + limit_s - time.perf_counter())), None
        except subprocess.TimeoutExpired:
            if which == "total" or "mark" not in seen:
                return None, (which, limit_s)


def run(cmd, env=None, timeout_s=120.0, mark=None, stdout_path=None, mark_limit_s=None):
    """Runs CMD to its end or TIMEOUT_S (or MARK_LIMIT_S, when the line MARK has not come by then); stdout is kept
    (or written to STDOUT_PATH with stderr), stderr's last lines kept."""
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
    rc, passed = _wait(proc, start, timeout_s, seen, mark_limit_s if mark else None)
    if passed:
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
                    mark_ms=(seen["mark"] - start) * 1e3 if "mark" in seen else None, timed_out=bool(passed),
                    limit_s=passed[1] if passed else timeout_s, mark_missed=bool(passed) and passed[0] == "mark")
