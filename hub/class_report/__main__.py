"""Run the class-report service: ``python -m class_report`` (JupyterHub starts it: hub/jupyterhub_config.py).

JupyterHub gives it ``JUPYTERHUB_SERVICE_URL`` (where to listen), ``JUPYTERHUB_SERVICE_PREFIX``, its API token and
OAuth client; the settings come from the options below or their ``CLASS_REPORT_*`` environment variables.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import secrets
import signal
import sys
from urllib.parse import urlparse

from tornado import httpserver

from .app import Settings, make_app
from .database import redacted


def _options(argv):
    parser = argparse.ArgumentParser(prog="python -m class_report", description=__doc__.split("\n\n")[0])
    defaults = Settings()
    for field in dataclasses.fields(Settings):
        env = "CLASS_REPORT_" + field.name.upper()
        default = os.environ.get(env, getattr(defaults, field.name))
        parser.add_argument(
            "--" + field.name.replace("_", "-"),
            type=type(getattr(defaults, field.name)),
            default=type(getattr(defaults, field.name))(default),
            help=f"(${env}; default {getattr(defaults, field.name)!r})",
        )
    parser.add_argument(
        "--bind-ip",
        default=os.environ.get("CLASS_REPORT_BIND_IP", ""),
        help="the address to listen on ($CLASS_REPORT_BIND_IP; default: the host of $JUPYTERHUB_SERVICE_URL)",
    )
    return parser.parse_args(argv)


async def _serve(app, url, prefix, settings, bind_ip: str) -> None:
    # the handlers refuse what is over their own limit with a message (records: max_body; submissions: max_submission)
    server = httpserver.HTTPServer(
        app, max_body_size=2 * max(settings.max_body, settings.max_submission), xheaders=True
    )
    server.listen(url.port or 80, bind_ip or url.hostname or "127.0.0.1")
    logging.info("listening on %s%s, database %s (WAL)", url.geturl().rstrip("/"), prefix, redacted(settings.db_path))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    server.stop()


def main(argv=None) -> int:
    args = _options(argv)
    settings = Settings(**{f.name: getattr(args, f.name) for f in dataclasses.fields(Settings)})
    logging.basicConfig(level=logging.INFO, format="[%(levelname)1.1s %(asctime)s class-report] %(message)s")
    url = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/class-report/")
    secret = os.environ.get("CLASS_REPORT_COOKIE_SECRET") or secrets.token_hex(32)
    app = make_app(settings, prefix, cookie_secret=secret.encode())
    asyncio.run(_serve(app, url, prefix, settings, args.bind_ip))
    app.class_report_state.store.close()
    logging.info("stopped; every accepted record is in %s", redacted(settings.db_path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
