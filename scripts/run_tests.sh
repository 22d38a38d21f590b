#!/usr/bin/env bash
# Builds VoxelEM and runs the whole test suite with ctest. Without a GPU the CUDA tests skip
# with a visible message (they run on the device machine: scripts/device_check.sh).
# Then, when VEM_SANITIZE_TESTS=1 or in CI (CI=true), the CPU unit tests again under ASan + UBSan
# (scripts/run_sanitized_tests.sh, its own build in build-asan: about 30 min on 2 cores, build included).
# VEM_SANITIZE_TESTS=0 skips that even in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
bash scripts/build.sh
t1=$(date +%s)
BUILD=${VEM_BUILD_DIR:-build}
# The number of cores, counted before OMP_NUM_THREADS is set: GNU nproc honours OMP_NUM_THREADS
# and OMP_THREAD_LIMIT, so after the export below a bare `nproc` says 1 and ctest (and the
# sanitized build and tests) would run one job at a time (which made CI miss its 90 minutes).
JOBS=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
export VEM_TEST_JOBS=${VEM_TEST_JOBS:-$JOBS}
# One OpenMP thread per test process, as many test processes as cores: no oversubscription.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
ROOT=$PWD
cd "$BUILD"
echo "run_tests: ctest -j ${VEM_TEST_JOBS} (OMP_NUM_THREADS=${OMP_NUM_THREADS} per test)"
ctest --output-on-failure -j "$VEM_TEST_JOBS" --timeout 1200
# Say plainly whether the CUDA tests ran or skipped (ctest only prints "Skipped").
if [ -x testing/test_fdtd_smoke ]; then
  ./testing/test_fdtd_smoke --gtest_filter='*cuda*' 2>&1 | grep -m1 -E "CUDA backend not tested|OK \]" |
    sed 's/^/run_tests: /' || true
fi
cd "$ROOT"
t2=$(date +%s)
echo "run_tests: build $((t1 - t0)) s, tests $((t2 - t1)) s"
if [ "${VEM_SANITIZE_TESTS:-}" = 1 ] || { [ "${CI:-}" = true ] && [ "${VEM_SANITIZE_TESTS:-}" != 0 ]; }; then
  bash scripts/run_sanitized_tests.sh
fi
