"""Lower a plan once into what each rank does: compute a step, send a tensor, receive a tensor.

A plan lists compute steps only.  Between stages two kinds of tensor cross: the activation that F(i, s) passes to
the next stage of micro-batch i's route, and the input gradient that B(i, s) passes back to the stage before.
Which op consumes what is the plan's dependency rule (``Plan.dependencies``): a dependency on an op of *another*
stage is a ``Message`` (what the stage itself keeps, F's saved tensors for its B, B's graph for its W, is not).
Lowering turns each message between two ranks into a ``SEND`` right after its producer's step on the producer's
rank and a ``RECV`` before its consumer's step on the consumer's rank (right before, unless the order of the
sender's messages needs it earlier); a message between two stages of one rank stays on that rank.  This is what
torch's ``_add_send_recv`` does to its compute-only schedules.

    from course.lower import lower, format_actions
    print(format_actions(lower(build("1f1b", 2, 2))))
    # rank 0: F0 send(F0->r1) F1 send(F1->r1) recv(B0<-r1) B0 recv(B1<-r1) B1
    # rank 1: recv(F0<-r0) F0 B0 send(B0->r0) recv(F1<-r0) F1 B1 send(B1->r0)

Each SEND and RECV names the op of its own rank (the producer, the consumer) and the peer rank; the tag names the
message (its consumer), so a receiver can ask for exactly the message its op needs.

Two facts follow from the lowered plan without running anything:

- ``pair_order_mismatches``: for each pair of ranks, does the order in which one side sends equal the order in
  which the other receives?  Backends that match messages per peer in posting order (NCCL ignores tags) need it.
- ``blocking_deadlock``: with blocking sends (a send returns only once its receive has been posted: the textbook
  mistake), which ranks get stuck, and where?  1F1B's naive order deadlocks; ``exchanges`` regroups the same
  actions the way chapter 3's minimal worker (course/minipipe.py) does (naive, parity, batched) to show why the
  other two do not.

Standard library only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from .plan import Op, Plan, Step, ops_of

COMPUTE, SEND, RECV = "COMPUTE", "SEND", "RECV"
ORDERS = ("naive", "parity", "batched")


class Message(NamedTuple):
    """A tensor that one op hands to an op of another stage: F's activation forward, B's input gradient back."""

    producer: Op
    consumer: Op

    @property
    def what(self) -> str:
        return "activation" if self.producer.kind == "F" else "gradient"

    def __str__(self) -> str:
        return f"the {self.what} for {self.consumer}"


class Action(NamedTuple):
    """One thing a rank does.  COMPUTE runs ``step``; SEND and RECV move ``message`` to or from rank ``peer``."""

    kind: str                        # COMPUTE, SEND or RECV
    step: Step | None = None         # COMPUTE: the step this rank runs
    message: Message | None = None   # SEND, RECV: the tensor that crosses
    peer: int = -1                   # SEND: the rank it goes to; RECV: the rank it comes from
    tag: int = -1                    # names the message on the wire (``tag``)

    @property
    def op(self) -> Step:
        """The step or op of this rank the action belongs to: the step run, the producer sent, the consumer fed."""
        if self.kind == COMPUTE:
            return self.step
        return self.message.producer if self.kind == SEND else self.message.consumer

    def token(self, annotate: bool = False) -> str:
        """``F0.s1``, ``send(F0->r1)``, ``recv(B0<-r1)``: the op named as in the plan's own format."""
        name = self.op.token(annotate)
        if self.kind == COMPUTE:
            return name
        return f"send({name}->r{self.peer})" if self.kind == SEND else f"recv({name}<-r{self.peer})"

    def describe(self) -> str:
        """Where a rank waits in this action: the runtime's status line and ``blocking_deadlock``'s report."""
        if self.kind == COMPUTE:
            return f"running {self.step}"
        if self.kind == SEND:
            return f"{self.op}: blocked in send of {self.message} to rank {self.peer} (tag {self.tag})"
        return f"{self.op}: blocked in recv of {self.message} from rank {self.peer} (tag {self.tag})"

    def to_json(self) -> dict:
        out = {"kind": self.kind, "op": str(self.op)}
        if self.kind != COMPUTE:
            out.update(producer=str(self.message.producer), consumer=str(self.message.consumer), peer=self.peer,
                       tag=self.tag)
        return out


