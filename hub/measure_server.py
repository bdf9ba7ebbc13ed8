"""Measure one student's server over the lessons: peak memory and CPU time, to size a hub (docs/hub.md).

Usage (``make measure-server``; re-run whenever the lessons change)::

    .venv/bin/python hub/measure_server.py                  # lessons 00-08, the instructor edition (every answer in)
    .venv/bin/python hub/measure_server.py --edition student --lessons 01 02 --json sizes.json --markdown

What it runs and reads, on this machine, one thing at a time:

- a Jupyter server as a hub starts for a student (``jupyter lab``, on loopback, an empty folder), asked for the
  JupyterLab page once; its peak resident memory (``VmHWM`` in ``/proc/PID/status``) and CPU seconds;
- each lesson in a fresh kernel of its own (nbclient, ``OMP_NUM_THREADS=1`` as the hub sets it), every code cell
  in order: the kernel's resident memory before the first cell, its peak (``VmHWM``) and at the end (``VmRSS``),
  its CPU seconds (user + system, children included) and the wall time.

From those: a student who works through the lessons one at a time (JupyterLab's default keeps a kernel running
after its tab closes, so the worst case keeps all of them) needs the server plus the largest kernel peak; with every
kernel left running, the server plus the sum of the kernels' end memory plus the largest peak's excess. It prints
the machine's load before and after: measurements taken while other work runs are slower, not larger.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024


def _status(pid: int) -> dict:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            fields[key] = int(value.split()[0]) * 1024  # kB -> bytes
    return fields


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the process and its waited-for children (/proc/PID/stat)."""
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(v) for v in stat[11:15])  # utime, stime, cutime, cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def _machine() -> dict:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if "model name" in line
        ),
        platform.processor(),
    )
    import torch

    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3, 1),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "threads": os.environ.get("OMP_NUM_THREADS"),
    }


