"""The course's part of a JupyterHub configuration: the class-report service and what students' servers need.

Load it from a hub's own configuration, which keeps its authenticator, spawner and addresses:

- The Littlest JupyterHub: ``sudo cp hub/jupyterhub_config.py /opt/tljh/config/jupyterhub_config.d/course.py``,
  with ``COURSE_HUB_DIR`` below pointing at the course's ``hub/`` folder (docs/hub.md);
- any hub: ``load_subconfig("/srv/attention-course/hub/jupyterhub_config.py")`` in ``jupyterhub_config.py``;
- the integration test: ``hub/tests/jupyterhub_config.py`` loads it, then adds a dummy login and local servers.

What it sets (each value from an environment variable of the hub's process, with a default for one server):

- the service ``class-report`` (``python -m class_report`` in ``COURSE_HUB_DIR``), listening on loopback port
  ``CLASS_REPORT_PORT`` and reached through the hub's proxy at ``/services/class-report/``, with its SQLite file at
  ``CLASS_REPORT_DB_PATH``; the hub's admins and the group ``CLASS_REPORT_INSTRUCTOR_GROUP`` (created here, with
  the users listed in ``CLASS_REPORT_INSTRUCTORS``, comma-separated) see the whole class;
- every user may use the service (``access:services!service=class-report``), and so may their server's token,
  which is how a kernel's records name their student;
- students' servers get ``COURSE_REPORT_URL`` (where ``course_utils.hub_client`` sends records; by default the
  service's loopback address, right when the servers run on the hub's machine) and ``OMP_NUM_THREADS=1`` (one core
  per student's computation, as the course's outputs were made);
- students' servers shut down a kernel idle for 30 minutes with no tab open on it (``MappingKernelManager``'s
  culling: JupyterLab keeps a lesson's kernel running after its tab closes, 3.5 GiB with all nine); the hub's own
  idle culler (TLJH's ``services.cull``, Z2JH's ``cull``) stops a whole idle server later.

The hub's ``cleanup_servers`` is left as the hub has it: JupyterHub's default (True, so a hub restart stops every
student's server: their files stay, their kernels' state goes) or Z2JH's (False). docs/hub.md says when to change it.
"""

import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (defined by JupyterHub when it loads this file)

SERVICE = "class-report"
HUB_DIR = Path(os.environ.get("COURSE_HUB_DIR") or Path(__file__).resolve().parent)
PORT = int(os.environ.get("CLASS_REPORT_PORT", "10101"))
GROUP = os.environ.get("CLASS_REPORT_INSTRUCTOR_GROUP", "instructors")
INSTRUCTORS = [name.strip() for name in os.environ.get("CLASS_REPORT_INSTRUCTORS", "").split(",") if name.strip()]

c.JupyterHub.services.append(
    {
        "name": SERVICE,
        "url": f"http://127.0.0.1:{PORT}",
        "command": [os.environ.get("CLASS_REPORT_PYTHON", sys.executable), "-m", "class_report"],
        "cwd": str(HUB_DIR),
        "environment": {
            "PYTHONPATH": str(HUB_DIR.parent),  # course_utils (the report's renderer), from the same checkout
            "CLASS_REPORT_DB_PATH": os.environ.get("CLASS_REPORT_DB_PATH", str(HUB_DIR / "class_report.sqlite")),
            "CLASS_REPORT_INSTRUCTOR_GROUP": GROUP,
            **{key: value for key, value in os.environ.items() if key.startswith("CLASS_REPORT_")},
        },
        "oauth_no_confirm": True,  # the course's own service: no "authorize access?" page
        "display": True,  # listed in the hub's Services menu
    }
)

# Who may use the service: every user (through the browser's OAuth login and through their server's token).
ACCESS = f"access:services!service={SERVICE}"
c.JupyterHub.load_roles.append({"name": "user", "scopes": ["self", ACCESS]})
c.Spawner.server_token_scopes = ["users:activity!user", "access:servers!server", ACCESS]

c.JupyterHub.load_groups.update({GROUP: {"users": INSTRUCTORS}})

# the same settings as hub/values.yaml's kernel-culling file (hub/tests/test_values.py checks they agree)
KERNEL_CULLING = {"cull_idle_timeout": 1800, "cull_interval": 300, "cull_connected": False, "cull_busy": False}
c.Spawner.args.extend(f"--MappingKernelManager.{name}={value}" for name, value in KERNEL_CULLING.items())

c.Spawner.environment.update(
    {
        "COURSE_REPORT_URL": os.environ.get("COURSE_REPORT_URL", f"http://127.0.0.1:{PORT}/services/{SERVICE}/"),
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
)
