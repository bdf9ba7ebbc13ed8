"""One notebook, graded: its sandbox started, watched and ended from outside, its signed result read.

:func:`grade_notebook` never imports student code and never raises for a problem of the notebook. The steps:

1. The notebook's bytes are parsed here (never run); its check cells are found by the exercise ids they name.
2. A fresh job folder gets ``job.json`` and the notebook; two pipes are made: the result's, and one holding a
   per-job key (32 random bytes). The sandbox (:mod:`~course_utils.grading.sandbox`) gets ``/dev/null`` as its
   standard streams; only the runner gets the two pipes (it reads and closes the key before the kernel starts).
3. From outside, the grader kills the whole sandbox :data:`~course_utils.grading.sandbox.GRACE_S` seconds past
   the notebook's limit (a stopped or frozen runner included) and when the resident memory of all its processes
   together passes ``Limits.memory`` (:class:`~course_utils.grading.watch.MemoryWatch`).
4. At most :data:`~course_utils.grading.records.MAX_RESULT_BYTES` are read from the result's pipe; a result whose
   signature does not hold is refused unparsed (tampering; never cached). A signed one is read by
   :func:`~course_utils.grading.verdicts.interpret`.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict
from pathlib import Path

from course_utils.grading import sandbox, verdicts
from course_utils.grading.guard import Guard, squash
from course_utils.grading.records import COURSE, KERNEL, MAX_RESULT_BYTES, NotebookResult, one_line
from course_utils.grading.runner import SIGNATURE
from course_utils.grading.submissions import read_submission
from course_utils.grading.watch import MemoryWatch

__all__ = ["Drain", "grade_notebook", "crashed_all", "read_signed", "end_everything", "run_sandbox"]


def crashed_all(exercises, reason: str, tampering: list | None = None) -> NotebookResult:
    """Every exercise ``crashed`` with ``reason``."""
    return NotebookResult({ex.id: ("crashed", reason, None) for ex in exercises}, [reason], list(tampering or []))


def read_signed(data: bytes, key: bytes) -> bytes | None:
    """The payload when ``data`` is :data:`SIGNATURE` + its HMAC under ``key`` + newline + payload; else None."""
    head = len(SIGNATURE) + 64 + 1
    if len(data) < head or not data.startswith(SIGNATURE) or data[head - 1 : head] != b"\n":
        return None
    mac, payload = data[len(SIGNATURE) : head - 1], data[head:]
    expected = hmac.new(key, payload, "sha256").hexdigest().encode()
    return payload if hmac.compare_digest(mac, expected) else None


class Drain(threading.Thread):
    """Read a pipe to its end, keeping at most ``limit`` bytes (``overflow`` when there were more)."""

    def __init__(self, pipe, limit: int):
        super().__init__(daemon=True)
        self.pipe, self.limit, self.chunks, self.size, self.overflow = pipe, limit, [], 0, False
        self.start()

    def run(self) -> None:
        with self.pipe:
            while chunk := self.pipe.read(65536):
                if self.size + len(chunk) > self.limit:
                    self.overflow = True
                    continue
                self.chunks.append(chunk)
                self.size += len(chunk)

    @property
    def data(self) -> bytes:
        return b"".join(self.chunks)


def end_everything(proc: subprocess.Popen, token: str | None) -> None:
    """Kill the job's process group and (without a sandbox, on Linux) every process that carries its token."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # Windows: the runner only
            proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    if token is None or not os.path.isdir("/proc"):
        return  # (without /proc: macOS, Windows; a process that left the group is not found)
    needle = f"COURSE_GRADE_JOB={token}".encode()
    for _ in range(5):
        left = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    if needle in handle.read().split(b"\0"):
                        left.append(int(pid))
            except OSError:
                continue
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not left:
            return


def _command(box: Path, status: sandbox.Status, limits, decoys: list, course: Path, result_fd: int, key_fd: int):
    if status.sandboxed:
        return sandbox.command(
            box.parent, course=course, decoys=decoys, limits=limits, result_fd=result_fd, key_fd=key_fd
        )
    return [
        sys.executable,
        *("-m", "course_utils.grading.runner", str(box / "job.json")),
        *("--result-fd", str(result_fd), "--key-fd", str(key_fd)),
    ]


