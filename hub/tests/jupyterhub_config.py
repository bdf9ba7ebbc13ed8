"""The integration test's hub (hub/tests/test_hub.py): the course's configuration, plus a dummy login and local servers.

Everything listens on 127.0.0.1, on ports the test chooses (``HUBTEST_*``); every file lives under ``HUBTEST_ROOT``.
Not for a real class: anyone may log in, and every user's server runs as the same system user.
"""

import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (defined by JupyterHub when it loads this file)
HUB_DIR = Path(__file__).resolve().parents[1]
ROOT = Path(os.environ["HUBTEST_ROOT"])
BIN = Path(os.environ.get("HUBTEST_SINGLEUSER_BIN") or Path(sys.executable).parent)  # the students' servers' Python

load_subconfig(str(HUB_DIR / "jupyterhub_config.py"))  # noqa: F821 (the course's part: the service, scopes)

c.JupyterHub.bind_url = f"http://127.0.0.1:{os.environ['HUBTEST_PORT']}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{os.environ['HUBTEST_HUB_PORT']}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ['HUBTEST_PROXY_API_PORT']}"
c.ConfigurableHTTPProxy.command = [str(HUB_DIR / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(ROOT / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{ROOT / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(ROOT / "jupyterhub_cookie_secret")
c.JupyterHub.check_running_intervals = 5

c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.Authenticator.admin_users = {"teacher"}

c.JupyterHub.spawner_class = "simple"  # jupyterhub.spawner.SimpleLocalProcessSpawner: homes under ROOT
c.SimpleLocalProcessSpawner.home_dir_template = str(ROOT / "home" / "{username}")
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
c.Spawner.args.extend(["--allow-root"] if os.getuid() == 0 else [])  # after the course's (kernel culling)
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
c.Spawner.environment.update({"PYTHONHASHSEED": "0", "MPLBACKEND": "module://matplotlib_inline.backend_inline"})
