"""The class-report service: a JupyterHub service that keeps every student's check-log records and shows the
class report live (docs/hub.md).

Modules, one job each:

- :mod:`class_report.records`: what a record may hold (the check log's schema v2, and v1), checked and trimmed;
- :mod:`class_report.store`: the records, bounded per student; a record is accepted once committed;
- :mod:`class_report.database`: the store's database, SQLite in WAL mode (a path) or PostgreSQL (a URL);
- :mod:`class_report.limits`: per-key token buckets (requests per second, with a burst);
- :mod:`class_report.report`: the page, rendered by the course's class report (``course_utils.grading.report``);
- :mod:`class_report.app`: the tornado application: who may send, who may read;
- ``python -m class_report``: run it, as JupyterHub does (``hub/jupyterhub_config.py``).
"""
