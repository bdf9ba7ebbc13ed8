"""The sandbox each submitted notebook is graded in (``make grade``; issues 22 and 27).

On Linux with bubblewrap (``/usr/bin/bwrap``, the Debian package ``bubblewrap``) every notebook runs as
``bwrap … python -m course_utils.grading.runner /grade/job.json --result-fd N --key-fd M``, in a sandbox whose
file system holds only:

- the system (``/usr`` and its ``/bin``, ``/lib`` links), the Python installation and the course's ``.venv``,
  the course package ``course_utils/`` and ``data/``: all **read-only**;
- ``/grade``: the job (read-only) with ``work/`` (the kernel's folder, holding its own copy of the notebook),
  ``home/`` and ``log/`` (the check log), ``/tmp`` and ``/dev/shm``: each an empty tmpfs of at most
  ``Limits.scratch`` bytes; ``/dev`` itself is read-only. Nothing the notebook writes reaches the grader's disk;
- empty, writable decoys (tmpfs of at most :data:`DECOY_BYTES`) at the real paths of the submissions folder (so:
  every other student, the cache, the report), the course tree and ``$HOME``: a notebook that writes there writes
  into nothing, and the runner lists what it wrote (the grader flags it as tampering).

**The result's channel.** bubblewrap's own process (PID 1 of the sandbox) gets ``/dev/null`` as stdin, stdout and
stderr and closes every other descriptor; the grader's result pipe and a pipe holding a per-job key reach only
the runner (descriptors ``N`` and ``M``). The runner reads the key, closes that descriptor and makes itself
non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``: no process of the sandbox can ptrace it or open its ``/proc``
descriptors or memory) before it starts the kernel, which inherits neither descriptor. The runner signs its
result with the key; the grader refuses a result whose signature does not hold.

The lessons' instructor editions (``notebooks/``, the solutions), other students' work, the grader's cache and
its key are not in the sandbox at all. It has its own PID, network (loopback only), IPC, UTS and user
namespaces (``--unshare-all``), a new session, and ``--die-with-parent``: when the runner ends (or the grader
kills it at the notebook's time limit), every process the notebook started ends with it.

Limits per notebook (:class:`Limits`; ``make grade MEMORY=… PROCESSES=…``): the memory of **all its processes
together** (``MEMORY``, default 4 GiB: the grader's watcher, :mod:`course_utils.grading.watch`, sums the resident
memory of every process of the sandbox from outside it; each process's address space is limited to the same
number, ``RLIMIT_AS``), the number of processes (``RLIMIT_NPROC``, and a watch by the runner over the
sandbox's own PID namespace, since a kernel does not enforce ``RLIMIT_NPROC`` inside a user namespace created
by root), the size of a file (``RLIMIT_FSIZE``) and of every writable file system, no core files. The time limit
of the notebook is enforced twice: by the runner inside, and by the grader outside (it kills the sandbox
:data:`GRACE_S` seconds past the notebook's limit, whatever the runner does).

Without bubblewrap (macOS, Windows, a Linux without user namespaces) :func:`status` says so and grading runs
each notebook in a plain subprocess: what still holds is listed in :data:`WITHOUT_SANDBOX`.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Limits", "Status", "status", "command", "JOB_ROOT", "WITHOUT_SANDBOX", "DECOY_BYTES", "GRACE_S", "TMPFS"]

JOB_ROOT = "/grade"  # where the notebook's copy appears inside the sandbox
BWRAP = "bwrap"
DECOY_BYTES = 8 * 2**20  # each decoy tmpfs (the submissions folder, the course tree, $HOME as the grader sees them)
TMPFS = ("/tmp", "/dev/shm", "/grade/work", "/grade/home", "/grade/log")  # the notebook's writable file systems
GRACE_S = 10.0  # seconds past the notebook's limit before the grader kills its sandbox (start-up, the hand-over)
WITHOUT_SANDBOX = (
    "graded WITHOUT a sandbox: each notebook still runs in its own "
    "process group in a temporary copy, under the memory and file-size limits, and every process it "
    "started is killed at the end; the cache is still signed, symbolic links are still refused and the course "
    "tree is still verified after every notebook (the run stops if it changed). But a notebook can READ and "
    "WRITE any file this user can, including other students' notebooks and the report, and use the network: "
    "grade untrusted work only where bubblewrap runs (Linux: apt-get install bubblewrap)."
)


@dataclass(frozen=True)
class Limits:
    """What one notebook's sandbox may use. ``memory``: bytes of resident memory of all its processes together
    (and of address space per process); ``processes``: processes at once; ``file_size``: bytes of one file
    written; ``scratch``: bytes of each writable file system (/tmp, /dev/shm, its folder, home, the check log)."""

    memory: int = 4 * 2**30
    processes: int = 256
    file_size: int = 512 * 2**20
    scratch: int = 512 * 2**20

    def __post_init__(self):
        for name in ("memory", "processes", "file_size", "scratch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"the sandbox's {name} limit must be a positive integer but is {value!r}")


@dataclass(frozen=True)
class Status:
    """Whether notebooks are graded in bubblewrap (``sandboxed``), and one line saying so for the report."""

    sandboxed: bool
    line: str


@functools.cache
def _probe(bwrap: str) -> str | None:
    """None when ``bwrap`` starts a sandbox like the grader's here (every option it uses); else why not."""
    try:
        done = subprocess.run(
            [
                bwrap,
                *_system_binds(),
                *(
                    "--proc",
                    "/proc",
                    "--dev",
                    "/dev",
                    "--remount-ro",
                    "/dev",
                    "--size",
                    "1048576",
                    "--tmpfs",
                    "/dev/shm",
                ),
                *("--size", "1048576", "--tmpfs", "/tmp", "--dir", "/tmp/x"),
                *("--unshare-all", "--uid", "1000", "--gid", "1000", "--hostname", "grading", "--die-with-parent"),
                *("--new-session", "--chdir", "/tmp/x", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "true"),
            ],
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} could not be started ({exc})"
    if done.returncode != 0:
        return f"{bwrap} cannot create a sandbox here: {done.stderr.decode(errors='replace').strip()[:200]}"
    return None


