#!/usr/bin/env bash
# GPU check of the live runtime's --backend nccl --device cuda path: the lowered plan over the Posted transport
# (receives posted at the op on NCCL, per-pair order from course.lower), every gradient checked.
#
#   bash benchmarks/gpu_check.sh            # uses .venv/bin/python if present, else python3; about a minute
#
# Exit 0: every run passed.  1: a run failed (its line says FAILED and why).  2: nothing was checked (no CUDA GPU).
# With ONE GPU: NCCL refuses two ranks on one device, so NCCL runs with p=1 (process-group init, GPU compute, the
# gradient check, no point-to-point) and p=2/p=4 run with gloo between processes while every rank computes on the
# GPU (messages staged through host memory).  NCCL point-to-point (p >= 2) needs >= 2 GPUs; the script says so.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}

ngpu=$("$PY" -c "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)" 2>/dev/null)
"$PY" -c "import torch; print('torch', torch.__version__, '| CUDA build:', torch.version.cuda, '| GPUs visible:',
torch.cuda.device_count() if torch.cuda.is_available() else 0)"
if [ "${ngpu:-0}" -lt 1 ]; then
  echo "gpu_check: no CUDA GPU visible here: the NCCL path was NOT checked (run this on a machine with a GPU)"
  exit 2
fi

fail=0
echo "+ python -m course live 1f1b -p 1 -m 4 --backend nccl --device cuda --json"     # the CLI end to end
"$PY" -m course live 1f1b -p 1 -m 4 --backend nccl --device cuda --json || { echo "FAILED: the CLI run"; fail=1; }

# The rest in one process: one warm worker zygote, so each job costs its run, not an import of torch.
NGPU=$ngpu "$PY" - <<'EOF' || fail=1
import os, sys
from course.live import run_plan
from course.schedules import build

ngpu = int(os.environ["NGPU"])
runs = [("1f1b", 1, 4, {}, dict(backend="nccl")), ("1f1b", 1, 4, {}, dict(backend="nccl", engine="torch")),
        ("1f1b", 2, 4, {}, dict(backend="gloo")), ("zb-h1", 4, 8, {}, dict(backend="gloo", emulate=True)),
        ("1f1b", 2, 4, {}, dict(backend="gloo", width=1024, blocks_per_stage=4))]
if ngpu >= 2:    # NCCL point-to-point: one GPU per rank
    runs += [("1f1b", 2, 8, {}, dict(backend="nccl")), ("zb-h1", 2, 8, {}, dict(backend="nccl", emulate=True)),
             ("zbv", 2, 8, {}, dict(backend="nccl")),          # a V: receives moved ahead for the per-pair order
             ("dualpipev", 2, 8, {}, dict(backend="nccl")),    # overlapped F&B pairs
             ("interleaved", 2, 4, {"v": 2}, dict(backend="nccl", engine="torch")),
             # 8 MB messages, above NCCL's 4 MB buffer: a send then needs its receive posted (a pair's sends
             # and receives share one stream), so an order that only works for small messages hangs here
             ("1f1b", 2, 8, {}, dict(backend="nccl", width=1024, microbatch_size=1024, blocks_per_stage=1))]
    if ngpu >= 4:
        runs += [("1f1b", 4, 8, {}, dict(backend="nccl")), ("dualpipe", 4, 8, {}, dict(backend="nccl"))]
else:
    print(f"gpu_check: NCCL point-to-point (p >= 2) NOT checked: it needs one GPU per rank, {ngpu} visible")
failed = 0
for name, p, m, kw, opts in runs:
    what = f"{name} p={p} m={m} {kw or ''} {opts}"
    try:
        res = run_plan(build(name, p, m, **kw), device="cuda", timeout=120, **opts)
        ok = res.grad_ok
        print(("ok    " if ok else "FAILED") + f" {what}: {res!r}")
    except Exception as e:   # noqa: BLE001  (report every run, then the verdict)
        ok = False
        print(f"FAILED {what}: {type(e).__name__}: {e}")
    failed += not ok
sys.exit(1 if failed else 0)
EOF
[ "$fail" = 0 ] && echo "gpu_check: all runs passed" || echo "gpu_check: some runs FAILED"
exit $fail
