"""Bridge between course plans and torch.distributed.pipelining's schedule IR.

torch describes a schedule as ``pipeline_order``: for each rank, a list of ``_Action``s printed like ``2F0``
(stage 2, forward, micro-batch 0).  Compute kinds: ``F`` forward, ``I`` input gradient, ``W`` weight gradient,
``B`` *full* backward (I and W in one), ``(0F7;7B3)OVERLAP_F_B`` two ops run together; ``None`` marks an idle
slot.  ``pipeline_order_with_comms`` adds SEND_F/RECV_F/SEND_B/RECV_B, UNSHARD/RESHARD and REDUCE_GRAD: torch lowers a
compute-only order with ``_add_send_recv``, the pass ``course.lower.lower`` mirrors (``compare_lowering`` holds
the two together).

Our plan says ``B`` for the input gradient when the plan has W ops and for the full backward otherwise, so:

- torch -> plan: ``I`` -> B, ``W`` -> W, ``B`` -> B in a plan without W ops, and B followed by W in a plan that
  has them (torch's DualPipeV mixes full and split backwards); ``None`` and communication actions are dropped.
- plan -> torch: B -> ``I`` in a plan with W ops, ``B`` otherwise; stage numbers become positions along the
  route, torch's stage index.  DualPipe's two opposite routes have no torch form.

torch builds these orders from its pipeline-stage objects, but only reads a few attributes of them, so the
functions below pass small stand-ins: no process group, no model.  This module converts and compares only;
running a plan in torch's runtime is the live runtime's ``torch-runtime`` engine (course/live/torch_runtime.py).
It imports torch; the simulator and the CLI do not need it.
"""

from __future__ import annotations

import contextlib
import csv
import io
import tempfile
from pathlib import Path
from types import SimpleNamespace

from torch.distributed.pipelining import schedules as ts

from .costs import Costs
from .lower import COMPUTE, SEND, lower
from .plan import Op, Overlap, Plan, PlanError, Step, ops_of
from .schedules import build
from .sim import simulate
from .validation import check_counts

# torch schedule class -> (our schedule with the same idea, local stages per rank; None: the caller's v).
# ScheduleInterleavedZeroBubble with v=1 is ZB-H1 op for op; with v >= 2 it interleaves (no course counterpart).
TORCH_SCHEDULES = {
    "ScheduleGPipe": ("gpipe", 1),
    "Schedule1F1B": ("1f1b", 1),
    "ScheduleInterleaved1F1B": ("interleaved", None),
    "ScheduleInterleavedZeroBubble": ("zb-h1", None),
    "ScheduleZBVZeroBubble": ("zbv", 2),
    "ScheduleDualPipeV": ("dualpipev", 2),
}
# torch schedule classes without a course counterpart that torch_plan reads all the same (v local stages per rank):
# chapter 4 holds its own breadth-first order to ScheduleLoopedBFS.
TORCH_ONLY = ("ScheduleLoopedBFS",)
_COMPUTE = {"F", "I", "W", "B"}


def torch_schedule(cls_name: str, p: int, m: int, v: int = 2):
    """Build torch's schedule object (rank 0's view; every rank's order is in ``pipeline_order``).

    ``v``: local stages per rank for the interleaved classes (ZBV and DualPipeV always use 2)."""
    if cls_name not in TORCH_SCHEDULES and cls_name not in TORCH_ONLY:
        raise ValueError(f"unknown torch schedule {cls_name!r}; known: {', '.join([*TORCH_SCHEDULES, *TORCH_ONLY])}")
    check_counts(p=p, m=m, v=v)
    cls = getattr(ts, cls_name)
    local = (TORCH_SCHEDULES[cls_name][1] if cls_name in TORCH_SCHEDULES else None) or v
    n = p * local
    if issubclass(cls, ts.PipelineScheduleSingle):
        return cls(_stand_in(0, p, n), m)
    firsts = [0, n - 1] if cls_name in ("ScheduleZBVZeroBubble", "ScheduleDualPipeV") else [k * p for k in range(local)]
    return cls([_stand_in(s, p, n) for s in firsts], m)


def torch_order(cls_name: str, p: int, m: int, v: int = 2, comms: bool = False) -> dict[int, list]:
    """torch's ``pipeline_order`` (or ``pipeline_order_with_comms``) for this schedule."""
    sched = torch_schedule(cls_name, p, m, v)
    if comms:
        return getattr(sched, "pipeline_order_with_comms", None) or sched.pipeline_order
    return sched.pipeline_order


