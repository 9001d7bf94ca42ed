#!/usr/bin/env bash
# GPU check of the live runtime's --backend nccl --device cuda path.  Needs a CUDA build of torch and >= 1 GPU.
#
#   bash benchmarks/gpu_check.sh            # uses .venv/bin/python if present, else python3
#
# With ONE GPU: NCCL refuses two ranks on the same device, so the NCCL runs use p=1 (process-group init, GPU
# compute, gradient check, no point-to-point); p=2 and p=4 run with gloo between processes while every rank
# computes on the GPU (messages staged through host memory).  NCCL with p=2 runs only when >= 2 GPUs are visible.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}
fail=0
run() { echo "+ $*"; if ! "$PY" -m course "$@"; then echo "FAILED: $*"; fail=1; fi; }

"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'gpus', torch.cuda.device_count())"
ngpu=$("$PY" -c "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)")
if [ "$ngpu" -lt 1 ]; then echo "no CUDA GPU visible: nothing to check"; exit 1; fi

run live 1f1b -p 1 -m 4 --backend nccl --device cuda --json                       # NCCL init + GPU compute
run live 1f1b -p 1 -m 4 --backend nccl --device cuda --engine torch --json        # torch's stage on the GPU
run live 1f1b -p 2 -m 4 --backend gloo --device cuda --json                       # GPU compute, gloo messages
run live zb-h1 -p 4 -m 8 --backend gloo --device cuda --emulate --json            # split B/W on the GPU
run live 1f1b -p 2 -m 4 --backend gloo --device cuda --width 1024 --blocks 4 --json
if [ "$ngpu" -ge 2 ]; then
  run live 1f1b -p 2 -m 4 --backend nccl --device cuda --json
  run live interleaved -p 2 -m 4 -v 2 --backend nccl --device cuda --engine torch --json
else
  echo "skipped: NCCL with p=2 (needs one GPU per rank; $ngpu visible)"
fi
[ "$fail" = 0 ] && echo "gpu_check: all runs passed" || echo "gpu_check: some runs FAILED"
exit $fail
