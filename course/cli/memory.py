"""`memory`: bytes per pipeline rank for a real model under a schedule, and a search for layouts that fit."""

from __future__ import annotations

import argparse
import re
from dataclasses import replace

from .args import dumps, finite_float, output_file, positive_int, write_output

SHAPE_FLAGS = ("layers", "hidden", "heads", "kv_heads", "ffn", "vocab")
DTYPES = {"bf16": 2, "fp16": 2, "fp32": 4}


def memory_size(text: str) -> int:
    """'80GB' / '80' (GB) / '80GiB' / '96e9B' -> bytes."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*(GB|GiB|MB|MiB|B)?\s*", text)
    if not m or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive memory size such as 80GB, 80GiB or 96e9B, got {text!r}")
    scale = {"GB": 10 ** 9, "GiB": 2 ** 30, "MB": 10 ** 6, "MiB": 2 ** 20, "B": 1, None: 10 ** 9}[m.group(2)]
    return int(float(m.group(1)) * scale)


def positive_float(text: str) -> float:
    val = finite_float(text)
    if val <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return val


def add_parser(sub):
    p = sub.add_parser("memory", help="bytes per pipeline rank (weights, grads, optimizer, activations); "
                       "--fit searches layouts that fit")
    shape = p.add_argument_group("model (a preset, or its shape; flags override a preset's fields)")
    shape.add_argument("--model", help="preset: gpt3-175b, llama3-8b, llama3-70b, llama3-405b")
    for name in SHAPE_FLAGS:
        shape.add_argument("--" + name.replace("_", "-"), type=positive_int, dest=name,
                           help={"kv_heads": "key/value heads (default: heads; fewer is GQA)",
                                 "ffn": "FFN size (default 4 x hidden)"}.get(name))
    shape.add_argument("--block", choices=("gpt", "llama"), help="gpt: LayerNorm, GeLU, dropout (Korthikanti); "
                       "llama: RMSNorm, SwiGLU, GQA, no dropout (default: llama when kv-heads < heads)")
    act = p.add_argument_group("activations")
    act.add_argument("--seq", type=positive_int, required=True, help="sequence length")
    act.add_argument("--mbs", type=positive_int, default=1, help="micro-batch size in sequences (default 1)")
    act.add_argument("--tp", type=positive_int, default=1, help="tensor-parallel size (default 1)")
    act.add_argument("--sp", action="store_true", help="sequence parallelism (needs --tp > 1)")
    act.add_argument("--recompute", choices=("none", "selective", "full"), default="none",
                     help="activation recomputation (default none)")
    act.add_argument("--flash-attention", action="store_true", help="FlashAttention: no s x s attention scores "
                     "kept, a per-row log-sum-exp instead (default: Korthikanti's eager attention)")
    act.add_argument("--dtype", choices=tuple(DTYPES), default="bf16", help="activation dtype (default bf16)")
    pipe = p.add_argument_group("pipeline and data parallelism")
    pipe.add_argument("--pp", type=positive_int, default=1, help="pipeline ranks (default 1)")
    pipe.add_argument("--schedule", default="1f1b", help="schedule name (default 1f1b; see `schedules`)")
    pipe.add_argument("-m", type=positive_int, help="micro-batches (default: --pp)")
    pipe.add_argument("-v", type=positive_int, help="chunks per rank, for schedules that take it")
    pipe.add_argument("--w-mem", type=finite_float, default=1.0, help="split backward: share of a micro-batch's "
                      "activations held from B until W (default 1)")
    pipe.add_argument("--dp", type=positive_int, default=1, help="data-parallel size (default 1)")
    pipe.add_argument("--zero", type=int, choices=(0, 1), default=0, help="1: shard optimizer states over --dp")
    fit = p.add_argument_group("fit")
    fit.add_argument("--gpu-mem", type=memory_size, help="GPU memory, e.g. 80GB: ranks above it are marked")
    fit.add_argument("--fit", action="store_true", help="search (tp, pp, dp, schedule, v, m, recompute) layouts "
                     "that fit --gpus GPUs of --gpu-mem for --global-batch sequences, best step time first")
    fit.add_argument("--gpus", type=positive_int, help="GPUs for --fit")
    fit.add_argument("--global-batch", type=positive_int, help="sequences per optimizer step for --fit")
    fit.add_argument("--tflops", type=positive_float, default=400.0,
                     help="sustained TFLOP/s per GPU for the step-time estimate (default 400)")
    fit.add_argument("--tp-bw", type=positive_float, metavar="GB/S",
                     help="bytes each GPU sends per second inside a node (GB/s): adds TP traffic to every F and B")
    fit.add_argument("--dp-bw", type=positive_float, metavar="GB/S",
                     help="bytes each GPU sends per second between nodes (GB/s): adds PP transfers and the DP "
                     "gradient all-reduce (after the flush) to the step")
    fit.add_argument("--top", type=positive_int, default=10, help="layouts --fit lists (default 10)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--trace", metavar="FILE", type=output_file, help="also write the schedule as Chrome "
                   "trace-event JSON with each rank's bytes over time as a counter (Perfetto, chrome://tracing)")
    p.set_defaults(run=run)


def model_from_args(args):
    from ..memory import Model, preset

    given = {k: getattr(args, k) for k in SHAPE_FLAGS if getattr(args, k) is not None}
    if args.model:
        model = preset(args.model)
        if given or args.block:
            model = replace(model, name=model.name + "*", **given, **({"block": args.block} if args.block else {}))
        return model
    missing = [f"--{k}" for k in ("layers", "hidden", "heads", "vocab") if k not in given]
    if missing:
        raise ValueError(f"give --model PRESET or the shape: missing {' '.join(missing)}")
    given.setdefault("kv_heads", given["heads"])
    given.setdefault("ffn", 4 * given["hidden"])
    block = args.block or ("llama" if given["kv_heads"] < given["heads"] else "gpt")
    return Model("custom", block=block, **given)


def config_from_args(args):
    from ..memory import ActivationConfig

    return ActivationConfig(args.seq, args.mbs, args.tp, args.sp, args.recompute, DTYPES[args.dtype],
                            args.flash_attention)


def _gb(x: float) -> str:
    return f"{x / 1e9:.2f}"


def run(args) -> int:
    from ..costs import Costs
    from ..memory import pipeline_memory
    from ..schedules import build

    if not 0 <= args.w_mem <= 1:
        raise ValueError(f"--w-mem must be in [0, 1], got {args.w_mem:g}")
    if args.zero and args.dp == 1 and not args.fit:
        raise ValueError("--zero 1 shards optimizer states over data-parallel ranks: give --dp > 1")
    model = model_from_args(args)
    if args.fit:
        return run_fit(args, model)
    cfg = config_from_args(args)
    plan = build(args.schedule, args.pp, args.m or args.pp, v=args.v)
    pm = pipeline_memory(plan, model, cfg, Costs(w_mem=args.w_mem), dp=args.dp, zero=args.zero)
    fits = [r.total <= args.gpu_mem for r in pm.ranks] if args.gpu_mem else None
    if args.trace:
        from ..trace import chrome_trace
        write_output(args.trace, dumps(chrome_trace(pm.timeline, pm.curves())).encode())
    if args.json:
        out = pm.to_json()
        out["params"] = model.params()
        if fits is not None:
            out["gpu_mem"] = args.gpu_mem
            for r, ok in zip(out["ranks"], fits):
                r["fits"] = ok
        print(dumps(out))
        return 0
    par = f"tp {cfg.tp}{' + SP' if cfg.sp else ''}, dp {args.dp}{' (ZeRO-1)' if args.zero else ''}"
    print(f"{model.name} ({model.params() / 1e9:.1f}B params, {model.block} block): seq {cfg.seq}, mbs {cfg.mbs}, "
          f"{par}, recompute {cfg.recompute}{' + flash attention' if cfg.flash else ''}; {plan.name} "
          f"p={plan.p} m={plan.m}"
          + (f" v={args.v}" if args.v else ""))
    print(f"activations per layer per micro-batch: {pm.activation_bytes_per_layer:,} bytes "
          f"({pm.activation_bytes_per_layer / 1e9:.3f} GB)")
    print(f"{'rank':>4} {'weights':>9} {'grads':>9} {'optimizer':>10} {'activations':>12} {'total':>9}  (GB)")
    for r in pm.ranks:
        mark = "" if fits is None else ("  fits" if fits[r.rank] else f"  DOES NOT FIT ({_gb(args.gpu_mem)} GB)")
        print(f"{r.rank:>4} {_gb(r.weights):>9} {_gb(r.grads):>9} {_gb(r.optimizer):>10} "
              f"{_gb(r.activations):>12} {_gb(r.total):>9}{mark}")
    return 0


# ---- --fit --------------------------------------------------------------------------------------------
def fit_rows(args, model) -> list[dict]:
    from ..memory import fit_layouts

    if not (args.gpus and args.gpu_mem and args.global_batch):
        raise ValueError("--fit needs --gpus N, --gpu-mem SIZE (e.g. 80GB) and --global-batch SEQUENCES")
    return fit_layouts(model, args.gpus, args.gpu_mem, args.global_batch, args.seq, mbs=args.mbs,
                       flops_per_s=args.tflops * 1e12, zero=args.zero, w_mem=args.w_mem,
                       dtype_bytes=DTYPES[args.dtype], tp_bw=_bytes_per_s(args.tp_bw), dp_bw=_bytes_per_s(args.dp_bw),
                       flash=args.flash_attention)


def _bytes_per_s(gb_per_s: float | None) -> float | None:
    return None if gb_per_s is None else gb_per_s * 1e9


def run_fit(args, model) -> int:
    rows = fit_rows(args, model)
    if args.json:
        print(dumps({"model": model.name, "gpus": args.gpus, "gpu_mem": args.gpu_mem,
                     "global_batch": args.global_batch, "seq": args.seq, "mbs": args.mbs,
                     "tflops": args.tflops, "zero": args.zero, "tp_bw_gb_s": args.tp_bw, "dp_bw_gb_s": args.dp_bw,
                     "layouts": len(rows), "fits": rows[:args.top]}))
        return 0
    print(f"{model.name} on {args.gpus} GPUs of {_gb(args.gpu_mem)} GB, global batch {args.global_batch} x "
          f"{args.seq} tokens, mbs {args.mbs}, {args.tflops:g} TFLOP/s per GPU"
          + (", ZeRO-1" if args.zero else "") + f": {len(rows)} layouts fit")
    if not rows:
        print("nothing fits: more GPUs, ZeRO-1 (--zero 1), a shorter --seq or a smaller --mbs")
        return 1
    print(f"{'tp':>3} {'pp':>3} {'dp':>3} {'schedule':<16} {'v':>2} {'m':>5} {'recompute':<10} "
          f"{'peak GB':>8} {'bubble':>7} {'step s':>8}")
    for r in rows[:args.top]:
        print(f"{r['tp']:>3} {r['pp']:>3} {r['dp']:>3} {r['schedule']:<16} {r['v'] or '':>2} {r['m']:>5} "
              f"{r['recompute']:<10} {_gb(r['peak_bytes']):>8} {r['bubble']:>7.1%} {r['step_s']:>8.3f}")
    comm = [f"{name} at {bw:g} GB/s" for name, bw in (("TP", args.tp_bw), ("PP and DP", args.dp_bw)) if bw]
    print("step time: the simulated pipeline makespan from FLOPs at --tflops"
          + (f", communication: {', '.join(comm)}" if comm else "")
          + ("" if args.tp_bw else "; TP traffic not modelled (--tp-bw)")
          + ("" if args.dp_bw else "; PP and DP traffic not modelled (--dp-bw)"))
    return 0
