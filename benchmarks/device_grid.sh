#!/usr/bin/env bash
# The grid benchmark (benchmarks/bench_grid.py) on a bare many-core machine, in one run of at
# most ~8 minutes: the grid at all cores, then the 50,000 x 1,000 point at 8, 4 and 2 threads
# (the speed-up curve; the all-core point is in the grid run, which does it first).
#
#   bash benchmarks/device_grid.sh              # from anywhere; writes into $OUT (else benchmarks/)
#   BUDGET=300 bash benchmarks/device_grid.sh   # total seconds (default 470)
#   GRID_POINTS=500x2,50000x2 SCALING_THREADS="2 8" SCALING_RESERVE=150 bash ...  # a chosen run
#
# No network is needed. The repository's .venv cannot travel (1.3 GB; its python is a link to
# /root/.pyenv/... of the machine that made it, and its compiled packages are for that Python),
# so the script runs calnotes from the source tree (PYTHONPATH=<repo>) on the machine's own
# python3, which needs numpy and scipy (the device image has them). PYTHON=... picks another.
# Every bench_grid run writes its JSON after each point, and a point stopped by the budget
# keeps the timings it had, so whatever is in $OUT when the time runs out is usable.
# Files (5): grid_results_<cores>cores.json, grid_results_<cores>cores_t{8,4,2}.json,
# device_grid.log. Copy the JSON files into benchmarks/: the Benchmarks page renders them.
set -u
cd "$(dirname "$0")/.." || exit 2
OUT=${OUT:-benchmarks}
BUDGET=${BUDGET:-470}
GRID_POINTS=${GRID_POINTS:-}              # a --points list instead of the whole grid (smoke tests)
SCALING_POINT=${SCALING_POINT:-50000x1000}
SCALING_THREADS=${SCALING_THREADS:-8 4 2}
SCALING_RESERVE=${SCALING_RESERVE:-200}   # seconds of BUDGET kept for the scaling runs
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  if .venv/bin/python -c "import numpy, scipy" 2>/dev/null; then PY=.venv/bin/python; else PY=python3; fi
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
mkdir -p "$OUT"
CORES=$(nproc)
start=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - start) )); }

{
  echo "device_grid: $(date -u +%FT%TZ), $(uname -m), $CORES cores, budget ${BUDGET} s, $($PY -V 2>&1) ($PY)"
  uptime
  $PY -c "import numpy, scipy, calnotes; print('numpy', numpy.__version__, 'scipy', scipy.__version__, 'calnotes', calnotes.__version__, 'from', calnotes.__file__)" \
    || { echo "device_grid: calnotes does not import with $PY (needs numpy and scipy)"; exit 2; }
  if [ -n "$GRID_POINTS" ]; then sel="--points $GRID_POINTS"; else sel="--large"; fi
  # The grid at all cores; what is left of the budget after it goes to the scaling runs,
  # which get at least SCALING_RESERVE seconds between them.
  $PY benchmarks/bench_grid.py $sel --threads "$CORES" --repeats 3 --slow 20 \
      --budget $(( $(left) - SCALING_RESERVE )) --out "$OUT/grid_results_${CORES}cores.json"
  runs=$(echo $SCALING_THREADS | wc -w)
  for t in $SCALING_THREADS; do
    b=$(( $(left) / runs )); runs=$(( runs - 1 ))
    if [ "$t" -ge "$CORES" ] || [ "$b" -lt 10 ]; then echo "device_grid: skip $t threads ($b s left)"; continue; fi
    echo "device_grid: $SCALING_POINT at $t threads, budget $b s"
    $PY benchmarks/bench_grid.py --points "$SCALING_POINT" --threads "$t" --repeats 3 --slow 20 \
        --budget "$b" --out "$OUT/grid_results_${CORES}cores_t${t}.json"
  done
  uptime
  echo "device_grid: done in $(( $(date +%s) - start )) s"
} 2>&1 | tee "$OUT/device_grid.log"
