"""Chapter 8's mapping table as an answer to torch-actions: it must fail.

Transcribes chapter 8 §7, the table of markdown cell ``torch`` (F -> sF, B -> sB without W, B -> sI with W,
W -> sW, an overlapped pair -> one ``(sF;tB)OVERLAP_F_B``, the stage being the position along the route) in both
directions, as a learner would paste it.  The table covers computation only, so ``comms`` adds nothing, and its
inverse reads torch's I and B both as the course's B.
"""

import re

from course.plan import Overlap


def to_actions(plan, comms=False):
    plan.validate()
    position = plan.chunk_of_stage()
    letter = {"F": "F", "B": "I" if plan.split_backward else "B", "W": "W"}

    def action(op):
        return f"{position[op.stage]}{letter[op.kind]}{op.mb}"

    return [[f"({action(st.first)};{action(st.second)})OVERLAP_F_B" if isinstance(st, Overlap) else action(st)
             for st in steps] for steps in plan.ranks]


def from_actions(actions):
    simple = re.compile(r"(\d+)(F|I|W|B)(\d+)$")
    pair = re.compile(r"\((\d+[FIWB]\d+);(\d+[FIWB]\d+)\)OVERLAP_F_B$")
    back = {"F": "F", "I": "B", "B": "B", "W": "W"}

    def token(text, r):
        got = simple.match(text)
        if not got:
            raise ValueError(f"rank {r}: {text!r} is not a compute action")
        stage, kind, mb = int(got.group(1)), got.group(2), int(got.group(3))
        return f"{back[kind]}{mb}" + ("" if stage == r else f".s{stage}")

    out = []
    for r, row in enumerate(actions):
        tokens = []
        for a in row:
            if a is None or re.search(r"SEND|RECV|UNSHARD|RESHARD|REDUCE_GRAD", a):
                continue
            got = pair.match(a)
            tokens.append(f"{token(got.group(1), r)}&{token(got.group(2), r)}" if got else token(a, r))
        out.append(tokens)
    return out
