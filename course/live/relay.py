"""Point-to-point messages between the ranks of a job, through a process the ranks' code does not run in: a relay
that forwards every tensor and keeps the record of what went where, and in which order.

- ``Relay(world_size)`` lives in the process that judges the job (the judge's checker; a notebook's kernel).  It
  listens on a Unix socket; a thread accepts one connection per rank (each from a process of its own: the kernel
  says which, ``SO_PEERCRED``), matches each send with the receive posted for the same (source, destination,
  tag), first come first served, and hands the data over.  A send completes only once it is matched, as gloo's
  does, so the naive blocking 1F1B deadlocks here too.  ``messages()`` is the record: for every message its
  ends, shape, dtype, bytes, and when (on the relay's own clock) it was posted, and matched.
- ``join(address, rank, world_size)`` runs in each worker: it makes ``RelayGroup`` the default process group, so
  ``torch.distributed.send``, ``recv``, ``isend``, ``irecv``, ``batch_isend_irecv`` go through the relay, and every
  collective is refused.

What the record proves: which tensors crossed between which ranks, in which order, and that each was posted only
after what its rank had received by then.  Not which computation in a rank produced them: the ranks run the
learner's code, and processes on one machine can share data by other ways than the relay.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import socket
import struct
import tempfile
import threading
from collections import defaultdict, deque
from dataclasses import dataclass, field
from itertools import count

from course.i18n import tr

BACKEND = "course-relay"
DTYPES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
          "uint8": 1, "bool": 1}   # bytes per element
MAX_HEADER = 4096           # bytes of one frame's JSON header
MAX_MESSAGE = 16 << 20      # bytes of one tensor
MAX_TOTAL = 128 << 20       # bytes held by the relay for one job
MAX_MESSAGES = 20000        # messages in one job
_FRAME = struct.Struct(">II")   # header length, payload length


class RelayError(RuntimeError):
    """A rank broke the relay's protocol or its bounds; the job's record says so."""


@dataclass
class Message:
    src: int
    dst: int
    tag: int
    shape: list[int]
    dtype: str
    data: bytes
    posted: int                 # the relay's clock when the send was posted
    matched: int | None = None  # ... when a receive took it (None: never received)


@dataclass
class Receive:
    rank: int
    src: int
    tag: int
    shape: list[int]
    dtype: str
    posted: int
    matched: int | None = None


@dataclass
class _Rank:
    sock: socket.socket
    buffer: bytes = b""
    rank: int | None = None
    pid: int | None = None


@dataclass
class Record:
    """What the relay saw: ``messages`` in the order they were posted, ``receives`` likewise, the processes of
    the ranks that connected, and a protocol violation (or "")."""

    messages: list[Message] = field(default_factory=list)
    receives: list[Receive] = field(default_factory=list)
    pids: dict[int, int] = field(default_factory=dict)
    violation: str = ""


class Relay:
    """The trusted end (see the module docstring): ``with Relay(p) as relay: ... relay.address ...``; then
    ``relay.record``."""

    _names = count()

    def __init__(self, world_size: int, directory: str | None = None):
        self.world_size = world_size
        self.own_dir = directory is None
        self.dir = directory or tempfile.mkdtemp(prefix="relay-")
        self.address = os.path.join(self.dir, f"relay-{os.getpid()}-{next(self._names)}.sock")
        self.record = Record()
        self.clock = count()
        self.held = self.accepted = 0
        self.waiting_sends: dict[tuple, deque] = defaultdict(deque)   # (src, dst, tag) -> [(Message, id)]
        self.waiting_recvs: dict[tuple, deque] = defaultdict(deque)   # (src, dst, tag) -> [(Receive, id)]
        self.ranks: dict[int, _Rank] = {}                              # rank -> connection
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(_short(self.address))
        os.chmod(self.address, 0o666)   # a graded process of another uid must be able to connect
        self.server.listen(world_size + 4)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.server, selectors.EVENT_READ)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, name="course-relay", daemon=True)
        self.thread.start()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> Record:
        self.stopping.set()
        self.thread.join(10)
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()
        for conn in self.ranks.values():
            conn.sock.close()
        try:
            os.unlink(self.address)
            if self.own_dir:
                os.rmdir(self.dir)
        except OSError:
            pass
        return self.record

    # -- the loop ------------------------------------------------------------------------------------------------
    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                self._step()
            except RelayError as e:
                self._violate(str(e))
            except Exception as e:  # noqa: BLE001  (whatever a rank sent, the record says what went wrong)
                self._violate(f"the relay failed: {type(e).__name__}: {str(e)[:200]}")

    def _step(self) -> None:
        for key, _ in self.selector.select(0.05):
            if key.fileobj is self.server:
                self._accept()
                continue
            conn: _Rank = key.data
            try:
                chunk = conn.sock.recv(1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                self._drop(conn)
                continue
            conn.buffer += chunk
            while self._frame(conn):
                pass

    def _accept(self) -> None:
        sock, _ = self.server.accept()
        self.accepted += 1
        if self.record.violation or self.accepted > 2 * self.world_size:
            sock.close()
            return
        pid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0]
        self.selector.register(sock, selectors.EVENT_READ, _Rank(sock, pid=pid))

    def _drop(self, conn: _Rank) -> None:
        self.selector.unregister(conn.sock)
        if conn.rank is None:
            conn.sock.close()

    def _frame(self, conn: _Rank) -> bool:
        """Handle one complete frame from ``conn`` if it has one."""
        if len(conn.buffer) < _FRAME.size:
            return False
        head, size = _FRAME.unpack_from(conn.buffer)
        if head > MAX_HEADER or size > MAX_MESSAGE:
            raise RelayError(f"a frame of {head} + {size} bytes is beyond the relay's bounds")
        if len(conn.buffer) < _FRAME.size + head + size:
            return False
        start = _FRAME.size
        try:
            header = json.loads(conn.buffer[start:start + head])
        except ValueError:
            raise RelayError("a frame that is not JSON") from None
        payload = conn.buffer[start + head:start + head + size]
        conn.buffer = conn.buffer[start + head + size:]
        if type(header) is not dict:
            raise RelayError("a frame that is not a JSON object")
        self._handle(conn, header, payload)
        return True

    def _handle(self, conn: _Rank, h: dict, payload: bytes) -> None:
        op = h.get("op")
        if op == "hello":
            rank = h.get("rank")
            if type(rank) is not int or not 0 <= rank < self.world_size or rank in self.ranks or conn.rank is not None:
                raise RelayError(f"a connection claimed rank {str(rank)[:20]}, which is taken or out of range")
            if conn.pid in self.record.pids.values():
                raise RelayError(f"ranks {[r for r, p in self.record.pids.items() if p == conn.pid]} and {rank} "
                                 "came from one process: each rank must be a process of its own")
            conn.rank, self.ranks[rank], self.record.pids[rank] = rank, conn, conn.pid
            return
        if conn.rank is None:
            raise RelayError("a message before its rank said hello")
        peer, tag, ident, shape, dtype = h.get("peer"), h.get("tag"), h.get("id"), h.get("shape"), h.get("dtype")
        if type(peer) is not int or not 0 <= peer < self.world_size or type(tag) is not int or type(ident) is not int \
                or type(shape) is not list or any(type(n) is not int or n < 0 for n in shape) or dtype not in DTYPES:
            raise RelayError(f"rank {conn.rank}: a malformed {str(op)[:20]} request")
        if len(self.record.messages) + len(self.record.receives) >= 2 * MAX_MESSAGES:
            raise RelayError(f"more than {MAX_MESSAGES} messages in one step")
        if op == "send":
            if len(payload) != math.prod(shape) * DTYPES[dtype]:
                raise RelayError(f"rank {conn.rank}: a send of shape {shape} {dtype} carrying {len(payload)} bytes")
            self.held += len(payload)
            if self.held > MAX_TOTAL:
                raise RelayError(f"more than {MAX_TOTAL >> 20} MiB in flight")
            message = Message(conn.rank, peer, tag, shape, dtype, payload, next(self.clock))
            self.record.messages.append(message)
            self.waiting_sends[conn.rank, peer, tag].append((message, ident))
            self._match((conn.rank, peer, tag))
        elif op == "recv":
            receive = Receive(conn.rank, peer, tag, shape, dtype, next(self.clock))
            self.record.receives.append(receive)
            self.waiting_recvs[peer, conn.rank, tag].append((receive, ident))
            self._match((peer, conn.rank, tag))
        else:
            raise RelayError(f"rank {conn.rank}: unknown request {str(op)[:20]!r}")

    def _match(self, key: tuple) -> None:
        sends, recvs = self.waiting_sends[key], self.waiting_recvs[key]
        while sends and recvs:
            (message, send_id), (receive, recv_id) = sends.popleft(), recvs.popleft()
            message.matched = receive.matched = next(self.clock)
            src, dst, _ = key
            if (message.shape, message.dtype) != (receive.shape, receive.dtype):
                error = (f"rank {src} sent a tensor of shape {message.shape} {message.dtype} to rank {dst}, which "
                         f"receives into shape {receive.shape} {receive.dtype}")
                self._send(dst, {"op": "error", "id": recv_id, "message": error})
                self._send(src, {"op": "error", "id": send_id, "message": error})
                continue
            self._send(dst, {"op": "data", "id": recv_id}, message.data)
            self._send(src, {"op": "sent", "id": send_id})

    def _send(self, rank: int, header: dict, payload: bytes = b"") -> None:
        data = json.dumps(header).encode()
        try:
            self.ranks[rank].sock.sendall(_FRAME.pack(len(data), len(payload)) + data + payload)
        except OSError:
            pass   # that rank is gone: the launcher reports it

    def _violate(self, why: str) -> None:
        if not self.record.violation:
            self.record.violation = why
        for conn in list(self.ranks.values()):
            try:
                conn.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _short(path: str) -> str:
    """A Unix socket's path is at most 107 bytes: a long one is used relative to the current directory."""
    return path if len(path.encode()) < 100 else os.path.relpath(path)


