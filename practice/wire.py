"""Plain data between the checker and the learner process: the only thing that crosses the boundary.

A value is encoded as JSON: ``None``, ``bool``, ``int``, ``str`` and finite ``float`` as themselves (JSON keeps a
float's exact value), lists as lists, and tagged objects for the rest::

    {"$float": "nan" | "inf" | "-inf"}     {"$tuple": [...]}     {"$dict": [[key, value], ...]}
    {"$tensor": [dtype, shape, base64]}   {"$dtype": "float64"}   {"$plan": {...}}   (a course Plan, plain form)
    {"$opaque": "TypeName"}               anything else: only the name of its type crosses

Types are matched exactly (a subclass of float or a ``torch.nn.Parameter`` is opaque), so the checker always
decodes real builtins, real tensors and real Plans, built by its own code.  Decoding refuses malformed input with
``WireError``.  Frames are an 8-byte length and the JSON text; every read and write has a deadline and a size cap,
and what the checker reads from the learner process is also bounded in the number of values it holds before it is
parsed (``receive(..., reply=True)``): a 16 MiB reply of empty lists would otherwise cost gigabytes to decode.
"""

from __future__ import annotations

import base64
import json
import math
import os
import select
import time

# Bound once at import: a submission that rebinds json.dumps or os.write in its own process does not garble its
# answers by accident (on purpose it can: then its own tests fail, nothing else).
_dumps, _loads, _write, _read, _select = json.dumps, json.loads, os.write, os.read, select.select
MAX_FRAME = 64 << 20    # bytes in one message from the checker (a Plan or tensors as arguments)
MAX_REPLY = 16 << 20    # bytes in one reply from the learner process (tensors travel as one base64 string each)
MAX_ITEMS = 1 << 20     # values in one reply, counted before parsing: what it may expand to stays ~100x below
MAX_DEPTH = 100         # nesting of lists/dicts/tuples
_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int8", "int16", "int32",
           "int64", "uint8", "bool")


class WireError(Exception):
    """A message that is malformed, too large or too deep."""


class WireTimeout(WireError):
    """The other side did not answer before the deadline."""


class WireClosed(WireError):
    """The other side closed the pipe (its process exited)."""


# ---- values -----------------------------------------------------------------------------------------------------

def encode(value, depth: int = 0, strict: bool = False):
    """``value`` as JSON-ready data; with ``strict`` (the checker's side) an object that would be opaque is an error."""
    if depth > MAX_DEPTH:
        raise WireError(f"value nested deeper than {MAX_DEPTH} levels")
    t = type(value)
    if value is None or t is bool or t is int or t is str:
        return value
    if t is float:
        return value if math.isfinite(value) else {"$float": "nan" if value != value else
                                                   "inf" if value > 0 else "-inf"}
    if t is list:
        return [encode(v, depth + 1, strict) for v in value]
    if t is tuple:
        return {"$tuple": [encode(v, depth + 1, strict) for v in value]}
    if t is dict:
        return {"$dict": [[encode(k, depth + 1, strict), encode(v, depth + 1, strict)] for k, v in dict.items(value)]}
    torch = _module("torch")
    if torch is not None and t is torch.Tensor:
        flat = value.detach().cpu().resolve_conj().resolve_neg().contiguous().reshape(-1)
        data = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
        return {"$tensor": [str(value.dtype).removeprefix("torch."), list(value.shape),
                            base64.b64encode(data).decode("ascii")]}
    if torch is not None and t is torch.dtype:
        return {"$dtype": str(value).removeprefix("torch.")}
    plan = _module("course.plan")
    if plan is not None and t is plan.Plan:
        return {"$plan": {"ranks": [[step.token(True) for step in steps] for steps in value.ranks],
                          "m": value.num_microbatches, "placement": [list(s) for s in value.placement],
                          "routes": [list(r) for r in value.routes], "name": value.name}}
    if strict:
        raise WireError(f"an object of type {_type_name(t)} cannot cross (plain data, tensors and Plans only)")
    return {"$opaque": _type_name(t)}


def decode(data, depth: int = 0, opaque=None):
    """The value ``data`` encodes; ``opaque(type_name)`` makes the stand-in of an object that could not cross."""
    if depth > MAX_DEPTH:
        raise WireError(f"value nested deeper than {MAX_DEPTH} levels")
    t = type(data)
    if data is None or t in (bool, int, str, float):
        return data
    if t is list:
        return [decode(v, depth + 1, opaque) for v in data]
    if t is not dict or len(data) != 1:
        raise WireError(f"malformed value of type {t.__name__}")
    (tag, body), = data.items()
    if tag == "$float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "$tuple" and type(body) is list:
        return tuple(decode(v, depth + 1, opaque) for v in body)
    if tag == "$dict" and type(body) is list:
        out = {}
        for item in body:
            if type(item) is not list or len(item) != 2:
                raise WireError("malformed dict item")
            key = decode(item[0], depth + 1, opaque)
            try:
                out[key] = decode(item[1], depth + 1, opaque)
            except TypeError:
                raise WireError("unhashable dict key") from None
        return out
    if tag == "$tensor":
        return _decode_tensor(body)
    if tag == "$dtype" and body in _DTYPES:
        return getattr(_require("torch"), body)
    if tag == "$plan" and type(body) is dict:
        return _decode_plan(body)
    if tag == "$opaque" and type(body) is str:
        return opaque(body[:200]) if opaque else Opaque(body[:200])
    raise WireError(f"unknown or malformed tag {str(tag)[:40]!r}")


