"""The course's two languages, and the one rule for which of them speaks now.

The course is written in Simplified Chinese (``zh``) and English (``en``) from one source.  Library messages a
learner reads (a prediction's verdict, a check's hint, the judge's score line) come in both and are picked here:

1. the language set with :func:`set_language` (a chapter notebook sets its edition's; the judge its ``--lang``);
2. else ``COURSE_LANG`` (``zh`` or ``en``);
3. else the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, the first one that names a language): Chinese when it
   starts with ``zh``, else English (``C``, ``C.UTF-8`` and ``POSIX`` name no language and are passed over);
4. else Chinese, the course's first language.

Standard library only: the judge's trusted checker imports this module.
"""

from __future__ import annotations

import os

LANGS = ("zh", "en")
LOCALE_VARS = ("LC_ALL", "LC_MESSAGES", "LANG")
NO_LANGUAGE = ("c", "posix")    # locales without a language (C.UTF-8 too): they choose none
DEFAULT = "zh"

_chosen: str | None = None


def check_language(lang: object, where: str = "language") -> str:
    """``lang`` when it is one of LANGS, else a one-line ValueError naming what is allowed."""
    if lang not in LANGS:
        raise ValueError(f"{where} {lang!r} is not one of the course's languages: use {' or '.join(LANGS)}")
    return lang


def language() -> str:
    """The language messages are shown in now (see the module docstring for the order)."""
    if _chosen is not None:
        return _chosen
    env = os.environ.get("COURSE_LANG", "").strip()
    if env:
        return check_language(env.lower(), "COURSE_LANG")
    for var in LOCALE_VARS:
        value = os.environ.get(var, "").strip().lower()
        if value and value.split(".")[0] not in NO_LANGUAGE:
            return "zh" if value.startswith("zh") else "en"
    return DEFAULT


def set_language(lang: str | None) -> None:
    """Make ``lang`` the language of this process (``None``: back to the environment's)."""
    global _chosen
    _chosen = None if lang is None else check_language(lang)


def tr(zh: str, en: str) -> str:
    """The message in the current language: ``tr("峰值是 {n} 份", "the peak is {n}")``."""
    return zh if language() == "zh" else en
