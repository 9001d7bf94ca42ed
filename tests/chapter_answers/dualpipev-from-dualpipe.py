"""Chapter 6's description of DualPipeV pasted as an answer: cell dualpipe-routes prints DualPipe's routes and
placement (rank r holds stage r of copy A and stage 2P-1-r of copy B), cell dualpipev says DualPipeV is DualPipe on
2p ranks folded in half with rank r holding stages r and 2p-1-r, and cell zbv-placement prints that placement.  So:
keep the first p ranks and give route B's stage 2P-1-r the V's number 2p-1-r; the chapter says nothing about the
micro-batch numbers, so they are kept."""

import re


def dualpipev_from_dualpipe(dualpipe):
    if not isinstance(dualpipe, list) or not dualpipe or len(dualpipe) % 2:
        raise ValueError("expected an even number of rank lines")
    P = len(dualpipe)
    p = P // 2

    def fold(token, rank):
        kind, mb, stage = re.match(r"([FBW])(\d+)(?:\.s(\d+))?$", token).groups()
        stage = int(stage) if stage else rank
        if stage >= P:
            stage = stage - (2 * P - 1) + (2 * p - 1)
        return f"{kind}{mb}.s{stage}"

    return [["&".join(fold(op, r) for op in tok.split("&")) for tok in row] for r, row in enumerate(dualpipe[:p])]