def status(use_sandbox: bool = True) -> Status:
    """Is bubblewrap here and able to sandbox? (``use_sandbox=False``: the caller asked for no sandbox.)"""
    if not use_sandbox:
        return Status(False, "NOT SANDBOXED (--no-sandbox was given): " + WITHOUT_SANDBOX)
    bwrap = shutil.which(BWRAP)
    if not sys.platform.startswith("linux"):
        return Status(
            False, f"NOT SANDBOXED (bubblewrap runs on Linux only, this is {sys.platform}): " + WITHOUT_SANDBOX
        )
    if bwrap is None:
        return Status(False, "NOT SANDBOXED (bubblewrap is not installed here): " + WITHOUT_SANDBOX)
    why = _probe(bwrap)
    if why:
        return Status(False, f"NOT SANDBOXED ({why}): " + WITHOUT_SANDBOX)
    return Status(
        True,
        "each notebook ran in its own bubblewrap sandbox: its own copy only, the course package read-only, no "
        "network, no other student's work, a size limit on every writable file system, memory limited for all its "
        "processes together (their resident memory and their files in memory, summed by the grader's watcher every "
        "0.1 s; this machine's cgroups are not used), a process limit, killed from outside at its time limit, every process ended with it",
    )


def _system_binds() -> list[str]:
    """The system, read-only: /usr, and /bin, /lib, /lib64, /sbin as the host has them (links or folders)."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    return args


def _etc(job_dir: Path) -> list[str]:
    """A minimal /etc of the sandbox's own (no host file: /etc/passwd and the like are not there)."""
    etc = job_dir / "etc"
    etc.mkdir(exist_ok=True)
    (etc / "passwd").write_text("student:x:1000:1000:student:/grade/home:/bin/sh\n")
    (etc / "group").write_text("student:x:1000:\n")
    (etc / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
    args = ["--dir", "/etc"]
    for name in ("passwd", "group", "hosts"):
        args += ["--ro-bind", str(etc / name), f"/etc/{name}"]
    for name in ("localtime", "ld.so.cache"):
        if Path("/etc", name).exists():
            args += ["--ro-bind", str(Path("/etc", name).resolve()), f"/etc/{name}"]
    return args


def command(
    job_dir: Path,
    *,
    course: Path,
    decoys: list,
    limits: Limits,
    result_fd: int,
    key_fd: int,
    python: str | None = None,
) -> list[str]:
    """The bwrap command line that runs ``course_utils.grading.runner`` on ``job_dir`` (mounted at /grade).

    ``course``: the course tree (its ``course_utils/`` and ``data/`` are bound read-only); ``decoys``: folders
    replaced by an empty writable tmpfs (the submissions folder, the course tree, $HOME); ``result_fd`` and
    ``key_fd``: the descriptors (passed to bwrap, which hands them to the runner only) of the result pipe and of
    the pipe that holds the job's key.
    """
    python = python or sys.executable
    course = Path(course).resolve()
    venv = Path(sys.prefix).resolve()
    base = Path(sys.base_prefix).resolve()
    mounts = []  # (destination, args): applied shallowest first, so a bind inside a decoy shows through it
    for decoy in decoys:
        decoy = Path(decoy).resolve()
        if decoy != Path("/") and not str(decoy).startswith(("/usr/", "/proc", "/dev")):
            mounts.append((decoy, ["--size", str(min(DECOY_BYTES, limits.scratch)), "--tmpfs", str(decoy)]))
    read_only = [base, venv, course / "course_utils", course / "data"]
    for path in dict.fromkeys(read_only):
        if path.exists() and not str(path).startswith("/usr/"):
            mounts.append((path, ["--ro-bind", str(path), str(path)]))
    mounts.sort(key=lambda m: len(m[0].parts))
    args = [
        BWRAP,
        *_system_binds(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--remount-ro",
        "/dev",
        "--size",
        str(limits.scratch),
        "--tmpfs",
        "/dev/shm",
        "--size",
        str(limits.scratch),
        "--tmpfs",
        "/tmp",
        *_etc(Path(job_dir)),
    ]
    for _, mount in mounts:
        args += mount
    args += ["--ro-bind", str(Path(job_dir) / "box"), JOB_ROOT]  # job.json and the notebook: read-only
    for folder in ("work", "home", "log"):  # what the notebook may write: memory, limited, gone with the sandbox
        args += ["--size", str(limits.scratch), "--tmpfs", f"{JOB_ROOT}/{folder}"]
    args += [
        "--unshare-all",
        "--uid",
        "1000",
        "--gid",
        "1000",
        "--hostname",
        "grading",
        "--die-with-parent",
        "--new-session",
        "--chdir",
        f"{JOB_ROOT}/work",
        "--clearenv",
        "--setenv",
        "HOME",
        f"{JOB_ROOT}/home",
        "--setenv",
        "PATH",
        f"{venv}/bin:/usr/bin:/bin",
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--",
        python,
        "-m",
        "course_utils.grading.runner",
        f"{JOB_ROOT}/job.json",
        "--result-fd",
        str(result_fd),
        "--key-fd",
        str(key_fd),
    ]
    return args
