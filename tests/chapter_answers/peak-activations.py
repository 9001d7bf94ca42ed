"""Chapter 2's printed rule as an answer to peak-activations.

Transcribes 02_simulator's cell `compiled` (activations "allocated when an F starts and released when that
micro-batch's backward ends") with the backward read as the B op, as the chapter's plans without W write it;
the chapter never says that a split backward holds them until W.
"""


def peak_activations(ranks):
    peaks = []
    for order in ranks:
        live = peak = 0
        for token in order:
            if token[0] == "F":
                live += 1
                peak = max(peak, live)
            elif token[0] == "B":
                live -= 1
        peaks.append(peak)
    return peaks