def torch_plan(cls_name: str, p: int, m: int, v: int = 2) -> Plan:
    """torch's schedule converted to a course Plan."""
    return from_torch(torch_order(cls_name, p, m, v), m, name=f"torch:{cls_name}")


def from_torch(order: dict[int, list] | list[list], m: int, name: str = "torch") -> Plan:
    """Convert a torch order (rank -> actions, as ``_Action``s or strings like ``2F0``) into a Plan."""
    rows = [order[r] for r in sorted(order)] if isinstance(order, dict) else list(order)
    rows = [[ts._Action.from_str(a) if isinstance(a, str) else a for a in row] for row in rows]
    compute = [[a for a in row if a is not None and _kind(a) in _COMPUTE | {"OVERLAP_F_B"}] for row in rows]
    split = any(_kind(leaf) in ("I", "W") for row in compute for a in row for leaf in _leaves(a))
    ranks: list[list[Step]] = []
    for r, row in enumerate(compute):
        steps: list[Step] = []
        for a in row:
            if _kind(a) == "OVERLAP_F_B":
                leaves = _leaves(a)
                if len(leaves) != 2:
                    raise PlanError(f"rank {r}: {a} overlaps {len(leaves)} actions; a plan overlaps exactly two")
                first, second = (_ops(x, split) for x in leaves)
                steps.append(Overlap(first[0], second[0]))
                steps += first[1:] + second[1:]      # the W of a full backward runs after the pair
            else:
                steps += _ops(a, split)
        ranks.append(steps)
    placement = [sorted({op.stage for st in steps for op in ops_of(st)}) for steps in ranks]
    return Plan(ranks, m, placement, name=name)


def to_actions(plan: Plan) -> list[list[str]]:
    """The plan as torch action strings, one list per rank (stage = position along the route)."""
    plan.validate()
    if any(route != plan.routes[0] for route in plan.routes):
        raise ValueError(f"{plan.name} sends micro-batches along {len({tuple(r) for r in plan.routes})} different "
                         "routes; torch's runtime runs every micro-batch through stages 0..S-1 (export dualpipev "
                         "instead of dualpipe)")
    position = plan.chunk_of_stage()
    split = plan.split_backward

    def action(op: Op) -> str:
        kind = "I" if op.kind == "B" and split else op.kind
        return f"{position[op.stage]}{kind}{op.mb}"

    def step_str(step: Step) -> str:
        if isinstance(step, Overlap):
            return f"({action(step.first)};{action(step.second)})OVERLAP_F_B"
        return action(step)

    return [[step_str(st) for st in steps] for steps in plan.ranks]


def to_csv(plan: Plan) -> str:
    """The plan in the CSV form of torch's ``_dump_csv`` / ``_load_csv``: one row of actions per rank."""
    buf = io.StringIO()
    csv.writer(buf).writerows(to_actions(plan))
    return buf.getvalue()


def to_actions_with_comms(plan: Plan, lowered=None) -> list[list[str]]:
    """``lower(plan)`` (or the given ``lowered`` actions of ``plan``) as torch action strings, one list per rank:
    compute actions as ``to_actions`` gives them, with ``0SEND_F0``, ``1RECV_F0``, ``1SEND_B0``, ``0RECV_B0`` where
    the lowering puts its sends and receives (the stage named is the rank's own: the producer of a send, the consumer
    of a receive)."""
    compute = map(iter, to_actions(plan))
    position = plan.chunk_of_stage()
    rows = []
    for actions, steps in zip(lower(plan) if lowered is None else lowered, compute):
        row = []
        for a in actions:
            if a.kind == COMPUTE:
                row.append(next(steps))
            else:
                kind = ("SEND_" if a.kind == SEND else "RECV_") + ("F" if a.message.producer.kind == "F" else "B")
                row.append(f"{position[a.op.stage]}{kind}{a.op.mb}")
        rows.append(row)
    return rows


