"""Exercise peak-activations (chapter 2): how many micro-batches' activations each rank holds at its peak."""


def peak_activations(ranks):
    """ranks[r] = the tokens rank r runs in order ("F3", "B3", "W3").  One stage per rank.

    A micro-batch's activations are stored when its F starts and freed when its backward is done: at its B when
    the plan has no W op at all, at its W when the plan splits the backward into B and W.
    Returns the peak number of stored micro-batches on each rank.
    """
    ### BEGIN SOLUTION
    release = "W" if any(t[0] == "W" for order in ranks for t in order) else "B"
    peaks = []
    for order in ranks:
        live = peak = 0
        for token in order:
            if token[0] == "F":
                live += 1
                peak = max(peak, live)
            elif token[0] == release:
                live -= 1
        peaks.append(peak)
    return peaks
    ### END SOLUTION
