"""Lesson 04's content: notebooks/04_*.ipynb's exercises and predictions (``exercises.py``) and its experiments
(``experiments.py``).

Importing this package imports nothing: the registry (:mod:`course_utils.checking.registry`) loads
``exercises.py`` by the id's prefix, and :func:`course_utils.lessons.claims.all_claims` loads ``experiments.py``.
"""