def compare_lowering(plan: Plan, lowered=None) -> dict:
    """``lower(plan)`` (or the given ``lowered`` actions) next to torch's own lowering of the same plan
    (``_load_csv`` -> ``_add_send_recv``).

    ``ours`` and ``torch``: per rank, the sends and receives in each one's order; ``same``: per rank, whether the
    two hold the same sends and receives; ``accepted``: None when torch's dry run of our order
    (``_simulate_comms_compute``) reaches the end, else its error."""
    def comms(row):
        return [a for a in row if "SEND" in a or "RECV" in a]

    ours = to_actions_with_comms(plan, lowered)
    runtime = load_in_torch(plan)
    theirs = [comms(map(str, runtime.pipeline_order_with_comms[r])) for r in range(plan.p)]
    rank_of, route = plan.rank_of_stage(), plan.routes[0]
    # the dry run reads no overlapped pair: it gets the pair's two actions, one after the other
    dry = {r: [leaf for a in row for leaf in _leaves(ts._Action.from_str(a))] for r, row in enumerate(ours)}
    try:
        with contextlib.redirect_stdout(io.StringIO()):     # it prints its partial schedule when it stalls
            ts._simulate_comms_compute(dry, lambda k: rank_of[route[k]], plan.num_stages)
        accepted = None
    except ValueError as e:
        accepted = str(e)
    return {"ours": [comms(row) for row in ours], "torch": theirs,
            "same": [sorted(comms(a)) == sorted(b) for a, b in zip(ours, theirs)], "accepted": accepted}


def read_csv(path: str | Path, m: int, name: str | None = None) -> Plan:
    """A torch schedule CSV (compute actions; communication actions are skipped) as a Plan."""
    with open(path, newline="") as f:
        rows = [row for row in csv.reader(f)]
    return from_torch([[s for s in row if s.strip()] for row in rows], m, name=name or Path(path).stem)


def load_in_torch(plan: Plan):
    """Hand the plan to torch: ``_PipelineScheduleRuntime._load_csv`` validates it and lowers it to sends and
    receives (it raises when the order cannot be scheduled).  Returns the torch schedule object."""
    stages = plan.num_stages
    runtime = ts._PipelineScheduleRuntime([_stand_in(0, plan.p, stages)], plan.m)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "plan.csv"
        path.write_text(to_csv(plan))
        runtime._load_csv(str(path))
    return runtime


def compare(p: int, m: int, costs=None, v: int = 2) -> list[dict]:
    """Each torch schedule next to its course counterpart under the same costs: makespans, peak activations,
    whether the op orders are identical, and torch's validation error if our checks reject its order."""
    costs = costs or Costs()
    rows = []
    for cls_name, (ours, local) in TORCH_SCHEDULES.items():
        tv = 1 if ours == "zb-h1" else v
        row = {"torch": cls_name, "ours": ours, "v": local or tv}
        try:
            theirs = torch_plan(cls_name, p, m, tv)
            mine = build(ours, p, m, **({"v": tv} if ours == "interleaved" else {}))
            theirs.validate()
        except (ValueError, AssertionError) as e:   # torch's own argument checks, or our validation
            rows.append({**row, "error": str(e).splitlines()[0]})
            continue
        a, b = simulate(theirs, costs), simulate(mine, costs)
        rows.append({**row, "torch_makespan": a.makespan, "ours_makespan": b.makespan,
                     "torch_peak": max(a.peak_activations), "ours_peak": max(b.peak_activations),
                     "same_ops": theirs.format() == mine.format()})
    return rows


# ---- helpers -------------------------------------------------------------------------------------------
def _stand_in(stage_index: int, p: int, num_stages: int) -> SimpleNamespace:
    """What torch's schedule constructors read from a pipeline stage."""
    return SimpleNamespace(stage_index=stage_index, num_stages=num_stages, group_size=p, group_rank=0,
                           submod=None, is_first=stage_index == 0, is_last=stage_index == num_stages - 1)


def _kind(a) -> str:
    return a.computation_type.value


def _leaves(a) -> tuple:
    return tuple(a.sub_actions) if a.sub_actions else (a,)


def _ops(a, split: bool) -> list[Op]:
    kind, mb, stage = _kind(a), a.microbatch_index, a.stage_index
    if kind == "F":
        return [Op("F", mb, stage)]
    if kind == "I":
        return [Op("B", mb, stage)]
    if kind == "W":
        return [Op("W", mb, stage)]
    if kind == "B":
        return [Op("B", mb, stage), Op("W", mb, stage)] if split else [Op("B", mb, stage)]
    raise PlanError(f"torch action {a} is not a compute action")


__all__ = ["TORCH_SCHEDULES", "TORCH_ONLY", "compare", "torch_schedule", "torch_order", "torch_plan", "from_torch",
                                                                                                      "to_actions",
           "to_csv", "to_actions_with_comms", "compare_lowering", "read_csv", "load_in_torch"]