def run_sandbox(box: Path, status, limits, decoys, course, notebook_timeout) -> tuple:
    """Start the sandbox, watch it, end it: (the signed payload or None, what stopped it, whether bytes came back).

    What stopped it: None, ``"time"`` or ``"memory"`` (the grader), ``"size"`` (too large a result), or
    ``"signal N"`` (the runner died of a signal nobody outside sent)."""
    key = secrets.token_bytes(32)
    result_r, result_w = os.pipe()
    key_r, key_w = os.pipe()
    os.write(key_w, key)  # 32 bytes: within the pipe's buffer
    os.close(key_w)
    token = None if status.sandboxed else secrets.token_hex(12)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COURSE_")}
    if token:
        env["COURSE_GRADE_JOB"] = token
    try:
        proc = subprocess.Popen(
            _command(box, status, limits, decoys, course, result_w, key_r),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # nothing of the sandbox reaches the grader's files: PID 1 holds /dev/null
            stderr=subprocess.DEVNULL,
            cwd=str(box),
            env=env,
            start_new_session=True,
            pass_fds=(result_w, key_r),
        )
    finally:
        os.close(result_w)
        os.close(key_r)
    output = Drain(os.fdopen(result_r, "rb"), MAX_RESULT_BYTES)
    mounts = [(m, limits.scratch) for m in sandbox.TMPFS] + [(str(d), sandbox.DECOY_BYTES) for d in decoys]
    watch = MemoryWatch(proc.pid, limits.memory, mounts if status.sandboxed else ())
    stopped = None
    try:
        proc.wait(timeout=notebook_timeout + sandbox.GRACE_S)  # the notebook's own limit, from outside
    except subprocess.TimeoutExpired:
        stopped = "time"
    finally:
        watch.stop()
        end_everything(proc, token)
        output.join(timeout=30)
    if watch.exceeded:
        stopped = "memory"
    code = proc.returncode if stopped is None else None  # bwrap: 128 + N when the runner died of signal N
    if isinstance(code, int) and (code < 0 or 128 < code < 128 + 65):
        stopped = f"signal {-code if code < 0 else code - 128}"
    data = output.data
    if output.overflow:
        return None, stopped or "size", True
    return read_signed(data, key), stopped, bool(data)


