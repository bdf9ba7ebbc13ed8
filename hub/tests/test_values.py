"""hub/values.yaml, the Zero to JupyterHub chart's values for the course, checked without a cluster.

- every ``hub.config.<Class>.<trait>`` is a configurable trait of that class in JupyterHub 6.1.1 (this Python) and,
  where .venv-hub5 exists (``make hub-env``), in JupyterHub 5.5.0, the chart's hub: the chart's schema passes
  ``hub.config`` through unchecked, and JupyterHub ignores a trait set on the wrong class without a word;
- every other key is one of the chart's, from the list below, checked by hand against chart 4.4.0's
  ``jupyterhub/values.schema.yaml`` (and the file merged into that chart's defaults validated against that schema
  with jsonschema, Draft 7: no error; 2026-11-29);
- the kernels' report URL is the service in the hub pod on its own port, reachable under both network policies,
  so it does not depend on the proxy (plain HTTP, or the chart's autohttps, which answers plain HTTP with a redirect);
- the git image, the storage per student, kernel culling and the limits.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
import yaml
from conftest import HUB_DIR, REPO

VALUES = yaml.safe_load((HUB_DIR / "values.yaml").read_text(encoding="utf-8"))
HUB5_PYTHON = REPO / ".venv-hub5" / "bin" / "python"

# The keys hub/values.yaml uses, each found in Zero to JupyterHub chart 4.4.0's values.schema.yaml (free-form below
# the last part: hub.config.*, hub.services.*, extraEnv, extraFiles' data, loadRoles, lists of Kubernetes objects).
CHART = "4.4.0"
CHART_KEYS = {
    "singleuser.image.name",
    "singleuser.image.tag",
    "singleuser.defaultUrl",
    "singleuser.memory.guarantee",
    "singleuser.memory.limit",
    "singleuser.cpu.guarantee",
    "singleuser.cpu.limit",
    "singleuser.storage.capacity",
    "singleuser.extraEnv",
    "singleuser.networkPolicy.egress",
    "singleuser.extraFiles",
    "hub.db.type",
    "hub.config",
    "hub.loadRoles",
    "hub.services",
    "hub.service.extraPorts",
    "hub.initContainers",
    "hub.extraVolumes",
    "hub.extraVolumeMounts",
    "hub.networkPolicy.ingress",
    "cull.enabled",
    "cull.timeout",
}
# JupyterHub's classes that hub.config may name here, as c.<Class> names them in a jupyterhub_config.py
CLASSES = {
    "JupyterHub": "jupyterhub.app",
    "Authenticator": "jupyterhub.auth",
    "Spawner": "jupyterhub.spawner",
}


def keys(values: dict, prefix: str = "") -> set[str]:
    """Dotted paths of ``values``, stopping at the free-form keys of CHART_KEYS and at anything not a mapping."""
    found = set()
    for key, value in values.items():
        path = f"{prefix}{key}"
        if path in CHART_KEYS or not isinstance(value, dict):
            found.add(path)
        else:
            found |= keys(value, path + ".")
    return found


def misplaced_traits(config: dict, python: str | None = None) -> list[str]:
    """``Class.trait`` of every ``hub.config`` entry that is not a configurable trait of that class (``python``:
    another environment's JupyterHub, asked in a subprocess)."""
    script = (
        "import importlib, json, sys\n"
        "config, classes = json.loads(sys.argv[1]), json.loads(sys.argv[2])\n"
        "bad = []\n"
        "for name, traits in config.items():\n"
        "    if name not in classes:\n"
        "        bad.append(name + ' (not a class this test knows)')\n"
        "        continue\n"
        "    known = getattr(importlib.import_module(classes[name]), name).class_traits(config=True)\n"
        "    bad += [f'{name}.{trait}' for trait in traits if trait not in known]\n"
        "print(json.dumps(bad))\n"
    )
    command = [python or sys.executable, "-c", script, json.dumps(config), json.dumps(CLASSES)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_every_key_is_one_of_the_charts():
    assert keys(VALUES) <= CHART_KEYS, f"not checked against chart {CHART}'s schema: {keys(VALUES) - CHART_KEYS}"


@pytest.mark.parametrize("hub", ["6.1.1", "5.5.0"])
def test_every_hub_config_entry_is_a_trait_of_its_class(hub):
    python = None
    if hub == "5.5.0":
        if not HUB5_PYTHON.exists():
            pytest.skip(f"{HUB5_PYTHON} is missing: `make hub-env` installs JupyterHub 5.5.0 there")
        python = str(HUB5_PYTHON)
    assert misplaced_traits(VALUES["hub"]["config"], python) == []


def test_a_trait_on_the_wrong_class_is_caught():
    """The check itself: the mistake this file once had (load_groups is JupyterHub's, not Authenticator's)."""
    wrong = {"Authenticator": {"load_groups": {}, "admin_users": []}, "Spawnr": {"cmd": []}}
    assert misplaced_traits(wrong) == ["Authenticator.load_groups", "Spawnr (not a class this test knows)"]


def test_the_instructors_group_is_created_by_the_hub():
    assert "instructors" in VALUES["hub"]["config"]["JupyterHub"]["load_groups"]
    command = VALUES["hub"]["services"]["class-report"]["command"]
    assert "--instructor-group=instructors" in command


def _port_rules(rules: list[dict], selector: dict) -> set[int]:
    """The ports a list of NetworkPolicy rules opens to (or from) pods matching ``selector``."""
    ports = set()
    for rule in rules:
        peers = rule.get("to", rule.get("from", []))
        if any(peer.get("podSelector", {}).get("matchLabels") == selector for peer in peers):
            ports |= {port["port"] for port in rule.get("ports", [])}
    return ports


def test_kernels_send_records_to_the_hub_pod_whatever_the_proxy_does():
    """Not through proxy-public: with the chart's autohttps its port 80 redirects, and a redirected POST is lost."""
    report = urlparse(VALUES["singleuser"]["extraEnv"]["COURSE_REPORT_URL"])
    service = urlparse(VALUES["hub"]["services"]["class-report"]["url"])
    assert report.scheme == "http" and report.hostname == "hub" and report.path == "/services/class-report/"
    assert (report.hostname, report.port) == (service.hostname, service.port)  # where the proxy sends browsers too
    assert "proxy" not in report.hostname
    exposed = {p["port"]: p["targetPort"] for p in VALUES["hub"]["service"]["extraPorts"]}
    assert exposed.get(report.port) == report.port  # the hub's Kubernetes Service has the port
    command = VALUES["hub"]["services"]["class-report"]["command"]
    assert "--bind-ip=0.0.0.0" in command  # the service listens on the pod's address, not only on loopback
    # the chart's network policies: students' servers may send to it; the hub pod lets them (and the proxy) in
    assert report.port in _port_rules(VALUES["singleuser"]["networkPolicy"]["egress"], {"component": "hub"})
    ingress = VALUES["hub"]["networkPolicy"]["ingress"]
    assert report.port in _port_rules(ingress, {"component": "singleuser-server"})
    assert report.port in _port_rules(ingress, {"component": "proxy"})


def test_a_small_pinned_git_image_clones_the_course_as_a_non_root_user():
    (init,) = VALUES["hub"]["initContainers"]
    image, _, tag = init["image"].partition(":")
    assert image != VALUES["singleuser"]["image"]["name"] and "git" in image
    assert re.fullmatch(r"\d+\.\d+\.\d+", tag), f"pin the git image's version: {init['image']}"
    assert init["command"][:2] == ["git", "clone"]
    # the chart's hub pod runs with runAsNonRoot: an image whose user is root would not start
    assert init["securityContext"]["runAsUser"] > 0


def _bytes(size: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([KMGT]i)", size).groups()
    return int(number) * 1024 ** ("KMGT".index(unit[0]) + 1)


def test_storage_fits_the_course_and_is_far_below_the_charts_default(tmp_path):
    """The edition a student clones, many times over (outputs, updates), not the chart's 10Gi each."""
    sys.path.insert(0, str(REPO / "scripts"))
    from publish_student_edition import build_tree

    build_tree(tmp_path / "edition")
    edition = sum(f.stat().st_size for f in Path(tmp_path / "edition").rglob("*") if f.is_file())
    capacity = _bytes(VALUES["singleuser"]["storage"]["capacity"])
    assert 50 * edition <= capacity < _bytes("10Gi"), (edition, capacity)


def test_idle_kernels_are_culled_with_real_settings():
    from jupyter_server.services.kernels.kernelmanager import MappingKernelManager

    culling = VALUES["singleuser"]["extraFiles"]["kernel-culling"]
    assert culling["mountPath"].startswith("/etc/jupyter/jupyter_server_config.d/")
    assert culling["mountPath"].endswith(".json")
    settings = culling["data"]["MappingKernelManager"]
    assert set(settings) <= set(MappingKernelManager.class_traits(config=True))
    assert 0 < settings["cull_idle_timeout"] < VALUES["cull"]["timeout"]  # kernels go before the whole server


def test_the_hub_configuration_culls_kernels_as_the_chart_does():
    """hub/jupyterhub_config.py (TLJH, any hub) passes the chart's kernel-culling settings to students' servers."""
    import ast

    tree = ast.parse((HUB_DIR / "jupyterhub_config.py").read_text(encoding="utf-8"))
    (node,) = [
        n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "KERNEL_CULLING"
    ]
    assert (
        ast.literal_eval(node.value)
        == VALUES["singleuser"]["extraFiles"]["kernel-culling"]["data"]["MappingKernelManager"]
    )


def test_limits_are_stated():
    memory, cpu = VALUES["singleuser"]["memory"], VALUES["singleuser"]["cpu"]
    assert _bytes(memory["guarantee"] + "i") <= _bytes(memory["limit"] + "i")
    assert 0 < cpu["guarantee"] <= cpu["limit"]
    assert VALUES["cull"]["enabled"] is True


def test_students_get_the_courses_lab_settings_without_the_news_prompt():
    settings = VALUES["singleuser"]["extraFiles"]["lab-settings"]
    course = json.loads((REPO / "jupyter/lab/settings/overrides.d/attention-course.json").read_text(encoding="utf-8"))
    assert settings["data"] == course
    assert course["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    assert settings["mountPath"].endswith("/share/jupyter/lab/settings/overrides.d/attention-course.json")
