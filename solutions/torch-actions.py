"""Exercise torch-actions (chapter 8): course Plans to torch.distributed.pipelining actions and back."""

from course.plan import Overlap


def to_actions(plan):
    """Per rank, the plan's steps as torch action strings, e.g. "0F2", "1I0", "(0F3;1I1)OVERLAP_F_B".

    F -> F; in a plan with W ops, B is the input gradient -> I and W -> W; without W ops, B is torch's full
    backward B.  Stage = position along the route.  Raises ValueError for an invalid plan.
    """
    ### BEGIN SOLUTION
    plan.validate()
    position = plan.chunk_of_stage()
    letter = {"F": "F", "B": "I" if plan.split_backward else "B", "W": "W"}

    def action(op):
        return f"{position[op.stage]}{letter[op.kind]}{op.mb}"

    return [[f"({action(st.first)};{action(st.second)})OVERLAP_F_B" if isinstance(st, Overlap) else action(st)
             for st in steps] for steps in plan.ranks]
    ### END SOLUTION


def from_actions(actions):
    """Per rank, torch action strings as course plan tokens (F0, B1.s4, W1.s4, F3&B1).

    torch's I -> B, W -> W; its full backward B -> B when no action is split, else B followed by W (a course plan
    splits every backward or none).  Communication actions and None are dropped; others raise ValueError.
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
