#!/usr/bin/env bash
# Import throughput: builds placemap-collect and bench-import, generates (once) a
# ~10M-event ftrace text from time-shifted copies of vm2-hackbench-g4 under bench/out/
# (plain and gzip), and prints side by side: read(+decompress) only, `placemap-collect
# import` events/s plain and gz, END TO END file -> stored recording plain and gz (the
# backend's upload path, bench/e2e_import.py), and `trace-cmd report` per event on a trace.dat.
# Usage: bench/import_bench.sh [EVENTS]   (default 10000000)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/bench/out"
mkdir -p "$out" "$root/collectors/bin"
cd "$root/collectors"
CGO_ENABLED=0 go build -o bin/placemap-collect ./cmd/placemap-collect
CGO_ENABLED=0 go build -o "$out/bench-import" ./cmd/bench-import
echo "== import benchmark ($(nproc) cores, $(date -u +%FT%TZ))"
"$out/bench-import" -shared "$root/../shared" -out "$out" -bin "$root/collectors/bin/placemap-collect" -events "${1:-10000000}" \
  -e2e "$root/backend/.venv/bin/python $root/bench/e2e_import.py --collector $root/collectors/bin/placemap-collect"
