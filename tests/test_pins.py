"""pyproject.toml and environment.yml pin the same versions: the conda route installs what pip's route tests."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
# the browser edition's build tools live in an environment of their own (lite/build.py), not in the course's
NOT_IN_CONDA = {"lite"}


def pip_pins() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    lines = list(project["dependencies"])
    for extra, deps in project["optional-dependencies"].items():
        if extra not in NOT_IN_CONDA:
            lines += deps
    pins = {}
    for line in lines:
        req = Requirement(line)
        if req.name != project["name"]:   # course[dask,hub]: the project's own extras
            pins[req.name.lower()] = str(req.specifier)
    return pins


def conda_pins() -> dict[str, str]:
    """environment.yml's pins in pip's spelling: conda's ``name=4.6`` is pip's ``name==4.6.*``."""
    deps = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    pins = {}
    for dep in deps:
        if isinstance(dep, dict):
            for line in dep["pip"]:
                req = Requirement(line)
                pins[req.name.lower()] = str(req.specifier)
            continue
        name, op, version = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(>=|==|=)?\s*(\S*)", dep).groups()
        if name in ("python", "pip"):
            continue
        pins[name.lower()] = f">={version}" if op == ">=" else f"=={version}" if op else ""
    return pins


def same(pip: str, conda: str) -> bool:
    return pip == conda or (conda.startswith("==") and pip in (conda, conda + ".*"))


def test_every_package_is_pinned_alike_in_both_files():
    pip, conda = pip_pins(), conda_pins()
    assert sorted(pip) == sorted(conda), f"only in pyproject.toml: {sorted(set(pip) - set(conda))}; " \
                                         f"only in environment.yml: {sorted(set(conda) - set(pip))}"
    differ = {name: (pip[name], conda[name]) for name in pip if not same(pip[name], conda[name])}
    assert not differ, f"pinned differently (pyproject.toml, environment.yml): {differ}"


def test_the_comparison_sees_a_difference():
    assert same("==4.6.*", "==4.6") and same("==0.9.6", "==0.9.6") and same(">=1.26", ">=1.26")
    assert not same("==9.1.*", "==9.2") and not same(">=8", "==9.1")