def grade_notebook(
    path: Path,
    exercises: list,
    *,
    cell_timeout: float = 60,
    notebook_timeout: float = 600,
    data: bytes | None = None,
    limits: sandbox.Limits | None = None,
    sandbox_status: sandbox.Status | None = None,
    decoys: list | None = None,
    guard: Guard | None = None,
    course: Path = COURSE,
) -> NotebookResult:
    """Run one notebook in its own sandbox (its own kernel, in a temporary copy) and return each exercise's status.

    Parameters
    ----------
    path : the student's notebook (never modified; read without following a symbolic link unless ``data``)
    exercises : list of :class:`~course_utils.grading.records.Exercise`, the lesson's registered exercises
    cell_timeout, notebook_timeout : seconds a cell, and the whole notebook, may run
    data : the notebook's bytes, when already read
    limits, sandbox_status : the sandbox's limits and whether bubblewrap is used (default: :func:`sandbox.status`)
    decoys : folders the sandbox hides behind an empty tmpfs (the submissions folder; the course tree and $HOME are
        always added)

    Never raises for a problem of the notebook: every problem becomes a status and a note. A result the grader
    had to stop (time, memory) or refused (not signed by the runner) has ``final`` False: it is not cached.
    """
    import nbformat

    path = Path(path)
    limits = limits or sandbox.Limits()
    sandbox_status = sandbox_status or sandbox.status()
    guard = guard or Guard(course)
    try:
        data = read_submission(path) if data is None else data
        nb = nbformat.reads(data.decode("utf-8"), as_version=4)
    except Exception as exc:  # not UTF-8, not JSON, not a notebook: report it, never stop the run
        return crashed_all(exercises, one_line(f"the notebook could not be read ({type(exc).__name__}: {exc})"))
    notes = []
    kernelspec = nb.get("metadata", {}).get("kernelspec")
    if not kernelspec:
        notes.append(f"the notebook has no kernel metadata; ran it with the course's {KERNEL} kernel")
    elif kernelspec.get("name") != KERNEL:
        notes.append(one_line(f"the notebook asks for kernel {kernelspec.get('name')!r}; ran it with {KERNEL}"))
    code_cells = [cell for cell in nb.get("cells", []) if cell.get("cell_type") == "code"]
    sources = [str(cell.get("source", "")) for cell in code_cells]
    own = squash("\n".join(sources))
    where = {}  # exercise id -> the first code cell whose source names it in quotes (its check cell)
    for index, source in enumerate(sources):
        for ex in exercises:
            if ex.id not in where and verdicts.names(source, ex.id):
                where[ex.id] = index
    present = [ex.id for ex in exercises if ex.id in where]
    if sorted(present, key=lambda i: where[i]) != present:
        notes.append("exercise checks are out of the lesson's order: " + ", ".join(sorted(present, key=where.get)))

    job_dir = Path(tempfile.mkdtemp(prefix="grade_"))
    try:
        box = job_dir / "box"
        for folder in ("submitted", "work", "home", "log"):  # the last three: tmpfs mount points in the sandbox
            (box / folder).mkdir(parents=True)
        (box / "submitted" / path.name).write_bytes(data)
        all_decoys = [Path(d).resolve() for d in decoys or []] + [course.resolve(), Path.home().resolve()]
        bound = [str(Path(sys.base_prefix).resolve()), str(Path(sys.prefix).resolve())]
        bound += [str(course / "course_utils"), str(course / "data")]
        job = {
            "notebook": path.name,
            "cell_timeout": cell_timeout,
            "notebook_timeout": notebook_timeout,
            "limits": asdict(limits),
            "sandboxed": sandbox_status.sandboxed,
            "decoys": [str(d) for d in all_decoys] if sandbox_status.sandboxed else [],
            "bound": bound,
        }
        (box / "job.json").write_text(json.dumps(job), encoding="utf-8")
        payload, stopped, answered = run_sandbox(box, sandbox_status, limits, all_decoys, course, notebook_timeout)
    finally:
        shutil.rmtree(job_dir, ignore_errors=True)

    if stopped == "memory":
        reason = (
            f"memory: its processes together held more than {limits.memory / 2**30:.3g} GiB (with what it wrote "
            "into its memory-backed files); the grader stopped them all"
        )
        out = crashed_all(exercises, reason)
        out.notes[:0] = notes
        out.final = False
        return out
    if payload is None and answered and stopped != "size":
        reason = "the notebook's result was not signed by the runner: refused (the whole notebook counts as crashed)"
        out = crashed_all(exercises, reason, [reason])
        out.final = False
        return out
    try:
        result = json.loads(payload.decode("utf-8")) if payload is not None else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        result = None
    if not verdicts.valid_result(result, len(code_cells)):
        if stopped == "time":
            reason = f"the notebook ran past its {notebook_timeout:g} s limit and was stopped from outside"
            out = NotebookResult({ex.id: ("timed_out", reason, None) for ex in exercises}, [*notes, reason])
            out.final = False
            return out
        if stopped == "size":
            reason = (
                f"the notebook's result was larger than {MAX_RESULT_BYTES // 2**20} MB (the notebook counts as crashed)"
            )
        else:
            reason = "the notebook gave no result (its kernel or the runner was stopped; the whole notebook counts as crashed)"
            if stopped and stopped.startswith("signal"):
                reason = (
                    f"the notebook gave no result: its runner was killed ({stopped}), from inside its sandbox or by "
                    "the system (the whole notebook counts as crashed)"
                )
        return NotebookResult({ex.id: ("crashed", reason, None) for ex in exercises}, [*notes, reason])
    out = verdicts.interpret(result, exercises, sources, where, guard, own, course)
    out.notes[:0] = notes
    return out