def messages(plan: Plan) -> list[Message]:
    """Every tensor that passes between two stages, in the order of the plan's ranks and steps (consumer side):
    the dependencies (``Plan.dependencies``) of each op on an op of another stage."""
    return [Message(dep, op) for steps in plan.ranks for step in steps for op in ops_of(step)
            for dep in plan.dependencies(op) if dep.stage != op.stage]


def tag(plan: Plan, message: Message) -> int:
    """The message's number on the wire: its consumer (micro-batch, stage, kind), since each op takes at most one
    tensor from another stage."""
    c = message.consumer
    return (c.mb * plan.num_stages + c.stage) * 2 + (c.kind == "B")


def lower(plan: Plan) -> list[list[Action]]:
    """Per rank: COMPUTE for each step in the plan's order, each SEND right after the step that produces it, each
    RECV right before the step that consumes it, or earlier where the peer sends it before one this rank needs
    sooner: between two ranks, receives are posted in the order the sender sends (``pair_order_mismatches`` is
    then empty).  Waiting for the earlier message costs nothing, as the sender sends it before the later one.
    Messages between two stages of one rank get no action.  ``plan`` must be valid (``Plan.validate``)."""
    rank_of = plan.rank_of_stage()
    step_of = {op: i for steps in plan.ranks for i, step in enumerate(steps) for op in ops_of(step)}
    out_of = defaultdict(list)                   # producer -> its messages to other ranks
    for msg in messages(plan):
        if rank_of[msg.producer.stage] != rank_of[msg.consumer.stage]:
            out_of[msg.producer].append(msg)
    sends = defaultdict(list)                    # (rank, step index) -> messages sent after that step
    pairs = defaultdict(list)                    # (sender, receiver) -> messages, in the sender's order
    for r, steps in enumerate(plan.ranks):
        for i, step in enumerate(steps):
            for msg in (msg for op in ops_of(step) for msg in out_of[op]):
                sends[r, i].append(msg)
                pairs[r, rank_of[msg.consumer.stage]].append(msg)
    recvs = defaultdict(list)                    # (rank, step index) -> messages received before that step
    for (_, b), msgs in sorted(pairs.items()):
        at, latest = [], len(plan.ranks[b])
        for msg in reversed(msgs):               # no later than any message a sends after it
            latest = min(latest, step_of[msg.consumer])
            at.append(latest)
        for msg, i in zip(msgs, reversed(at)):
            recvs[b, i].append(msg)
    lowered = []
    for r, steps in enumerate(plan.ranks):
        actions = []
        for i, step in enumerate(steps):
            actions += [Action(RECV, message=msg, peer=rank_of[msg.producer.stage], tag=tag(plan, msg))
                        for msg in recvs[r, i]]
            actions.append(Action(COMPUTE, step))
            actions += [Action(SEND, message=msg, peer=rank_of[msg.consumer.stage], tag=tag(plan, msg))
                        for msg in sends[r, i]]
        lowered.append(actions)
    return lowered


def format_actions(lowered: Sequence[Sequence[Action]], plan: Plan | None = None) -> str:
    """One line per rank; stage annotations where ``plan`` gives a rank more than its own stage (as Plan.format)."""
    def annotate(r: int) -> bool:
        return plan is not None and plan.placement[r] != (r,)

    return "\n".join(f"rank {r}: " + " ".join(a.token(annotate(r)) for a in actions)
                     for r, actions in enumerate(lowered))


