"""The plan IR: what every rank runs, in which order, and where the model's stages live.

A plan reads like the tables in pipeline papers::

    F0 F1 F2 F3 B0 B1 B2 B3          # rank 0 (one stage: no annotation)
    F0.s0 F0.s4 B0.s4 B0.s0          # a rank holding stages 0 and 4

Op kinds:

- ``F``  forward of one micro-batch through one stage;
- ``B``  backward.  In a plan that contains ``W`` ops, ``B`` is the input gradient only (dL/dx, what the
  previous stage waits for) and ``W`` the weight gradient (dL/dW, nobody waits for it).  In a plan without
  ``W`` ops, ``B`` is the full backward (input and weight gradients in one op).
- ``W``  weight gradient.
- ``F3&B1`` an overlapped pair (DualPipe's F&B chunk): one span on the rank that runs both ops.

Stages form routes: micro-batch ``i`` goes forward through ``routes[i]`` (by default every stage in order,
0..S-1) and its backward comes back the opposite way.  Two routes let DualPipe send micro-batches from both
ends of the pipeline.  The position of a stage along its route is the model chunk it computes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from numbers import Integral
from types import MappingProxyType
from typing import NamedTuple

KINDS = ("F", "B", "W")
_COMES_AFTER = {"B": "F", "W": "B"}    # on one stage and micro-batch: B after its F, W after its B


class PlanError(ValueError):
    """A plan that is malformed or cannot be a pipeline schedule; the message names the first violation."""


class Op(NamedTuple):
    """One op.  A NamedTuple rather than a dataclass: plans hold 10^5+ of them and tuples are cheap to make."""

    kind: str   # "F", "B" or "W"
    mb: int     # micro-batch index
    stage: int  # stage index (see Plan.placement)

    def token(self, annotate: bool = False) -> str:
        return f"{self.kind}{self.mb}.s{self.stage}" if annotate else f"{self.kind}{self.mb}"

    def __str__(self) -> str:
        return self.token(annotate=True)


class Overlap(NamedTuple):
    """Two ops run as one span (DualPipe's overlapped forward-and-backward chunk)."""

    first: Op
    second: Op

    @property
    def ops(self) -> tuple[Op, Op]:
        return (self.first, self.second)

    def token(self, annotate: bool = False) -> str:
        return f"{self.first.token(annotate)}&{self.second.token(annotate)}"

    def __str__(self) -> str:
        return self.token(annotate=True)


Step = Op | Overlap


def is_step(x) -> bool:
    """True for what a rank's list may hold: an Op, or an Overlap of two Ops."""
    return type(x) is Op or (type(x) is Overlap and type(x.first) is Op and type(x.second) is Op)


def ops_of(step: Step) -> tuple[Op, ...]:
    """The ops inside one step of a rank's list."""
    return step.ops if isinstance(step, Overlap) else (step,)


_TOKEN = re.compile(r"([FBWI])([0-9]+)(?:\.s([0-9]+))?\Z")


def parse_op(token: str, default_stage: int | None = None) -> Op:
    """``F3`` / ``B0.s5`` -> Op.  ``I`` (torch's name for the input gradient) reads as ``B``."""
    m = _TOKEN.match(token.strip())
    if not m:
        raise PlanError(f"bad op {token!r}: expected KIND MB[.sSTAGE] with KIND in F, B, W (e.g. F3, B0.s5)")
    kind, mb, stage = m.group(1), int(m.group(2)), m.group(3)
    if stage is None:
        if default_stage is None:
            raise PlanError(f"op {token!r} needs a stage annotation (e.g. {token}.s0): its rank holds several stages")
        stage = default_stage
    return Op("B" if kind == "I" else kind, mb, int(stage))


def parse_step(token: str, default_stage: int | None = None) -> Step:
    parts = token.split("&")
    if len(parts) == 1:
        return parse_op(token, default_stage)
    if len(parts) != 2:
        raise PlanError(f"bad overlapped op {token!r}: expected exactly two ops joined by '&' (e.g. F3&B1)")
    return Overlap(parse_op(parts[0], default_stage), parse_op(parts[1], default_stage))


@dataclass(frozen=True)
class Plan:
    """Per-rank ordered ops plus the placement of stages on ranks: an immutable value.

    ranks[r]      the steps rank r runs, in order
    placement[r]  the stages rank r holds (default: rank r holds stage r)
    num_microbatches  m
    routes        routes[i] = the stages micro-batch i passes forward (default: all stages in order)
    name          what built it (for titles and JSON)

    The constructor accepts lists and stores tuples.  Derived facts (``num_stages``, ``chunks``,
    ``split_backward``, ``rank_of_stage()``, ``chunk_of_stage()``) are computed once, on first use.
    """

    ranks: tuple[tuple[Step, ...], ...]
    num_microbatches: int
    placement: tuple[tuple[int, ...], ...] | None = None
    routes: tuple[tuple[int, ...], ...] | None = None
    name: str = "plan"

    def __post_init__(self):
        set_field = object.__setattr__           # frozen: fields are set once, here
        set_field(self, "ranks", tuple(map(tuple, self.ranks)))
        if self.placement is None:
            set_field(self, "placement", tuple((r,) for r in range(len(self.ranks))))
        else:
            set_field(self, "placement", tuple(map(tuple, self.placement)))
        if self.routes is None:
            set_field(self, "routes", (tuple(range(self.num_stages)),) * self.num_microbatches)
        else:
            set_field(self, "routes", tuple(map(tuple, self.routes)))

    # ---- derived facts (cached: the plan never changes) -----------------------------------------
    @property
    def p(self) -> int:
        return len(self.ranks)

    @property
    def m(self) -> int:
        return self.num_microbatches

    @cached_property
    def num_stages(self) -> int:
        return 1 + max((s for stages in self.placement for s in stages), default=-1)

    @cached_property
    def chunks(self) -> int:
        """How many pieces the model is cut into (the length of a route)."""
        return max(map(len, set(self.routes)), default=0)

    @cached_property
    def split_backward(self) -> bool:
        """True when backward is split into B (input gradient) and W (weight gradient): the plan has W ops."""
        return any(op.kind == "W" for steps in self.ranks for step in steps for op in ops_of(step))

    def rank_of_stage(self) -> Mapping[int, int]:
        """{stage: the rank that holds it}."""
        return MappingProxyType(self._rank_of_stage)

    def chunk_of_stage(self) -> Mapping[int, int]:
        """{stage: the model chunk it computes}: its position along the routes that use it."""
        return MappingProxyType(self._chunk_of_stage)

    @cached_property
    def _rank_of_stage(self) -> dict[int, int]:
        return {s: r for r, stages in enumerate(self.placement) for s in stages}

    @cached_property
    def _chunk_of_stage(self) -> dict[int, int]:
        return {s: k for route in set(self.routes) for k, s in enumerate(route)}

    def required_ops(self) -> list[Op]:
        """Every op the plan must contain exactly once."""
        kinds = ("F", "B", "W") if self.split_backward else ("F", "B")
        return [Op(k, i, s) for i, route in enumerate(self.routes) for s in route for k in kinds]

    @cached_property
    def _position(self) -> list[dict[int, int]]:
        """Per micro-batch: {stage: its position along the micro-batch's route} (one dict per distinct route)."""
        position = {route: {s: k for k, s in enumerate(route)} for route in set(self.routes)}
        return [position[route] for route in self.routes]

    def dependencies(self, op: Op) -> list[Op]:
        """The ops that must finish before ``op`` may start (data dependencies only)."""
        route = self.routes[op.mb]
        k = self._position[op.mb][op.stage]
        if op.kind == "F":
            return [Op("F", op.mb, route[k - 1])] if k > 0 else []
        if op.kind == "B":
            after = Op("B", op.mb, route[k + 1]) if k + 1 < len(route) else None
            return [Op("F", op.mb, op.stage)] + ([after] if after else [])
        return [Op("B", op.mb, op.stage)]

    # ---- string form -----------------------------------------------------------------------------
    def rank_tokens(self, r: int) -> list[str]:
        annotate = self.placement[r] != (r,)
        return [step.token(annotate) for step in self.ranks[r]]

    def format(self) -> str:
        """One line per rank; stage annotations only where a rank does not simply hold stage r."""
        return "\n".join(" ".join(self.rank_tokens(r)) for r in range(self.p))

    __str__ = format

    def to_json(self) -> dict:
        return {"name": self.name, "p": self.p, "m": self.m, "placement": [list(s) for s in self.placement],
                "ranks": [self.rank_tokens(r) for r in range(self.p)]}

    @classmethod
    def parse(cls, text: str, num_microbatches: int | None = None, placement: Sequence[Sequence[int]] | None = None,
              routes: Sequence[Sequence[int]] | None = None, name: str = "plan") -> Plan:
        """Parse one line per rank (blank lines and ``#`` comments ignored).

        Without ``placement``, rank r holds stage r plus every stage its annotated ops name.
        Without ``num_microbatches``, m is one more than the largest micro-batch index seen.
        """
        lines = [ln.split("#", 1)[0].split() for ln in text.splitlines()]
        lines = [ln for ln in lines if ln]
        if not lines:
            raise PlanError("empty plan: expected one line of ops per rank (e.g. 'F0 F1 B0 B1')")
        ranks = []
        for r, tokens in enumerate(lines):
            default = r if placement is None or list(placement[r]) == [r] else None
            try:
                ranks.append([parse_step(t, default) for t in tokens])
            except PlanError as e:
                raise PlanError(f"rank {r}: {e}") from None
        if placement is None:
            placement = [sorted({op.stage for st in steps for op in ops_of(st)} | {r}) for r, steps in enumerate(ranks)]
        if num_microbatches is None:
            num_microbatches = 1 + max((op.mb for steps in ranks for st in steps for op in ops_of(st)), default=-1)
        return cls(ranks, num_microbatches, placement, routes, name)

    # ---- validation ------------------------------------------------------------------------------
    def validate_structure(self) -> dict[int, int]:
        """Check placement and routes (not the ops); return {stage: rank}."""
        if self.p < 1:
            raise PlanError("a plan needs at least one rank")
        if self.m < 1:
            raise PlanError(f"a plan needs at least one micro-batch (got m={self.m})")
        if len(self.placement) != self.p:
            raise PlanError(f"placement lists {len(self.placement)} ranks but the plan has {self.p}")
        owner: dict[int, int] = {}
        for r, stages in enumerate(self.placement):
            for s in stages:
                if s < 0:
                    raise PlanError(f"rank {r} holds stage {s}: stages are numbered from 0")
                if s in owner:
                    raise PlanError(f"stage {s} is placed on ranks {owner[s]} and {r}: each stage lives on one rank")
                owner[s] = r
        if len(self.routes) != self.m:
            raise PlanError(f"routes lists {len(self.routes)} micro-batches but m={self.m}")
        first_user: dict[tuple, int] = {}        # m routes are usually a handful of distinct ones
        for i, route in enumerate(self.routes):
            first_user.setdefault(route, i)
        chunk: dict[int, int] = {}
        for route, i in first_user.items():
            if not route:
                raise PlanError(f"micro-batch {i} has an empty route")
            for k, s in enumerate(route):
                if s not in owner:
                    raise PlanError(f"micro-batch {i}'s route names stage {s}, which no rank holds")
                if chunk.setdefault(s, k) != k:
                    raise PlanError(f"stage {s} sits at position {chunk[s]} on one route and {k} on another")
        return owner

    def validate(self) -> Plan:
        """Raise PlanError naming the first violation; return self when the plan is well formed.

        A valid plan: placement holds each stage once and routes name known stages (validate_structure);
        every step is an Op or an Overlap of two Ops; every op sits on the rank that holds its stage and on its
        micro-batch's route; a rank never runs B before its own F or W before its own B; every required op
        appears exactly once.  Cross-rank ordering problems (cycles) are found by simulate() as deadlocks.
        """
        owner = self.validate_structure()
        m = self.m
        seen: set[Op] = set()

        def error(text: str) -> PlanError:      # names the step being checked
            return PlanError(f"rank {r} step {pos}: {text}")

        for r, steps in enumerate(self.ranks):
            for pos, step in enumerate(steps):
                if not is_step(step):
                    raise error(f"{step!r} is not an Op or an Overlap of two Ops")
                for op in ops_of(step):
                    kind, mb, s = op
                    if kind not in KINDS:
                        raise error(f"unknown op kind {kind!r} (allowed: F, B, W)")
                    if not (is_index(mb) and 0 <= mb < m):
                        raise error(f"{op} names micro-batch {mb!r}, allowed 0..{m - 1}")
                    if not (is_index(s) and s in owner):
                        raise error(f"{op} names unknown stage {s} (known: {sorted(owner)})")
                    if owner[s] != r:
                        raise error(f"{op} runs on rank {r} but stage {s} is placed on rank {owner[s]}")
                    if s not in self.routes[mb]:
                        raise error(f"{op}: micro-batch {mb} does not pass stage {s}")
                    if op in seen:
                        first = next(i for i, st in enumerate(steps) if op in ops_of(st))
                        twice = f"at steps {first} and {pos}" if first != pos else f"twice in step {pos}"
                        raise PlanError(f"duplicate op {op}: rank {r} runs it {twice}")
                    own = _COMES_AFTER.get(kind)
                    if own and (own, mb, s) not in seen:     # a plain tuple equals the Op (and is cheaper to make)
                        raise error(f"{op} comes before its own {Op(own, mb, s)} on the same rank")
                    seen.add(op)
        # Every op seen is a required one (the checks above), so a shortfall means some are missing.
        kinds = 3 if self.split_backward else 2
        if len(seen) < kinds * sum(map(len, self.routes)):
            missing = next(op for op in self.required_ops() if op not in seen)
            raise PlanError(f"missing op {missing}: rank {owner[missing.stage]} never runs it")
        return self


def is_index(x) -> bool:
    """An integer (a numpy integer too); the exact-type test first because most are plain ints."""
    return type(x) is int or isinstance(x, Integral)
