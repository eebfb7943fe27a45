#!/usr/bin/env bash
# Record the bundled kernels' benchmark results on a GPU machine, for assets/bench/.
#
#   benchmarks/record_bench.sh DEADLINE_S RUN [RUN ...] [-- KERNEL ...]
#
# Runs `python -m inspector bench KERNELS --out /tmp/bench/RUN` once per RUN name (two runs give
# the run-to-run stability figure), each under what is left of DEADLINE_S, and packs each run's
# JSON files into $OUT/RUN.tar (results come back from the device machine as a few files).
# Without KERNELS, every bundled kernel. Prints the stability table when there are two runs: every
# size that moves at least 1 MB, Triton, eager and compile. Clocks are read (nvidia-smi), never set:
# the lent machines are shared, and their rules forbid -lgc/-ac.
set -u
deadline=$1; shift
runs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do runs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
kernels=("$@")
[ ${#kernels[@]} -eq 0 ] && kernels=(all)
OUT=${OUT:-/tmp/bench-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
start=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.applications.graphics,temperature.gpu,power.draw,power.limit --format=csv,noheader
for run in "${runs[@]}"; do
  left=$(( deadline - ($(date +%s) - start) - 10 ))
  [ $left -lt 30 ] && { echo "no time left for $run"; break; }
  t0=$(date +%s)
  timeout -s KILL $left python3 -m inspector bench "${kernels[@]}" --out "/tmp/bench/$run/" > "$OUT/$run.log" 2>&1
  echo "$run: exit $? after $(( $(date +%s) - t0 )) s"
  tar cf "$OUT/$run.tar" -C /tmp/bench "$run"
  grep -E "^\[#+-*\] [0-9]+/[0-9]+" "$OUT/$run.log" | tail -1
  nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
done
if [ ${#runs[@]} -ge 2 ] && [ -d "/tmp/bench/${runs[0]}" ] && [ -d "/tmp/bench/${runs[1]}" ]; then
  python3 -m inspector.bench.compare "/tmp/bench/${runs[0]}" "/tmp/bench/${runs[1]}" --min-bytes 1e6 \
    --impl triton --impl eager --impl compile | tee "$OUT/stability.txt"
fi