def measure_server(timeout: float = 120) -> dict:
    """A bare Jupyter server with JupyterLab, as a student's hub server runs it, after serving the lab page once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    folder = tempfile.mkdtemp(prefix="measure-server-")
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1"]
    command += ["--IdentityProvider.token=", f"--ServerApp.root_dir={folder}"]
    if os.getuid() == 0:
        command.append("--allow-root")
    started = time.perf_counter()
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=folder)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab", timeout=10) as page:
                    page.read()
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents", timeout=10) as listing:
                    listing.read()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("the Jupyter server did not start") from None
                time.sleep(0.5)
        ready = time.perf_counter() - started
        time.sleep(1.0)
        memory = _status(server.pid)
        return {"start_s": ready, "peak_mib": memory["VmHWM"] / MIB, "cpu_s": _cpu_seconds(server.pid)}
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(folder, ignore_errors=True)


def measure_lesson(path: Path, cell_timeout: int = 600) -> dict:
    """Run every code cell of the notebook at ``path`` in a fresh kernel; its memory and CPU time."""
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="measure-lesson-") as folder:
        manager = KernelManager(kernel_name="python3")
        manager.start_kernel(cwd=folder, env={**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
        pid = manager.provisioner.process.pid
        client = NotebookClient(nb, km=manager, timeout=cell_timeout, allow_errors=True)
        started = time.perf_counter()
        with client.setup_kernel(cleanup_kc=True):
            client.kc.execute_interactive("pass", timeout=60)
            before = _status(pid)["VmRSS"]
            cpu_before = _cpu_seconds(pid)
            for index, cell in enumerate(nb.cells):
                if cell.cell_type == "code":
                    client.execute_cell(cell, index)
            wall = time.perf_counter() - started
            memory, cpu = _status(pid), _cpu_seconds(pid)
        manager.shutdown_kernel(now=True)
    errors = sum(1 for c in nb.cells if c.cell_type == "code" and any(o.output_type == "error" for o in c.outputs))
    return {
        "lesson": path.name[:2],
        "notebook": path.name,
        "wall_s": wall,
        "cpu_s": cpu - cpu_before,
        "start_mib": before / MIB,
        "peak_mib": memory["VmHWM"] / MIB,
        "end_mib": memory["VmRSS"] / MIB,
        "cells_with_errors": errors,
    }


def _notebooks(edition: str, lessons: list[str]) -> list[Path]:
    if edition == "instructor":
        folder = REPO / "notebooks"
    else:
        folder = Path(tempfile.mkdtemp(prefix="student-edition-")) / "edition"
        subprocess.run(
            [sys.executable, str(REPO / "scripts" / "publish_student_edition.py"), "build", "--out", str(folder)],
            check=True,
            capture_output=True,
        )
        folder = folder / "notebooks"
    found = sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    return [p for p in found if not lessons or p.name[:2] in lessons]


def summarize(server: dict, rows: list[dict]) -> dict:
    largest = max(rows, key=lambda r: r["peak_mib"])
    all_open = sum(r["end_mib"] for r in rows) + max(r["peak_mib"] - r["end_mib"] for r in rows)
    return {
        "one_kernel_at_a_time_mib": server["peak_mib"] + largest["peak_mib"],
        "every_kernel_left_running_mib": server["peak_mib"] + all_open,
        "largest_kernel": largest["lesson"],
        "cpu_s_all_lessons": sum(r["cpu_s"] for r in rows) + server["cpu_s"],
        "wall_s_all_lessons": sum(r["wall_s"] for r in rows),
    }


def markdown(result: dict) -> str:
    m, s, t = result["machine"], result["server"], result["summary"]
    lines = [
        f"One student's server, {result['edition']} edition, measured by hub/measure_server.py "
        f"({m['cores']} cores, {m['cpu']}, torch {m['torch']}, OMP_NUM_THREADS={m['threads']}; "
        f"load average {result['load_before'][0]:.1f} before, {result['load_after'][0]:.1f} after):",
        "",
        "| part | wall s | CPU s | peak memory MiB | memory at the end MiB |",
        "|---|---:|---:|---:|---:|",
        f"| Jupyter server (JupyterLab page served) | {s['start_s']:.1f} | {s['cpu_s']:.1f} | {s['peak_mib']:.0f} | |",
    ]
    for r in result["lessons"]:
        note = f" ({r['cells_with_errors']} cells raised)" if r["cells_with_errors"] else ""
        lines.append(
            f"| kernel, lesson {r['lesson']}{note} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
            f"{r['peak_mib']:.0f} | {r['end_mib']:.0f} |"
        )
    lines += [
        "",
        f"- one kernel at a time: server + largest kernel peak (lesson {t['largest_kernel']}) = "
        f"**{t['one_kernel_at_a_time_mib']:.0f} MiB**",
        f"- every lesson's kernel left running: **{t['every_kernel_left_running_mib']:.0f} MiB**",
        f"- CPU over all the lessons: **{t['cpu_s_all_lessons']:.0f} CPU s** "
        f"({t['wall_s_all_lessons']:.0f} s of wall time running cells)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edition", choices=("instructor", "student"), default="instructor")
    parser.add_argument("--lessons", nargs="*", default=[], help="two-digit lesson numbers (default: all)")
    parser.add_argument("--json", type=Path, help="also write the measurements to this file")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table (for docs/hub.md)")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    os.environ.setdefault("PYTHONHASHSEED", "0")
    load_before = os.getloadavg()
    server = measure_server()
    print(f"server: {server['peak_mib']:.0f} MiB peak, {server['cpu_s']:.1f} CPU s", file=sys.stderr)
    rows = []
    for path in _notebooks(args.edition, args.lessons):
        row = measure_lesson(path)
        rows.append(row)
        print(
            f"{row['notebook']}: {row['wall_s']:.1f} s, {row['cpu_s']:.1f} CPU s, peak {row['peak_mib']:.0f} MiB",
            file=sys.stderr,
        )
    result = {
        "edition": args.edition,
        "machine": _machine(),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "server": server,
        "lessons": rows,
        "summary": summarize(server, rows),
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(markdown(result) if args.markdown else json.dumps(result["summary"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
