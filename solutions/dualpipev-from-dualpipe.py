"""Exercise dualpipev-from-dualpipe (chapter 6): DualPipeV is DualPipe folded in half."""

import re


def dualpipev_from_dualpipe(dualpipe):
    """The DualPipeV plan (p ranks, m micro-batches) inside a DualPipe plan (2p ranks, 2m micro-batches), as tokens.

    Keeps DualPipe's first p ranks; route B's stage 2P-1-r on rank r (P = 2p) becomes the V's stage 2p-1-r and
    its micro-batches m..2m-1 become 0..m-1.  Raises ValueError unless the input has an even number of rank lines.
    """
    ### BEGIN SOLUTION
    if not isinstance(dualpipe, list) or not dualpipe or len(dualpipe) % 2:
        raise ValueError("expected a DualPipe plan with an even number of rank lines")
    P = len(dualpipe)
    p = P // 2
    op_re = re.compile(r"([FBW])(\d+)(?:\.s(\d+))?$")

    def parse(text, rank):
        got = op_re.match(text)
        if not got:
            raise ValueError(f"rank {rank}: {text!r} is not an op token")
        return got.group(1), int(got.group(2)), int(got.group(3)) if got.group(3) else rank

    half = 1 + max(parse(op, r)[1] for r, row in enumerate(dualpipe) for tok in row for op in tok.split("&"))
    half //= 2                               # route A carries micro-batches 0..m-1, route B m..2m-1

    def fold(text, rank):
        kind, mb, stage = parse(text, rank)
        if stage >= P:                       # route B's stage 2P-1-r on rank r is the V's stage 2p-1-r
            stage, mb = stage - (2 * P - 1) + (2 * p - 1), mb - half
        return f"{kind}{mb}.s{stage}"

    # Ranks p..P-1 mirror ranks 0..p-1 (route B enters there first): the first half already runs every stage
    # of one model copy, each once per micro-batch, so it is a complete schedule on its own.
    return [["&".join(fold(op, r) for op in tok.split("&")) for tok in row] for r, row in enumerate(dualpipe[:p])]
    ### END SOLUTION
