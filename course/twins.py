"""Texts written twice, in Chinese and in English, that must not drift apart.

A chapter's prose cell, a chapter's run-time sentence and an exercise statement each hold two *bodies*, one per
language, each opened by a marker line that carries a *stamp*::

    ~~ zh 3f2a9c1e
    流水线并行把模型按层切成 $p$ 段……
    ~~ en 77aa01bc
    Pipeline parallelism cuts a model by depth into $p$ stages...

The stamp is the short hash of that body as it was when an author last confirmed that the two bodies say the same
thing.  So a body whose hash no longer equals its stamp was edited since, and its twin may be stale: a fix that
landed in one language and not the other is caught whichever language was edited first.  After updating the twin,
the author re-stamps (``build.py --stamp`` for chapters, ``judge.py sync --stamp`` for exercises), which records
both current hashes.

Standard library only (the judge and the chapters' run time read it).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from .i18n import LANGS

MARKER = re.compile(r"^~~ (?P<lang>[a-z]+)(?: (?P<stamp>[0-9a-f]{8}))?\s*$")


def body_hash(body: str) -> str:
    """The stamp a body gets: 8 hex digits of the SHA-256 of its text without surrounding blank lines or spaces."""
    return hashlib.sha256(body.strip().encode("utf-8")).hexdigest()[:8]


@dataclass
class Twins:
    """The bodies of one text in every language, with the stamps they carry (None: never stamped)."""

    name: str                                   # e.g. "01_bubble: cell intro" -- used in every message
    bodies: dict[str, str] = field(default_factory=dict)
    stamps: dict[str, str | None] = field(default_factory=dict)

    def problems(self) -> list[str]:
        """What is wrong with these twins, one line each; empty when both languages are present and stamped."""
        missing = [lang for lang in LANGS if not self.bodies.get(lang, "").strip()]
        if missing:
            return [f"{self.name}: no {' or '.join(missing)} text"]
        unstamped = [lang for lang in LANGS if self.stamps.get(lang) is None]
        if unstamped:
            return [f"{self.name}: {' and '.join(unstamped)} text never stamped; once both languages say the same, "
                    "stamp them"]
        edited = [lang for lang in LANGS if body_hash(self.bodies[lang]) != self.stamps[lang]]
        if len(edited) == len(LANGS):
            return [f"{self.name}: both texts changed since they were last matched; check they say the same, then "
                    "stamp them"]
        return [f"{self.name}: the {lang} text changed since its {other} twin was last matched; update the {other} "
                "text, then stamp them" for lang in edited for other in LANGS if other != lang]

    def stamped(self) -> dict[str, str]:
        """The stamps that record the bodies as they are now."""
        return {lang: body_hash(self.bodies[lang]) for lang in LANGS}


def parse(lines: list[str], name: str) -> Twins:
    """Split ``lines`` (already stripped of any comment prefix) at their ``~~ LANG [STAMP]`` markers.

    Text before the first marker is refused, as are unknown languages and a language given twice."""
    twins, lang, body = Twins(name), None, []

    def close():
        if lang is not None:
            twins.bodies[lang] = "\n".join(body).strip("\n")

    for line in lines:
        hit = MARKER.match(line)
        if line.startswith("~~") and not hit:
            raise ValueError(f"{name}: bad marker line {line!r}; write '~~ zh' or '~~ en', optionally with the "
                             "8-digit stamp")
        if hit:
            close()
            lang, body = hit["lang"], []
            if lang not in LANGS:
                raise ValueError(f"{name}: unknown language {lang!r} in {line!r}; use {' or '.join(LANGS)}")
            if lang in twins.stamps:
                raise ValueError(f"{name}: the {lang} text is given twice")
            twins.stamps[lang] = hit["stamp"]
        elif lang is None:
            if line.strip():
                raise ValueError(f"{name}: text before the first '~~ zh' / '~~ en' marker: {line!r}")
        else:
            body.append(line)
    close()
    return twins


def restamp(lines: list[str], twins: Twins) -> list[str]:
    """``lines`` with every marker's stamp replaced by the hash of its body now."""
    stamps = twins.stamped()
    out = []
    for line in lines:
        hit = MARKER.match(line)
        out.append(f"~~ {hit['lang']} {stamps[hit['lang']]}" if hit else line)
    return out
