"""Run one submitted notebook and report what happened: the part of ``make grade`` inside the sandbox.

``python -m course_utils.grading.runner ROOT/job.json --result-fd N --key-fd M`` (started by
:mod:`course_utils.grading.job`, inside the bubblewrap sandbox of :mod:`course_utils.grading.sandbox` where there
is one). ``ROOT`` holds ``job.json`` (the notebook's name and the limits) and ``submitted/NAME`` (the student's
notebook), read-only in the sandbox; the runner copies the notebook into ``work/`` (the kernel's working
directory) and keeps the check log in ``log/`` (in the sandbox both are size-limited tmpfs, as are ``home/``,
``/tmp`` and ``/dev/shm``: nothing the notebook writes reaches the grader's disk).

Before it starts the kernel the runner reads the job's key from descriptor ``M`` and closes it, and makes itself
non-dumpable (no process of the sandbox can ptrace it, read its memory or open its descriptors through
``/proc``); the kernel inherits neither descriptor. At the end it writes one JSON object, signed with the key
(:func:`sign`), to descriptor ``N``, a pipe the grader reads (at most a few MB):

- ``cells``: for every code cell, whether it ran (or was ``skipped``: tagged ``skip-execution``), its error
  (exception name, message, the line of the student's own cell it came from), the byte range of the check log
  written while it ran, and the lines it printed that start like a check's verdict (``printed``);
- ``stopped``: why the run ended early (a time limit, the kernel died, too many processes);
- ``probe``: where ``course_utils.checks.check`` and the check log's writer came from at the end (a replaced
  checker is flagged by the grader);
- ``outside``: files the notebook wrote into the sandbox's decoys (the submissions folder, the course tree,
  ``$HOME`` as the grader sees them: empty tmpfs here); ``written``: files it wrote in its own folder;
- ``log``: the check log (latin-1 text: one character per byte).

Everything here but the key and the result's descriptor is within reach of the student's code (it can stop or
kill this process): it can only spoil its own result (the grader refuses an unsigned one, treats a missing one
as a crash, and kills the sandbox at the notebook's time limit from outside). Never imported by the lessons.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import re
import secrets
import signal
import sys
import threading
import time
from pathlib import Path

MAX_MESSAGE = 2000  # characters of an exception message kept (the grader cuts further) ...
MAX_MESSAGES = 1000  # ... for this many cells; later errors keep their name only
MAX_LOG = 2 * 2**20  # bytes of the check log handed back
SIGNATURE = b"course-grade-result-v1 "  # then the HMAC-SHA-256 (hex) of the payload, a newline, the payload
SKIP_TAG = "skip-execution"  # nbclient does not run a cell with this tag
MAX_PRINTED = 2000  # verdict-like printed lines handed back, all cells together
PROBE_MODULES = {
    "course_utils.checks": ("check", "predict"),
    "course_utils.checking.log": ("write", "build"),
}
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CELL_LINE = re.compile(r"^\s*(?:-+>|\x1b\[[0-9;]*m-+>)?\s*(\d+)\b")


def _set_limits(limits: dict) -> None:
    try:
        import resource
    except ImportError:  # Windows: no resource limits (the report says the run had no sandbox)
        return
    for name, key in (("RLIMIT_AS", "memory"), ("RLIMIT_NPROC", "processes"), ("RLIMIT_FSIZE", "file_size")):
        value = limits.get(key)
        if isinstance(value, int) and value > 0:
            try:
                resource.setrlimit(getattr(resource, name), (value, value))
            except (ValueError, OSError):
                pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def sign(payload: bytes, key: bytes) -> bytes:
    """The runner's result as it travels: :data:`SIGNATURE`, the payload's HMAC-SHA-256, a newline, the payload."""
    return SIGNATURE + hmac.new(key, payload, hashlib.sha256).hexdigest().encode() + b"\n" + payload


def _not_dumpable() -> None:
    """No process of the sandbox (same user) may ptrace this one, read its memory or open /proc/PID/fd/*."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):  # not Linux: there is no sandbox either (the report says so)
        pass


def _read_key(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 4096):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _printed(cell) -> list:
    """The lines a cell printed that start like a check's verdict (a symbol, not a letter), a few, cut short."""
    found = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            for line in str(output.get("text", ""))[:20_000].splitlines():
                if line[:1] and ord(line[0]) > 127 and len(found) < 8:
                    found.append(line[:120])
    return found


def _error(cell, keep_message: bool = True) -> dict | None:
    """The first error output of a cell: name, message and the line of this cell it came from."""
    for output in cell.get("outputs", []):
        if output.get("output_type") != "error":
            continue
        line = None
        for frame in output.get("traceback", []):  # IPython marks the failing line of a cell with "---->"
            text = _ANSI.sub("", str(frame))
            if text.startswith(("Cell In[", "Input In [")):
                found = re.search(r"line (\d+)", text.splitlines()[0])
                line = int(found.group(1)) if found else line
        return {
            "ename": str(output.get("ename", "Error"))[:100],
            "evalue": str(output.get("evalue", ""))[:MAX_MESSAGE] if keep_message else "",
            "line": line,
        }
    return None


class _ProcessWatch(threading.Thread):
    """Count the processes of this PID namespace (the sandbox's own) and end them all past the limit."""

    def __init__(self, limit: int, sandboxed: bool):
        super().__init__(daemon=True)
        self.limit, self.sandboxed = limit, sandboxed
        self.exceeded, self.most = False, 0
        self.done = threading.Event()

    def _count(self) -> int:
        try:
            return sum(name.isdigit() for name in os.listdir("/proc"))
        except OSError:
            return 0

    def run(self) -> None:
        if not self.sandboxed:  # /proc shows the whole machine: only the rlimit applies
            return
        while not self.done.wait(0.05):
            count = self._count()
            self.most = max(self.most, count)
            if count > self.limit + 3:  # + bwrap's init, this runner's python, margin
                self.exceeded = True
                for _ in range(20):
                    try:
                        os.kill(-1, signal.SIGKILL)  # every process of the sandbox but init and this one
                    except OSError:
                        pass
                    if self._count() <= 2:
                        break
                    time.sleep(0.02)


def _probe_code(marker: str) -> str:
    return f"""def _course_grader_probe():
    import json, sys
    found = {{}}
    for module_name, names in {PROBE_MODULES!r}.items():
        module = sys.modules.get(module_name)
        if module is None:
            continue
        entry = {{"file": str(getattr(module, "__file__", None)), "functions": {{}}}}
        for name in names:
            function = module.__dict__.get(name)
            code = getattr(function, "__code__", None)
            entry["functions"][name] = [
                str(getattr(function, "__module__", None)),
                str(getattr(code, "co_filename", None)),
                str(getattr(function, "__qualname__", None)),
            ]
        found[module_name] = entry
    sys.stdout.write({marker!r} + json.dumps(found) + "\\n")


_course_grader_probe()
del _course_grader_probe
"""


def _scan(decoys: list, bound: list, limit: int = 20) -> list:
    """Regular files (and links) under the decoys, never descending into a read-only bind."""
    found = []
    bound_set = {os.path.normpath(b) for b in bound}
    for decoy in decoys:
        for folder, dirs, files in os.walk(decoy, followlinks=False):
            dirs[:] = [d for d in dirs if os.path.normpath(os.path.join(folder, d)) not in bound_set]
            for name in files:
                found.append(os.path.join(folder, name))
                if len(found) >= limit:
                    return found
    return found


def run(job_path: Path) -> dict:
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    job = json.loads(job_path.read_text(encoding="utf-8"))
    root = job_path.parent
    work, log_path = root / "work", root / "log" / "check_log.jsonl"
    for folder in ("work", "home", "log"):  # in the sandbox: size-limited tmpfs mounted by bwrap
        (root / folder).mkdir(exist_ok=True)
    (work / job["notebook"]).write_bytes((root / "submitted" / job["notebook"]).read_bytes())
    limits = job.get("limits", {})
    cell_timeout, notebook_timeout = float(job["cell_timeout"]), float(job["notebook_timeout"])
    _set_limits(limits)
    watch = _ProcessWatch(int(limits.get("processes", 256)), bool(job.get("sandboxed")))
    watch.start()

    nb = nbformat.read(work / job["notebook"], as_version=4)
    code_cells = [(i, cell) for i, cell in enumerate(nb.cells) if cell.get("cell_type") == "code"]
    for _, cell in code_cells:
        cell["outputs"], cell["execution_count"] = [], None
    log_path.touch()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root / "home"),
        "LANG": "C.UTF-8",
        "COURSE_CHECK_LOG": str(log_path),
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
        "MPLBACKEND": "Agg",
        "COURSE_DEVICE": "cpu",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
        "JUPYTER_RUNTIME_DIR": str(root / "home" / "runtime"),
        "IPYTHONDIR": str(root / "home" / "ipython"),
        "MPLCONFIGDIR": str(root / "home" / "matplotlib"),
    }
    if not job.get("sandboxed") and os.environ.get("COURSE_GRADE_JOB"):
        env["COURSE_GRADE_JOB"] = os.environ["COURSE_GRADE_JOB"]  # how the grader finds what is left
    os.environ.update({k: env[k] for k in ("JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "JUPYTER_PLATFORM_DIRS")})
    cells = [{"ran": False, "error": None, "log": None} for _ in code_cells]
    result = {"cells": cells, "stopped": None, "probe": None, "outside": [], "processes": 0}
    km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
    client = NotebookClient(
        nb,
        km=km,
        timeout=cell_timeout,
        kernel_name="python3",
        allow_errors=True,
        interrupt_on_timeout=False,
        record_timing=False,
        shutdown_kernel="immediate",
        resources={"metadata": {"path": str(work)}},
    )
    deadline = time.monotonic() + notebook_timeout
    index = 0
    devnull = open(os.devnull, "wb")  # noqa: SIM115 - the kernel's stderr (start-up warnings) stays out
    try:
        with client.setup_kernel(env=env, cwd=str(work), stdout=devnull, stderr=devnull, cleanup_kc=True):
            client.reset_execution_trackers()
            errors = printed = 0
            for index, (cell_index, cell) in enumerate(code_cells):
                if SKIP_TAG in (cell.get("metadata", {}).get("tags") or []):
                    cells[index]["skipped"] = True
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    result["stopped"] = ["timed_out", index, f"the notebook ran past its {notebook_timeout:g} s limit"]
                    break
                client.timeout = max(1, int(min(cell_timeout, remaining)))
                start = log_path.stat().st_size
                cells[index]["ran"] = True
                try:
                    client.execute_cell(cell, cell_index)
                except CellTimeoutError:
                    limit = "cell" if client.timeout >= cell_timeout else "notebook"
                    seconds = cell_timeout if limit == "cell" else notebook_timeout
                    result["stopped"] = [
                        "timed_out",
                        index,
                        f"code cell {index + 1} ran past the {seconds:g} s {limit} limit",
                    ]
                    cells[index]["log"] = [start, log_path.stat().st_size]
                    break
                cells[index]["log"] = [start, log_path.stat().st_size]
                cells[index]["error"] = _error(cell, keep_message=errors < MAX_MESSAGES)
                errors += cells[index]["error"] is not None
                if printed < MAX_PRINTED:
                    cells[index]["printed"] = _printed(cell)
                    printed += len(cells[index]["printed"])
                cell["outputs"] = []  # kept by nbclient otherwise: a notebook's outputs are not the runner's memory
                if watch.exceeded:
                    raise DeadKernelError("too many processes")
            else:
                marker = f"@@course-grader-probe-{secrets.token_hex(8)}@@"
                probe = nbformat.v4.new_code_cell(_probe_code(marker))
                nb.cells.append(probe)
                client.timeout = max(2, int(min(30, deadline - time.monotonic() + 5)))
                try:
                    client.execute_cell(probe, len(nb.cells) - 1)
                    for output in probe.get("outputs", []):
                        for line in str(output.get("text", "")).splitlines():
                            if line.startswith(marker):
                                result["probe"] = json.loads(line[len(marker) :])
                except Exception:  # a kernel that does not answer: the probe stays None
                    pass
                nb.cells.pop()
    except DeadKernelError:
        if watch.exceeded:
            message = f"the notebook started more than {limits.get('processes')} processes; all were stopped"
            result["stopped"] = ["crashed", index, message]
        else:
            result["stopped"] = ["crashed", index, f"the kernel died in code cell {index + 1}"]
    except Exception as exc:  # a notebook nbclient cannot run at all (bad cells, kernel start)
        result["stopped"] = ["crashed", index, f"the notebook could not be run ({type(exc).__name__}: {exc})"[:300]]
    finally:
        devnull.close()
    if watch.exceeded and not result["stopped"]:
        message = f"the notebook started more than {limits.get('processes')} processes; all were stopped"
        result["stopped"] = ["crashed", index, message]
    watch.done.set()
    result["processes"] = watch.most
    result["outside"] = _scan(job.get("decoys", []), job.get("bound", []))
    written = []
    for folder, dirs, files in os.walk(work, followlinks=False):
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]):
            relative = os.path.relpath(os.path.join(folder, name), work)
            if relative != job["notebook"] and len(written) < 50:
                written.append(relative)
    result["written"] = written
    try:
        with open(log_path, "rb") as handle:  # latin-1: one character per byte, so the offsets stay right
            result["log"] = handle.read(MAX_LOG).decode("latin-1")
    except OSError:
        result["log"] = ""
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Run one notebook of make grade (inside its sandbox).")
    parser.add_argument("job", type=Path)
    parser.add_argument("--result-fd", type=int, required=True)
    parser.add_argument("--key-fd", type=int, required=True)
    args = parser.parse_args(argv)
    _not_dumpable()
    key = _read_key(args.key_fd)
    os.set_inheritable(args.result_fd, False)  # the kernel, started later, never holds it
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    result = run(args.job)
    with os.fdopen(args.result_fd, "wb") as handle:
        handle.write(sign(json.dumps(result).encode("utf-8"), key))
    return 0


if __name__ == "__main__":
    sys.exit(main())
