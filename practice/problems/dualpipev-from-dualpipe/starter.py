"""Exercise dualpipev-from-dualpipe (chapter 6): DualPipeV is DualPipe folded in half."""

import re


def dualpipev_from_dualpipe(dualpipe):
    """The DualPipeV plan (p ranks, m micro-batches) inside a DualPipe plan (2p ranks, 2m micro-batches), as tokens.

    Keeps DualPipe's first p ranks; route B's stage 2P-1-r on rank r (P = 2p) becomes the V's stage 2p-1-r and
    its micro-batches m..2m-1 become 0..m-1.  Raises ValueError unless the input has an even number of rank lines.
    """
    raise NotImplementedError  # TODO: your code here