class Opaque:
    """Default stand-in for an object that cannot cross (only its type's name did)."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


def _decode_tensor(body):
    torch = _require("torch")
    if type(body) is not list or len(body) != 3 or body[0] not in _DTYPES or type(body[1]) is not list \
            or any(type(n) is not int or n < 0 for n in body[1]) or type(body[2]) is not str:
        raise WireError("malformed tensor")
    dtype, shape = getattr(torch, body[0]), body[1]
    try:
        data = base64.b64decode(body[2], validate=True)
    except ValueError:
        raise WireError("malformed tensor data") from None
    numel = math.prod(shape)
    if numel * torch.empty((), dtype=dtype).element_size() != len(data):
        raise WireError(f"tensor of shape {shape} and dtype {body[0]} does not hold {len(data)} bytes")
    if numel == 0:
        return torch.empty(shape, dtype=dtype)
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).view(dtype).reshape(shape).clone()


def _decode_plan(body):
    plan = _require("course.plan")
    try:
        ranks = [[plan.parse_step(token) for token in steps] for steps in body["ranks"]]
        return plan.Plan(ranks=ranks, num_microbatches=body["m"], placement=[list(s) for s in body["placement"]],
                         routes=[list(r) for r in body["routes"]], name=str(body["name"]))
    except (KeyError, TypeError, ValueError) as e:
        raise WireError(f"malformed plan: {type(e).__name__}") from None


def _module(name: str):
    """An already imported module (never imports: encoding a value must not load torch)."""
    import sys
    return sys.modules.get(name)


def _require(name: str):
    import importlib
    return importlib.import_module(name)


def _type_name(t) -> str:
    """``t``'s name read through ``type``'s own descriptors (a learner's metaclass cannot answer instead)."""
    try:
        name, module = type.__dict__["__qualname__"].__get__(t), type.__dict__["__module__"].__get__(t)
    except Exception:  # noqa: BLE001
        return "?"
    if type(name) is not str:
        return "?"
    return name if type(module) is not str or module in ("builtins", "submission") else f"{module}.{name}"


# ---- frames -----------------------------------------------------------------------------------------------------

def dumps(message, reply: bool = False) -> bytes:
    text = _dumps(message, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")
    _check_size(text, reply)
    return len(text).to_bytes(8, "big") + text


def _check_size(text: bytes, reply: bool) -> None:
    limit = MAX_REPLY if reply else MAX_FRAME
    if len(text) > limit:
        raise WireError(f"message of {len(text)} bytes is larger than {limit}")
    if reply:
        items = text.count(b",") + text.count(b"[") + text.count(b"{")   # commas in strings count too: an upper bound
        if items > MAX_ITEMS:
            raise WireError(f"message of about {items} values holds more than {MAX_ITEMS}")


def send(fd: int, message, deadline: float | None = None, reply: bool = False) -> None:
    """Write one frame (a ``reply`` of the learner process within its bounds); with a deadline the write never
    blocks past it (the fd is made non-blocking)."""
    data = memoryview(dumps(message, reply))
    if deadline is None:
        while data:
            data = data[_write(fd, data):]
        return
    os.set_blocking(fd, False)
    while data:
        left = deadline - time.monotonic()
        if left <= 0:
            raise WireTimeout("write timed out")
        _, ready, _ = _select([], [fd], [], left)
        if ready:
            try:
                data = data[_write(fd, data[:1 << 16]):]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                raise WireClosed("the other side closed the pipe") from None


def receive(fd: int, deadline: float | None = None, reply: bool = False):
    """Read one frame (decoded JSON, not yet a value); a ``reply`` from the learner process within MAX_REPLY bytes
    and MAX_ITEMS values.  Raises WireClosed, WireTimeout or WireError."""
    limit = MAX_REPLY if reply else MAX_FRAME
    size = int.from_bytes(_read_exactly(fd, 8, deadline), "big")
    if size > limit:
        raise WireError(f"message of {size} bytes is larger than {limit}")
    text = _read_exactly(fd, size, deadline)
    _check_size(text, reply)
    try:
        return _loads(text)
    except (ValueError, RecursionError):
        raise WireError("a message that is not JSON") from None


def _read_exactly(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not _select([fd], [], [], left)[0]:
                raise WireTimeout("no answer before the deadline")
        chunk = _read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise WireClosed("the other side closed the pipe")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
