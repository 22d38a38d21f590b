#!/usr/bin/env bash
# One call on the GPU machine: build VoxelEM with CUDA (sm_90), run the whole GoogleTest suite
# (the CUDA tests run there instead of skipping), then the benchmarks. Logs and JSON go to $OUT
# (the device tool brings them back); copy the JSON to testing/benchmarks/results/ and commit.
# Usage: bash scripts/device_check.sh <commit> [tests|bench|all] [bench args...]
set -uo pipefail
OUT=${OUT:-/tmp/vem-device-out}
mkdir -p "$OUT"
COMMIT=${1:-unknown}
WHAT=${2:-all}
shift 2 || true
BUILD=build-device
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1 || true
# (The device tool brings back at most 8 files: configure and build share one log.)
if ! { cmake -G Ninja -S . -B $BUILD -DVEM_BUILD_PLUGIN=OFF -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
       ninja -C $BUILD >> "$OUT/build.log" 2>&1; }; then
  tail -60 "$OUT/build.log"
  exit 1
fi
rc=0
if [ "$WHAT" = all ] || [ "$WHAT" = tests ]; then
  (cd $BUILD && OMP_NUM_THREADS=2 ctest --output-on-failure -j8 --timeout 900 --output-junit "$OUT/ctest_junit.xml" > "$OUT/ctest.log" 2>&1) || rc=1
  grep -E "relative L2|dB|rel|Passed|Failed|tests passed|SKIPPED" "$OUT/ctest.log" | tail -60
  tail -15 "$OUT/ctest.log"
fi
# The C++ plugin test (VTK filters with the CUDA backend vs CPU), built on the development
# machine and carried with its VTK libraries (scripts/collect_plugin_test.sh, carry .carry).
if [ -d .carry/plugin-test ] && { [ "$WHAT" = all ] || [ "$WHAT" = tests ]; }; then
  for t in .carry/plugin-test/test_*; do
    LD_LIBRARY_PATH=$PWD/.carry/plugin-test/lib:${LD_LIBRARY_PATH:-} OMP_NUM_THREADS=4 \
      "$t" >> "$OUT/plugin_test.log" 2>&1 || rc=1
  done
  grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]" "$OUT/plugin_test.log" | tail -40
fi
if [ "$WHAT" = all ] || [ "$WHAT" = bench ]; then
  ./$BUILD/testing/benchmarks/bench_fdtd "$OUT/bench_fdtd.json" "$COMMIT" "$@" > "$OUT/bench_fdtd.md" 2> "$OUT/bench_fdtd.log" || rc=1
  cat "$OUT/bench_fdtd.md"
fi
if [ "$WHAT" = fdfd-bench ]; then
  ./$BUILD/testing/benchmarks/bench_fdfd "$OUT/bench_fdfd.json" --commit "$COMMIT" "$@" > "$OUT/bench_fdfd.md" 2> "$OUT/bench_fdfd.log" || rc=1
  cat "$OUT/bench_fdfd.md"
fi
if [ "$WHAT" = profile ]; then
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  if [ -x "$NCU" ]; then
    "$NCU" --kernel-name regex:"update_|cpml" --launch-skip 0 --launch-count 16 \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
      ./$BUILD/testing/benchmarks/bench_fdtd profile "$@" > "$OUT/ncu.txt" 2>&1 || rc=1
    grep -E "update_|cpml|duration|dram__|lts__|warps_active" "$OUT/ncu.txt" | head -120
  else
    echo "ncu not found"
  fi
fi
exit $rc