# ---- the workers' end ---------------------------------------------------------------------------------------------

def join(address: str, rank: int, world_size: int) -> None:
    """Make this worker's default process group the relay's."""
    import torch.distributed as dist

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(_short(address))
    group = _group_class()(sock, rank, world_size)
    group.post({"op": "hello", "rank": rank})
    if not hasattr(dist.Backend, BACKEND.upper()):
        dist.Backend.register_backend(BACKEND, _creator, devices=["cpu"])
    _Pending.group = group
    dist.init_process_group(backend=BACKEND, store=dist.HashStore(), rank=rank, world_size=world_size)


class _Pending:
    group = None   # the group join() made, handed to init_process_group's creator


def _creator(store, rank, world_size, timeout):
    group, _Pending.group = _Pending.group, None
    if group is None:
        raise RuntimeError(tr("本题只有一个进程组 (one process group only): 不能 new_group",
                              "this exercise has one process group only: no new_group"))
    return group


_CLASS: list = []


def _group_class():
    """RelayGroup, defined on first use (it subclasses torch's ProcessGroup: torch is imported only here)."""
    if _CLASS:
        return _CLASS[0]
    import select

    import torch
    import torch.distributed as dist
    from torch._C._distributed_c10d import Work

    from . import worker as status

    class RelayWork(Work):
        def __init__(self, group, ident: int, what: str):
            super().__init__()
            self.group, self.ident, self.what = group, ident, what

        def wait(self, timeout=None):
            self.group.wait(self.ident, self.what)
            return True

        def is_completed(self):
            return self.group.poll(self.ident)

        def is_success(self):
            return self.is_completed()

    class RelayGroup(dist.ProcessGroup):
        """torch.distributed's point-to-point calls through the relay; collectives refused."""

        def __init__(self, sock, rank: int, world_size: int):
            super().__init__(rank, world_size)
            self.sock, self.ids, self.buffer = sock, count(), b""
            self.done: dict[int, str] = {}            # id -> "" (completed) or an error message
            self.into: dict[int, torch.Tensor] = {}   # id of a receive -> the tensor it fills
            self.refused: list[str] = []

        def getBackendName(self):
            return BACKEND

        def post(self, header: dict, payload: bytes = b"") -> None:
            data = json.dumps(header).encode()
            self.sock.sendall(_FRAME.pack(len(data), len(payload)) + data + payload)

        def _request(self, op: str, tensors, peer: int, tag: int):
            if len(tensors) != 1:
                raise RuntimeError("one tensor per send or receive")
            t = tensors[0]
            ident = next(self.ids)
            header = {"op": op, "id": ident, "peer": int(peer), "tag": int(tag), "shape": list(t.shape),
                      "dtype": str(t.dtype).removeprefix("torch.")}
            if op == "send":
                flat = t.detach().cpu().contiguous().reshape(-1)
                self.post(header, flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
            else:
                self.into[ident] = t
                self.post(header)
            return RelayWork(self, ident, f"{op} {'to' if op == 'send' else 'from'} rank {peer}")

        def send(self, tensors, dst, tag=0):
            return self._request("send", tensors, dst, tag)

        def recv(self, tensors, src, tag=0):
            return self._request("recv", tensors, src, tag)

        def wait(self, ident: int, what: str) -> None:
            status.set_status(status.WAITING, f"blocked in {what}")
            while ident not in self.done:
                self._read(block=True)
            status.set_status(status.RUNNING, "running")
            if self.done[ident]:
                raise RuntimeError(self.done[ident])

        def poll(self, ident: int) -> bool:
            while ident not in self.done and select.select([self.sock], [], [], 0)[0]:
                self._read(block=False)
            return ident in self.done

        def _read(self, block: bool) -> None:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("the relay closed the connection (a protocol violation, or the job ended)")
            self.buffer += chunk
            while len(self.buffer) >= _FRAME.size:
                head, size = _FRAME.unpack_from(self.buffer)
                if len(self.buffer) < _FRAME.size + head + size:
                    break
                header = json.loads(self.buffer[_FRAME.size:_FRAME.size + head])
                payload = self.buffer[_FRAME.size + head:_FRAME.size + head + size]
                self.buffer = self.buffer[_FRAME.size + head + size:]
                ident = header["id"]
                if header["op"] == "data":
                    t = self.into.pop(ident)
                    with torch.no_grad():
                        if t.numel():
                            t.copy_(torch.frombuffer(bytearray(payload), dtype=torch.uint8).view(t.dtype)
                                    .reshape(t.shape))
                    self.done[ident] = ""
                else:
                    self.into.pop(ident, None)
                    self.done[ident] = header.get("message", "")

    def refuser(name: str):
        def refused(self, *args, **kwargs):
            self.refused.append(name)
            raise RuntimeError(tr(f"本题不能用集合通信 (collective {name} refused)：只用 send/recv/isend/irecv 和相邻"
                                  "的 rank 通信", f"no collectives in this exercise ({name} refused): talk to the "
                                  "neighbouring ranks with send/recv/isend/irecv only"))
        return refused

    for name in ("allgather", "allgather_coalesced", "allgather_into_tensor_coalesced", "_allgather_base",
                 "all_gather_single_coalesced", "allreduce", "allreduce_coalesced", "alltoall", "alltoall_base",
                 "all_to_all_single", "barrier", "monitored_barrier", "broadcast", "gather", "reduce",
                 "reduce_scatter", "_reduce_scatter_base", "reduce_scatter_tensor_coalesced",
                 "reduce_scatter_single_coalesced", "scatter", "recv_anysource"):
        setattr(RelayGroup, name, refuser(name))
    _CLASS.append(RelayGroup)
    return RelayGroup
