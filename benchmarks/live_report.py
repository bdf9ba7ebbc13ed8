"""The live class report at class size: each view's size and the service's render time, 300 students x every exercise and prediction.

A synthetic class (``--students``, default 300) in the service's own store: every student has a check of every
exercise of the course (64) and a first-try prediction of every prediction, 40 % of checks wrong or crashed with a
catalogue misconception and a 200-character detail, times spread over the last 40 minutes (so some students are
"stuck now"). Then, as the service does, the in-memory view is loaded once (``class_report.live.Live.load``) and
each view is rendered ``--repeat`` times: the instructor's index, each lesson's page, each lesson's CSV, one
student's own page. The table gives each view's bytes and its median and worst render time; the run fails (exit
1) when a view is over ``--max-kb`` (500) or its median over ``--max-s`` (0.2 s).

``--browser`` also loads the largest lesson page in headless Chromium (``/usr/bin/chromium`` with Playwright, if
installed; never downloaded) and reports the time to the load event and the page's height.

Usage (see benchmarks/README.md; needs the hub's packages, ``make hub-env``)::

    .venv/bin/python benchmarks/live_report.py [--students 300] [--repeat 5] [--browser]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hub"))  # the service's package, as the hub runs it

from class_report.live import Live  # noqa: E402
from class_report.records import course_registry, normalize  # noqa: E402
from class_report.report import lesson_csv, render_class_report, render_index, render_lesson  # noqa: E402
from class_report.store import Store  # noqa: E402


def fill(store: Store, registry, students: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    misconceptions = sorted(registry.misconceptions)
    for s in range(students):
        records = []
        for lesson, exercises in registry.exercises.items():
            for exercise in exercises:
                status = rng.choices(["passed", "wrong", "crashed"], [0.6, 0.3, 0.1])[0]
                misconception = rng.choice(misconceptions[:12]) if status == "wrong" else None
                detail = "" if status == "passed" else ("case 2 of 4 differs: " + "x" * 200)[:200]
                records.append(
                    normalize(
                        {
                            "exercise": exercise,
                            "status": status,
                            "misconception": misconception,
                            "detail": detail,
                            "attempt": 1,
                        }
                    )
                )
            for prediction in registry.predictions.get(lesson, ()):
                status = rng.choice(["right", "wrong"])
                records.append(normalize({"event": "predict", "exercise": prediction, "status": status, "attempt": 1}))
        for start in range(0, len(records), 100):
            store.add(f"student{s:03d}", records[start : start + 100])


def timed(render, repeat: int) -> tuple[str, list[float]]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        out = render()
        times.append(time.perf_counter() - started)
    return out, times


def browser(page: str) -> str:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return "playwright is not installed: browser time not measured"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "lesson.html"
        path.write_text(page.replace('<meta http-equiv="refresh"', '<meta name="x"'), encoding="utf-8")
        with sync_playwright() as p:
            chromium = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            tab = chromium.new_page()
            started = time.perf_counter()
            tab.goto(path.as_uri(), wait_until="load")
            seconds = time.perf_counter() - started
            height = tab.evaluate("document.documentElement.scrollHeight")
            chromium.close()
    return f"Chromium: the largest lesson page loads in {seconds:.2f} s and is {height} px tall"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-kb", type=float, default=500.0)
    parser.add_argument("--max-s", type=float, default=0.2)
    parser.add_argument("--browser", action="store_true")
    args = parser.parse_args(argv)
    registry = course_registry()
    if registry is None:
        print("the course's registry cannot be imported (run with the course's .venv)", file=sys.stderr)
        return 2
    n_exercises = sum(len(e) for e in registry.exercises.values())
    n_predictions = sum(len(p) for p in registry.predictions.values())
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "r.sqlite")
        started = time.perf_counter()
        fill(store, registry, args.students)
        filled = time.perf_counter() - started
        started = time.perf_counter()
        live = Live(stuck_minutes=10).load(store)
        loaded = time.perf_counter() - started
        views = {"index": lambda: render_index(live, registry, base="/services/class-report/")}
        for lesson in registry.exercises:
            views[f"lesson {lesson}"] = lambda lesson=lesson: render_lesson(
                live, registry, lesson, base="/services/class-report/"
            )
            views[f"lesson {lesson} CSV"] = lambda lesson=lesson: lesson_csv(live, registry, lesson)
        own = store.latest("student000")
        views["a student's own page"] = lambda: render_class_report(own, live_note="Live: your own results only")
        print(
            f"{args.students} students x {n_exercises} exercises (+ {n_predictions} predictions): store filled in"
            f" {filled:.1f} s, live view loaded in {loaded:.2f} s (once, at the service's start)\n"
        )
        print(f"| {'view':<22} | {'KB':>7} | {'median s':>8} | {'worst s':>7} |")
        print(f"|{'-' * 24}|{'-' * 9}|{'-' * 10}|{'-' * 9}|")
        failed, largest = [], ("", "")
        for name, render in views.items():
            out, times = timed(render, args.repeat)
            size = len(out.encode("utf-8")) / 1024
            median = statistics.median(times)
            print(f"| {name:<22} | {size:7.1f} | {median:8.3f} | {max(times):7.3f} |")
            if size > args.max_kb or median > args.max_s:
                failed.append(name)
            if name.startswith("lesson") and "CSV" not in name and len(out) > len(largest[1]):
                largest = (name, out)
        store.close()
    if args.browser:
        print("\n" + browser(largest[1]))
    if failed:
        print(f"\nover {args.max_kb:g} KB or {args.max_s:g} s: {', '.join(failed)}")
        return 1
    print(f"\nevery view under {args.max_kb:g} KB and {args.max_s:g} s (median of {args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
