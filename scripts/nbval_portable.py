"""Run nbval under several CPU kernel settings: the stored outputs must hold on any student's CPU.

PyTorch picks its vectorized kernels at run time (AVX-512, AVX2, or the scalar "default" path that stands in for
an ARM laptop's different summation order), NumPy dispatches its own SIMD loops, and NumPy's OpenBLAS picks a
matrix-product kernel per CPU generation. Each setting forces one of these choices; nbval must pass under all::

    make test-portable                                     # every setting this CPU can run
    .venv/bin/python scripts/nbval_portable.py --list      # the settings and their environment variables
    .venv/bin/python scripts/nbval_portable.py --settings default,numpy-baseline -- <pytest args>

Everything after ``--`` goes to pytest (the Makefile passes its $(NBVAL) flags and the notebooks). Settings:

- ``default``: ``ATEN_CPU_CAPABILITY=default``, PyTorch's scalar kernels (every CPU);
- ``avx2``: ``ATEN_CPU_CAPABILITY=avx2`` (x86-64 CPUs with AVX2);
- ``avx512``: ``ATEN_CPU_CAPABILITY=avx512`` (x86-64 CPUs with AVX-512);
- ``numpy-baseline``: ``NPY_DISABLE_CPU_FEATURES`` naming every optional SIMD target NumPy found on this CPU, and
  ``OPENBLAS_CORETYPE`` set to an old core (Nehalem on x86-64, ARMV8 on ARM), so NumPy runs its baseline loops and
  an old BLAS kernel.

Prints one line per setting (passed, failed, the failing cells) and exits 1 if any setting failed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ALL_SETTINGS = ("default", "avx2", "avx512", "numpy-baseline")
# PyTorch's capability names (torch.backends.cpu.get_cpu_capability()) that can run each forced setting.
RUNS_ON = {"default": None, "avx2": {"AVX2", "AVX512"}, "avx512": {"AVX512"}}
FORCING = ("ATEN_CPU_CAPABILITY", "NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")
OLD_BLAS_CORE = {"x86_64": "Nehalem", "AMD64": "Nehalem", "aarch64": "ARMV8", "arm64": "ARMV8"}

_PROBE = """
import json
import numpy
import torch
try:  # what numpy.show_runtime() reads
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
except ImportError:  # NumPy 1.x
    from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
print(json.dumps({
    "torch": torch.backends.cpu.get_cpu_capability(),
    "numpy_found": [name for name in __cpu_dispatch__ if __cpu_features__.get(name)],
}))
"""


def probe(python: str = sys.executable) -> dict:
    """This CPU as the course's Python sees it: PyTorch's kernel level and NumPy's optional SIMD targets found
    (probed without this shell's own forcing variables, so a setting already in force does not hide the CPU)."""
    env = {k: v for k, v in os.environ.items() if k not in FORCING}
    out = subprocess.run([python, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def settings_env(cpu: dict, machine: str | None = None) -> dict[str, dict[str, str] | None]:
    """Each setting's environment variables, or None where this CPU cannot run it."""
    machine = machine or platform.machine()
    envs: dict[str, dict[str, str] | None] = {}
    for name, needs in RUNS_ON.items():
        envs[name] = {"ATEN_CPU_CAPABILITY": name} if needs is None or cpu["torch"] in needs else None
    numpy_env = {"NPY_DISABLE_CPU_FEATURES": " ".join(cpu["numpy_found"])}
    if machine in OLD_BLAS_CORE:
        numpy_env["OPENBLAS_CORETYPE"] = OLD_BLAS_CORE[machine]
    envs["numpy-baseline"] = numpy_env
    return envs


def results(junit: Path) -> tuple[int, list[str]]:
    """(passed, failed test names) from a pytest JUnit XML report."""
    passed, failed = 0, []
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            notebook = case.get("classname", "").removesuffix(".ipynb").rsplit(".", 1)[-1]  # folder.NN_name.ipynb
            failed.append(f"{notebook}::{case.get('name')}")
        elif case.find("skipped") is None:
            passed += 1
    return passed, failed


def run_setting(name: str, env_vars: dict[str, str], pytest_args: list[str], python: str = sys.executable) -> dict:
    """Run pytest (nbval) once with `env_vars` (and no other forcing variable); returns counts and failures."""
    env = {k: v for k, v in os.environ.items() if k not in FORCING}  # one setting at a time, whatever the shell has
    env.update({"OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", **env_vars})
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *pytest_args]
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        passed, failed = results(junit) if junit.exists() else (0, [])
    return {
        "setting": name,
        "env": env_vars,
        "returncode": proc.returncode,
        "passed": passed,
        "failed": failed,
        "seconds": seconds,
        "log": proc.stdout[-20000:] + proc.stderr[-5000:],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settings", default="all", help=f"comma-separated, from {', '.join(ALL_SETTINGS)}; or all")
    parser.add_argument("--jobs", type=int, default=1, help="settings run at the same time (each uses one core)")
    parser.add_argument("--list", action="store_true", help="print the settings for this CPU and exit")
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments (nbval flags, notebooks)")
    args = parser.parse_args(argv)

    cpu = probe()
    envs = settings_env(cpu)
    wanted = ALL_SETTINGS if args.settings == "all" else tuple(s.strip() for s in args.settings.split(",") if s.strip())
    unknown = [s for s in wanted if s not in envs]
    if unknown:
        parser.error(f"unknown setting(s) {unknown}; expected some of {list(ALL_SETTINGS)}")
    found = " ".join(cpu["numpy_found"]) or "none"
    print(f"this CPU: PyTorch kernels {cpu['torch']}, NumPy optional SIMD {found}", flush=True)
    runnable = []
    for name in wanted:
        if envs[name] is None:
            print(f"{name:>15}: skipped, this CPU cannot run it")
        else:
            runnable.append(name)
            if args.list:
                print(f"{name:>15}: " + " ".join(f"{k}={v!r}" for k, v in envs[name].items()))
    if args.list:
        return 0
    if not args.pytest_args:
        parser.error("give pytest's arguments after --, e.g. -- --nbval notebooks")

    def one(name):
        return run_setting(name, envs[name], args.pytest_args)

    bad = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for result in pool.map(one, runnable):  # in order; each line as soon as its setting is done
            ok = result["returncode"] == 0 and not result["failed"] and result["passed"] > 0
            bad += not ok
            variables = " ".join(f"{k}={v!r}" for k, v in result["env"].items())
            counts = f"{result['passed']} passed, {len(result['failed'])} failed in {result['seconds']:.0f} s"
            print(f"{result['setting']:>15}: {counts}  ({variables})")
            for test in result["failed"]:
                print(f"{'':>17}FAILED {test}")
            if not ok:
                print(result["log"])
            sys.stdout.flush()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
