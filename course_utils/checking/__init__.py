"""The checking engine: how an exercise's answer and a prediction are judged. No lesson content lives here.

Lessons never import this package: they call :mod:`course_utils.checks`. The lessons' content (each lesson's
exercises, predictions and experiments) is :mod:`course_utils.lessons`. The map:

- ``model.py``: the types an author writes: :class:`~course_utils.checking.model.Exercise`,
  :class:`~course_utils.checking.model.Prediction`, :class:`~course_utils.checking.model.Misconception`,
  :class:`~course_utils.checking.model.Case`, :class:`~course_utils.checking.model.KnownWrong`, ``STATUSES``
  (data only); ``claim.py``: :class:`~course_utils.checking.claim.Claim` and ``Memo`` (the claims runner's cache).
- ``registry.py``: every exercise and prediction by id (``registry.get("02.padding_mask")``), loaded lazily from
  ``course_utils/lessons/lesson_NN/exercises.py`` by the id's prefix.
- ``misconceptions.py``: the catalogue of known mistakes, shared by every lesson: it reads each lesson's entries
  (``course_utils/lessons/lesson_NN/mistakes.py``, data only) in lesson order.
- ``patches.py``: how the course's primitives behave under a misconception.
- ``engine.py`` (the verdict: ``judge``), ``preparing.py`` (an exercise's cases and right outputs; one call of an
  answer), ``naming.py`` (which known mistake fits, and the words), ``delegation.py`` (a helper that already
  computed the answer), ``handed_back.py`` (what this kernel's checks returned), ``runner.py`` (state, stubs, what
  an answer called), ``time_limits.py`` (the time limit and its guard process), ``compare.py``,
  ``predictions.py`` (a prediction's verdict), ``tries.py`` (the first try counts, until the reveal),
  ``prediction_leaks.py`` (a wrong message must not give the answer away), ``hints.py``, ``log.py`` (the check log
  and its sinks).
- ``relations.py`` (``explain``) and ``relation_finders.py`` (``findings``), ``mutations.py``, ``traces.py``: a
  mistake named by how the answer's output relates to the right one, by the reference with one step varied, by
  where a NaN first appears.
- What an answer is and does besides its values, each called from ``engine.judge``: ``contract.py``,
  ``touches.py``, ``integrity.py``, ``crash_site.py``, ``extra_checks.py``, ``gradients.py``, ``constraints.py``.
- Also in the engine (each as its own docstring begins):
  ``aliasing.py`` (A module handed back that shares its weights' memory with another argument);
  ``call_watch.py`` (What each call of the answer changes in place, when a driver (not the check) hands it its arguments);
  ``distinct_inputs.py`` (One tensor passed for two inputs, made two);
  ``driven_touches.py`` (An argument a driver handed the answer, changed in place by it);
  ``extremes.py`` (The fixed cases again at extreme magnitudes);
  ``mutation_sites.py`` (More steps a student varies, for :mod:`course_utils.checking.mutations`);
  ``nan_causes.py`` (Why a NaN appears in a wrong answer's output, said in words);
  ``observations.py`` (What a wrong output does, observed against the right one, for mistakes that no catalogue holds);
  ``options.py`` (The options a case passes, exercised the other way too);
  ``relation_basics.py`` (What every relation finder shares);
  ``shape_observations.py``, ``weight_observations.py`` (parts of ``observations.py``: shapes; weights and masks).
- The published student edition checks from data, not code (issue 29): ``recorded.py`` (the hooks that record
  and replay each call of the course's code), ``recorded_values.py`` (values as JSON and arrays, the digest of an
  input), ``recorded_files.py`` (the sha256-checked files), ``recorded_exercises.py`` (an exercise's words as data,
  replayed); ``scripts/record_checks.py`` writes them.
- ``cases.py``: tools for lesson authors (distinct sizes, large scores, padding, counting drivers).
- ``audit.py``: ``python -m course_utils.checking.audit [--markdown]``, the per-exercise checker audit.

Import rules (``tests/checking/test_exercise_imports.py`` enforces them): a lesson's ``exercises.py`` imports ``model``,
``cases``, course modules and earlier lessons' public names, never the engine (its ``mistakes.py`` also
``patches``); the engine never imports a lesson
module (the registry loads them by name and hands the exercise over); no module imports another's private names;
there are no import cycles. Importing this package imports nothing.
"""

__all__ = [
    "aliasing",
    "audit",
    "call_watch",
    "cases",
    "claim",
    "compare",
    "constraints",
    "contract",
    "crash_site",
    "delegation",
    "distinct_inputs",
    "driven_touches",
    "engine",
    "extra_checks",
    "extremes",
    "gradients",
    "handed_back",
    "hints",
    "integrity",
    "log",
    "misconceptions",
    "model",
    "mutation_sites",
    "mutations",
    "naming",
    "nan_causes",
    "observations",
    "options",
    "patches",
    "prediction_leaks",
    "predictions",
    "preparing",
    "recorded",
    "recorded_exercises",
    "recorded_files",
    "recorded_values",
    "registry",
    "relation_basics",
    "relation_finders",
    "relations",
    "runner",
    "shape_observations",
    "time_limits",
    "touches",
    "traces",
    "tries",
    "weight_observations",
]  # its modules (importing the package imports none of them)
