"""JupyterHub for the course, on this machine: `make hub` (after instructor/hub/provision.py).

- Accounts are real system users (provision.py creates them): LocalProcessSpawner starts each user's JupyterLab as
  that user, so the exchange's file permissions are the operating system's.  The demo accounts log in with one
  shared password (SharedPasswordAuthenticator; printed when the hub starts).
- nbgrader's groups: ``formgrade-pipeline-parallelism`` (the instructor and the grader account) may use the course
  service, ``nbgrader-pipeline-parallelism`` (the students) takes the course.  nbgrader asks the hub about them
  (JupyterHubAuthPlugin, in jupyter/nbgrader_config.py).
- The course service ``pipeline-parallelism`` is a Jupyter server run by the grader account in its course
  directory: the formgrader at /services/pipeline-parallelism/formgrader.
- Each server gets the nbgrader extensions of its role (jupyter/<role>/: students have the Assignments list,
  instructors also the course list, the service the formgrader) and the hub's nbgrader settings (jupyter/).
- Everything listens on 127.0.0.1; the public port is PP_HUB_PORT (default 8000), the internal ones are free ports.

For a real deployment see the README ("The course on JupyterHub"): another authenticator, TLS, Zero to JupyterHub.
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import hub  # instructor/hub/hub.py
from jupyterhub.spawner import LocalProcessSpawner

c = get_config()  # noqa: F821 (provided by JupyterHub when it loads this file)


state = hub.state_directory()
c.JupyterHub.bind_url = f"http://127.0.0.1:{os.environ.get('PP_HUB_PORT', '8000')}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{hub.free_port()}"
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.ConfigurableHTTPProxy.command = [str(hub.PROXY)]          # pinned, from npm (provision.py)
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{hub.free_port()}"
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")

# Who may log in, and with what.
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = hub.password()
c.Authenticator.allowed_users = set(hub.INSTRUCTORS + hub.STUDENTS)
print(f"course hub: log in as {', '.join(hub.INSTRUCTORS + hub.STUDENTS)} with the password {hub.password()}",
      file=sys.stderr)

c.JupyterHub.load_groups = {
    hub.INSTRUCTOR_GROUP: {"users": hub.INSTRUCTORS + [hub.GRADER]},
    hub.STUDENT_GROUP: {"users": hub.STUDENTS},
}
c.JupyterHub.load_roles = [
    # instructors reach the course service and see it listed
    {"name": hub.INSTRUCTOR_GROUP, "groups": [hub.INSTRUCTOR_GROUP],
     "scopes": [f"access:services!service={hub.COURSE}", "list:services", f"read:services!service={hub.COURSE}"]},
    {"name": hub.STUDENT_GROUP, "groups": [hub.STUDENT_GROUP],
     "scopes": ["list:services", f"read:services!service={hub.COURSE}"]},
    # a server's own token: nbgrader in it asks the hub for its user's groups (the courses it may fetch from)
    {"name": "server", "scopes": ["users:activity!user", "access:servers!server", "read:users:name!user",
                                  "read:users:groups!user", "list:services", "read:services"]},
    # the course service: the formgrader reads the users and adds students to the course's group
    {"name": f"{hub.COURSE}-service", "services": [hub.COURSE],
     "scopes": ["list:users", "read:users:name", "read:users:groups", "read:groups", "list:groups",
                f"groups!group={hub.STUDENT_GROUP}"]},
]

python_bin = str(hub.PYTHON.parent)
environment = {
    "PATH": os.pathsep.join([python_bin, "/usr/local/bin", "/usr/bin", "/bin"]),
    "NBGRADER_EXCHANGE": str(hub.exchange_root()),
}


def role_config(role: str) -> str:
    """JUPYTER_CONFIG_PATH of a server: its role's extensions, then the settings every account shares."""
    return os.pathsep.join([str(hub.JUPYTER_CONFIG / role), str(hub.JUPYTER_CONFIG)])


def pre_spawn(spawner) -> None:
    groups = {g.name for g in spawner.user.groups}
    spawner.environment["JUPYTER_CONFIG_PATH"] = role_config("instructor" if hub.INSTRUCTOR_GROUP in groups
                                                             else "student")


class CourseSpawner(LocalProcessSpawner):
    """LocalProcessSpawner whose server also runs in its notebook_dir (nbgrader fetches into the server's working
    directory, which LocalProcessSpawner sets to the home directory)."""

    def make_preexec_fn(self, name):
        become_user = super().make_preexec_fn(name)
        workdir = self.format_string(self.notebook_dir) if self.notebook_dir else None

        def preexec():
            become_user()
            if workdir:
                os.chdir(workdir)
        return preexec


c.JupyterHub.spawner_class = CourseSpawner
c.Spawner.cmd = [str(hub.PYTHON.parent / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.environment = dict(environment)
c.Spawner.pre_spawn_hook = pre_spawn
c.Spawner.start_timeout = c.Spawner.http_timeout = 120   # a busy 2-core machine starts JupyterLab slowly
if os.environ.get("PP_HUB_HOMES"):
    c.Spawner.notebook_dir = str(Path(os.environ["PP_HUB_HOMES"]) / "{username}")

c.JupyterHub.services = [{
    "name": hub.COURSE,
    "url": f"http://127.0.0.1:{hub.free_port()}",
    "command": [str(hub.PYTHON.parent / "jupyterhub-singleuser")],
    "user": hub.GRADER,
    "cwd": str(hub.course_directory()),
    "environment": {**environment, "JUPYTER_CONFIG_PATH": role_config("grader"),
                    "JUPYTERHUB_DEFAULT_URL": "/formgrader"},
    "oauth_no_confirm": True,
}]
