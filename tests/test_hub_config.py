"""instructor/hub/ without starting it: the local hub's configuration, the nbgrader settings every account shares, and
the Zero to JupyterHub values agree with each other (one course, one exchange, the same accounts and groups).
The running hub is tests/browser/test_hub_cycle.py."""

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
HUB = ROOT / "instructor" / "hub"
sys.path.insert(0, str(HUB))
import hub  # noqa: E402


def load(path: Path):
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


def test_the_nbgrader_settings_name_the_course_the_exchange_and_the_hub(monkeypatch, tmp_path):
    from nbgrader.auth import JupyterHubAuthPlugin

    monkeypatch.delenv("NBGRADER_EXCHANGE", raising=False)
    config = load(hub.JUPYTER_CONFIG / "nbgrader_config.py")
    assert config.CourseDirectory.course_id == hub.COURSE
    assert config.Exchange.root == hub.DEFAULT_EXCHANGE and config.Exchange.path_includes_course
    assert config.Authenticator.plugin_class is JupyterHubAuthPlugin
    module, name = config.ExchangeFactory.submit.rsplit(".", 1)
    assert getattr(__import__(module, fromlist=[name]), name).__name__ == "PrivateSubmit"
    monkeypatch.setenv("NBGRADER_EXCHANGE", str(tmp_path))
    assert load(hub.JUPYTER_CONFIG / "nbgrader_config.py").Exchange.root == str(tmp_path)


def test_the_local_hub_has_the_accounts_groups_roles_and_course_service(monkeypatch, tmp_path):
    monkeypatch.setenv("PP_HUB_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("PP_HUB_COURSE", str(tmp_path / "course"))
    config = load(HUB / "jupyterhub_config.py")
    assert config.Authenticator.allowed_users == set(hub.INSTRUCTORS + hub.STUDENTS)
    assert config.JupyterHub.load_groups == {hub.INSTRUCTOR_GROUP: {"users": hub.INSTRUCTORS + [hub.GRADER]},
                                             hub.STUDENT_GROUP: {"users": hub.STUDENTS}}
    roles = {r["name"]: r for r in config.JupyterHub.load_roles}
    assert f"access:services!service={hub.COURSE}" in roles[hub.INSTRUCTOR_GROUP]["scopes"]
    assert "read:users:groups!user" in roles["server"]["scopes"]   # what JupyterHubAuthPlugin asks in a server
    (service,) = config.JupyterHub.services
    assert (service["name"], service["user"], service["cwd"]) == (hub.COURSE, hub.GRADER, str(tmp_path / "course"))
    assert all(url.startswith("http://127.0.0.1:") for url in (config.JupyterHub.bind_url, service["url"],
                                                                config.JupyterHub.hub_bind_url))
    assert Path(config.Spawner.cmd[0]).is_file() and config.ConfigurableHTTPProxy.command == [str(hub.PROXY)]
    # the shared password is made once, private, and kept
    password = tmp_path / "state" / "demo-password"
    assert password.stat().st_mode & 0o777 == 0o600 and len(password.read_text()) >= 8
    assert config.SharedPasswordAuthenticator.user_password == password.read_text()


def test_each_role_gets_its_own_nbgrader_extensions():
    lab = {role: json.loads((hub.JUPYTER_CONFIG / role / "labconfig" / "page_config.json").read_text())
           ["disabledExtensions"] for role in ("student", "instructor", "grader")}
    assert "@jupyter/nbgrader:formgrader" in lab["student"] and "@jupyter/nbgrader:formgrader" in lab["instructor"]
    assert "@jupyter/nbgrader:assignment-list" not in lab["student"] | lab["instructor"]
    assert "@jupyter/nbgrader:formgrader" not in lab["grader"]


def test_the_kubernetes_values_use_the_same_settings_accounts_and_exchange():
    values = yaml.safe_load((HUB / "values.yaml").read_text())
    config = values["hub"]["config"]
    assert config["JupyterHub"]["load_groups"] == {hub.INSTRUCTOR_GROUP: {"users": hub.INSTRUCTORS + [hub.GRADER]},
                                                   hub.STUDENT_GROUP: {"users": hub.STUDENTS}}
    single = values["singleuser"]
    assert single["extraFiles"]["nbgrader-config"]["mountPath"] == "/etc/jupyter/nbgrader_config.py"
    assert single["extraEnv"]["NBGRADER_EXCHANGE"] == hub.DEFAULT_EXCHANGE
    assert [m["mountPath"] for m in single["storage"]["extraVolumeMounts"]] == [hub.DEFAULT_EXCHANGE]
    # the nbgrader settings file reaches the pods through helm's --set-file, as the README and the file say
    command = "--set-file singleuser.extraFiles.nbgrader-config.stringData=instructor/hub/jupyter/nbgrader_config.py"
    assert command in (HUB / "values.yaml").read_text()
    assert command in (ROOT / "README.md").read_text()


def test_the_pins_are_the_installed_versions():
    import tomllib

    import jupyterhub

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["optional-dependencies"]["hub"] == [f"jupyterhub=={jupyterhub.__version__}"]
    pinned = json.loads((HUB / "package.json").read_text())["dependencies"]["configurable-http-proxy"]
    locked = json.loads((HUB / "package-lock.json").read_text())["packages"]
    assert locked[""]["dependencies"]["configurable-http-proxy"] == pinned
    assert locked["node_modules/configurable-http-proxy"]["version"] == pinned
