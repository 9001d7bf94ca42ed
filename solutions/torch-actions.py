"""Exercise torch-actions (chapter 8): course Plans to torch.distributed.pipelining actions (with or without the
send and receive actions) and back."""

from course.plan import Overlap, ops_of


def to_actions(plan, comms=False):
    """Per rank, the plan's steps as torch action strings, e.g. "0F2", "1I0", "(0F3;1I1)OVERLAP_F_B", in the
    order of ``plan.ranks[r]``, stage = position along the route.  With ``comms``, each rank's list also holds
    the send and receive actions torch's runtime needs to run it as written, without a lowering of its own.
    Raises ValueError for an invalid plan.
    """
    ### BEGIN SOLUTION
    plan.validate()
    position, rank_of = plan.chunk_of_stage(), plan.rank_of_stage()
    letter = {"F": "F", "B": "I" if plan.split_backward else "B", "W": "W"}

    def action(op):
        return f"{position[op.stage]}{letter[op.kind]}{op.mb}"

    def direction(op):
        return "F" if op.kind == "F" else "B"

    def receives(op, r):
        """What ``op`` on rank r must receive first: its inputs computed on other ranks."""
        return [f"{position[op.stage]}RECV_{direction(op)}{op.mb}"
                for dep in plan.dependencies(op) if dep.kind == op.kind and rank_of[dep.stage] != r]

    def sends(op, r):
        """What ``op`` on rank r must send: its output, when the next op along the route runs elsewhere."""
        if op.kind == "W":
            return []
        route = plan.routes[op.mb]
        k = route.index(op.stage) + (1 if op.kind == "F" else -1)
        if 0 <= k < len(route) and rank_of[route[k]] != r:
            return [f"{position[op.stage]}SEND_{direction(op)}{op.mb}"]
        return []

    out = []
    for r, steps in enumerate(plan.ranks):
        row = []
        for st in steps:
            ops = ops_of(st)
            if comms:
                row += [x for op in ops for x in receives(op, r)]
            row.append(f"({action(st.first)};{action(st.second)})OVERLAP_F_B" if isinstance(st, Overlap)
                       else action(st))
            if comms:
                row += [x for op in ops for x in sends(op, r)]
        out.append(row)
    return out
    ### END SOLUTION


def from_actions(actions):
    """Per rank, torch action strings as course plan tokens (what ``Plan.parse`` reads: F0, B1.s4, W1.s4, F3&B1).

    Communication actions and None are dropped; anything else that is not a compute action raises ValueError.
    """
    ### BEGIN SOLUTION
    import re

    simple = re.compile(r"(\d+)(F|I|W|B)(\d+)$")
    comm = re.compile(r"\d+(SEND_F|RECV_F|SEND_B|RECV_B|UNSHARD|RESHARD|REDUCE_GRAD)\d*$")
    pair = re.compile(r"\((\d+[FIWB]\d+);(\d+[FIWB]\d+)\)OVERLAP_F_B$")

    def leaves(text):
        got = pair.match(text)
        return [got.group(1), got.group(2)] if got else [text]

    texts = [[a for a in row if a is not None] for row in actions]
    split = any(simple.match(x) and simple.match(x).group(2) in "IW" for row in texts for a in row for x in leaves(a))

    def token(text, r):
        got = simple.match(text)
        if not got:
            raise ValueError(f"rank {r}: {text!r} is not a torch compute action")
        stage, kind, mb = int(got.group(1)), got.group(2), int(got.group(3))
        suffix = "" if stage == r else f".s{stage}"
        if kind == "F":
            return [f"F{mb}{suffix}"]
        if kind == "I":
            return [f"B{mb}{suffix}"]
        if kind == "W":
            return [f"W{mb}{suffix}"]
        return [f"B{mb}{suffix}", f"W{mb}{suffix}"] if split else [f"B{mb}{suffix}"]

    out = []
    for r, row in enumerate(texts):
        tokens = []
        for a in row:
            if not isinstance(a, str):
                raise ValueError(f"rank {r}: actions must be strings, got {a!r}")
            if comm.match(a):
                continue
            if pair.match(a):
                first, second = (token(x, r) for x in leaves(a))
                tokens.append(f"{first[0]}&{second[0]}")
                tokens += first[1:] + second[1:]       # a full backward's W runs right after the pair
            else:
                tokens += token(a, r)
        out.append(tokens)
    return out
    ### END SOLUTION
