"""A port for a server that must be named before it listens (JupyterHub's proxy and services, torchrun's rendezvous).

The usual trick, bind port 0 and close, returns a port from the kernel's ephemeral range and frees it: until the
server binds it, the kernel may hand that very port to anyone's ``bind(port 0)`` or outgoing connection (a gloo or
TCPStore socket of a test running beside it), and the server then fails, or talks to a stranger.  The kernel never
picks a port below its ephemeral range by itself, so a port chosen there and found free stays free until another
process asks for that number explicitly.  Where a server can bind port 0 and report its port, let it
(``TCPStore(port=0)``, ``jupyter lab --ServerApp.port=0``); this is for the others.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

LOWEST = 10_000   # above the ports services are registered on


def ephemeral_range() -> tuple[int, int]:
    """The kernel's range for automatic ports (Linux's default where /proc does not say)."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` now, outside the ephemeral range where there is room below it."""
    low, _ = ephemeral_range()
    if low - LOWEST >= 1000:
        for port in random.sample(range(LOWEST, low), 200):
            with socket.socket() as s:
                try:
                    s.bind((host, port))
                except OSError:
                    continue
                return port
    with socket.socket() as s:   # no room below the range, or all taken: the kernel's choice
        s.bind((host, 0))
        return s.getsockname()[1]