def pair_order_mismatches(lowered: Sequence[Sequence[Action]]) -> list[str]:
    """For each pair of ranks (a, b): the messages a sends to b, in a's order, against those b receives from a, in
    b's order.  [] when every pair agrees; otherwise one line per pair that does not, naming the first difference."""
    sent: dict[tuple, list[Message]] = defaultdict(list)
    received: dict[tuple, list[Message]] = defaultdict(list)
    for r, actions in enumerate(lowered):
        for a in actions:
            if a.kind == SEND:
                sent[r, a.peer].append(a.message)
            elif a.kind == RECV:
                received[a.peer, r].append(a.message)
    problems = []
    for pair in sorted(set(sent) | set(received)):
        s, v = sent.get(pair, []), received.get(pair, [])
        if s != v:
            k = next((k for k, (x, y) in enumerate(zip(s, v)) if x != y), min(len(s), len(v)))
            one, other = (str(seq[k]) if k < len(seq) else "nothing" for seq in (s, v))
            problems.append(f"rank {pair[0]} -> rank {pair[1]}: message {k} sent is {one}, message {k} received "
                            f"is {other}")
    return problems


Group = Action | Sequence[Action]


def exchanges(lowered: Sequence[Sequence[Action]], order: str = "naive") -> list[list[tuple[Action, ...]]]:
    """The lowered actions as chapter 3's minimal worker issues them with blocking calls.

    Between two COMPUTEs, consecutive SENDs and RECVs with the same peer form one exchange with that neighbour.
    ``naive``: each call on its own, in the lowered order.  ``parity``: the same calls, but in each exchange odd
    ranks receive first (Megatron's non-batched path).  ``batched``: each exchange posted as one group
    (``batch_isend_irecv``) that completes when all its calls have.  Returns per rank a list of groups."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    out = []
    for r, actions in enumerate(lowered):
        groups: list[list[Action]] = []
        for a in actions:
            joins = groups and a.kind != COMPUTE and groups[-1][0].kind != COMPUTE and groups[-1][0].peer == a.peer
            if joins:
                groups[-1].append(a)
            else:
                groups.append([a])
        if order == "parity" and r % 2:
            groups = [sorted(g, key=lambda a: a.kind != RECV) for g in groups]   # stable: receives first
        if order == "batched":
            out.append([tuple(g) for g in groups])
        else:
            out.append([(a,) for g in groups for a in g])
    return out


def blocking_deadlock(ranks: Sequence[Sequence[Group]]) -> dict[int, Action] | None:
    """Run the ranks' actions with blocking point-to-point calls: a SEND waits until its RECV is posted, a RECV
    until its SEND is (a rendezvous, the strictest reading of a blocking send; matched by tag, as gloo does).

    ``ranks[r]`` lists actions, or groups of SEND/RECV actions posted together (``exchanges(..., "batched")``)
    that complete once all of them have.  Returns None when every rank gets to its end, otherwise
    {rank: the first action it is stuck in} for every unfinished rank: a deadlock."""
    groups = [[tuple(g) if not isinstance(g, Action) else (g,) for g in row] for row in ranks]
    pos = [0] * len(groups)
    pending = [set() for _ in groups]          # the calls of each rank's current group not yet matched

    def arrive(r: int) -> None:
        """Move rank r past finished groups: COMPUTE never waits."""
        while pos[r] < len(groups[r]):
            pending[r] = {a for a in groups[r][pos[r]] if a.kind != COMPUTE}
            if pending[r]:
                return
            pos[r] += 1

    for r in range(len(groups)):
        arrive(r)
    moved = True
    while moved:
        moved = False
        for r in range(len(groups)):
            for a in [a for a in pending[r] if a.kind == SEND]:
                match = Action(RECV, message=a.message, peer=r, tag=a.tag)
                if match in pending[a.peer]:
                    pending[r].discard(a)
                    pending[a.peer].discard(match)
                    for q in (r, a.peer):
                        if not pending[q]:
                            pos[q] += 1
                            arrive(q)
                    moved = True
    stuck = {r: next(a for a in groups[r][pos[r]] if a in pending[r]) for r in range(len(groups))
             if pos[r] < len(groups[r])}
    return stuck or None


__all__ = ["COMPUTE", "SEND", "RECV", "ORDERS", "Action", "Message", "messages", "tag", "lower", "format_actions",
           "pair_order_mismatches", "exchanges", "blocking_deadlock"]
