"""nbgrader's settings for every account of the course's JupyterHub: students, instructors and the course service.

The one file both deployments read: the local hub (instructor/hub/jupyterhub_config.py) puts this folder on each
server's JUPYTER_CONFIG_PATH; Zero to JupyterHub mounts this same file as /etc/jupyter/nbgrader_config.py
(instructor/hub/values.yaml, given to helm with --set-file).  What grading needs (time limits, the autograde steps)
is the course directory's own instructor/nbgrader_config.py.
"""

import os

from nbgrader.auth import JupyterHubAuthPlugin

c = get_config()  # noqa: F821 (provided by nbgrader when it loads this file)

c.CourseDirectory.course_id = "pipeline-parallelism"   # also the name of the hub's course service

# The exchange: one folder every account may write (a shared volume on Kubernetes).
c.Exchange.root = os.environ.get("NBGRADER_EXCHANGE", "/usr/local/share/nbgrader/exchange")
c.Exchange.path_includes_course = True

# Who takes which course comes from the hub's groups: nbgrader-<course> (students), formgrade-<course> (instructors).
c.Authenticator.plugin_class = JupyterHubAuthPlugin

# A submission is readable by its student and the course's graders only (nbgrader's own leaves it readable by
# everyone who can guess its name).
c.ExchangeFactory.submit = "course.exchange.PrivateSubmit"
