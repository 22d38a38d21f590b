#!/usr/bin/env bash
# One call on the GPU machine: build VoxelEM with CUDA (sm_90), run the whole GoogleTest suite
# (the CUDA tests run there instead of skipping), then the benchmarks. Logs and JSON go to $OUT
# (the device tool brings them back); copy the JSON to testing/benchmarks/results/ and commit.
# Usage: bash scripts/device_check.sh <commit> [tests|bench|all|fdtd-ext|fdfd-bench|fdtd2d|profile|sanitize|faults|scaling] [args...]
#   tests [ctest args]  the whole suite (or e.g. -R 'FdtdFdfdHead|FdtdSphereRcsFine'); the JUnit XML
#                       ctest_junit.xml carries each test's RecordProperty values (merged from
#                       GoogleTest's own XML files, which ctest's JUnit output leaves out)
#   bench [args]        bench_fdtd (throughput sweep) -> bench_fdtd.{json,md,log}
#   fdtd-ext [args]     bench_fdtd extensions at 512^3 (TF/SF, DFT monitors, SAR overhead; options
#                       in bench_fdtd.cpp, e.g. --n 256) -> bench_fdtd_ext.{json,md,log}
#   fdfd-bench [args]   bench_fdfd -> bench_fdfd.{json,md,log}
#   tests,fdfd-bench    several modes in one call (comma-separated; ctest then runs the whole
#                       suite, or the tests matching $VEM_CTEST_REGEX, and the args go to the bench)
#   sanitize [tests...] compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over the CUDA
#                       tests (gtest filter *cuda*:*Cuda*:*CUDA*) of every test program, or of the
#                       programs named; each run is cut at VEM_SANITIZE_TIMEOUT s (default 60) and
#                       recorded as clean / errors / timed out -> sanitize.{json,md,log};
#                       VEM_SANITIZE_TOOLS picks the tools (default all four); racecheck
#                       instruments the kernels with shared memory (VEM_RACECHECK_KERNELS);
#                       VEM_TEST_SMALL_GRIDS=1 (the default here) shrinks the heavy tests;
#                       VEM_SANITIZE_JOBS runs that many (tool, program) jobs at once;
#                       VEM_SANITIZE_DEADLINE (epoch s): no job runs past it ("not run (deadline)")
#   scaling             distributed FDTD weak (512^3 per GPU) and strong (1024^3) scaling on the
#                       machine's GPUs (issue 18) -> scaling_*.json, scaling.log
#                       (VEM_TARGETS=vem_fdtd_mpi builds only the driver)
#   faults              the GPU out-of-memory test and the carried plugin test's CUDA soak
#                       (VEM_PLUGIN_TEST_DIR) -> faults.log; `faults,sanitize` does both
# VEM_TARGETS="bench_fdtd test_x ..." builds only those targets (a quicker partial run).
set -uo pipefail
OUT=${OUT:-/tmp/vem-device-out}
mkdir -p "$OUT"
COMMIT=${1:-unknown}
WHAT=${2:-all}
shift 2 || true
BUILD=build-device
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1 || true
# Every GoogleTest process run by ctest goes through this launcher, which gives it its own XML
# output directory when VEM_GTEST_XML_DIR is set (ctest runs several processes of one executable
# at once; with one shared GTEST_OUTPUT directory they would pick the same file name and
# overwrite each other). CMake < 3.28 applies CMAKE_CROSSCOMPILING_EMULATOR to add_test commands,
# CMake >= 3.29 CMAKE_TEST_LAUNCHER.
mkdir -p $BUILD
cat > $BUILD/gtest_launcher.sh <<'SH'
#!/bin/sh
if [ -n "${VEM_GTEST_XML_DIR:-}" ]; then export GTEST_OUTPUT="xml:$VEM_GTEST_XML_DIR/$$/"; fi
exec "$@"
SH
chmod +x $BUILD/gtest_launcher.sh
# (The device tool brings back at most 8 files: configure and build share one log.)
if ! { cmake -G Ninja -S . -B $BUILD -DVEM_BUILD_PLUGIN=OFF -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_CROSSCOMPILING_EMULATOR="$PWD/$BUILD/gtest_launcher.sh" \
         -DCMAKE_TEST_LAUNCHER="$PWD/$BUILD/gtest_launcher.sh" > "$OUT/build.log" 2>&1 &&
       ninja -C $BUILD ${VEM_TARGETS:-} >> "$OUT/build.log" 2>&1; }; then
  tail -60 "$OUT/build.log"
  exit 1
fi
rc=0
want() { [ "$WHAT" = "$1" ] || [[ ",$WHAT," == *",$1,"* ]]; }
if [ "$WHAT" = all ] || want tests; then
  CTEST_ARGS=()
  if [ "$WHAT" = tests ]; then CTEST_ARGS=("$@"); fi
  if [ -n "${VEM_CTEST_REGEX:-}" ]; then CTEST_ARGS+=(-R "$VEM_CTEST_REGEX"); fi
  rm -rf "$BUILD/gtest-xml"
  (cd $BUILD && VEM_GTEST_XML_DIR="$PWD/gtest-xml" OMP_NUM_THREADS=2 ctest --output-on-failure -j8 --timeout 900 \
     --output-junit "$OUT/ctest_junit.xml" ${CTEST_ARGS[@]+"${CTEST_ARGS[@]}"} > "$OUT/ctest.log" 2>&1) || rc=1
  # ctest's JUnit XML has empty <properties>: copy in the RecordProperty values of every test case
  # from GoogleTest's per-process XML files (same "Suite.Test" names).
  python3 - "$BUILD/gtest-xml" "$OUT/ctest_junit.xml" <<'PY' || true
import glob, sys, xml.etree.ElementTree as ET
props = {}
for f in glob.glob(sys.argv[1] + "/*/*.xml"):
    try:
        root = ET.parse(f).getroot()
    except ET.ParseError:
        continue
    for suite in root.iter("testsuite"):
        for tc in suite.iter("testcase"):
            p = [(q.get("name"), q.get("value")) for q in tc.iter("property")]
            if p:
                props[suite.get("name") + "." + tc.get("name")] = p
                if tc.get("value_param"):  # ctest names unnamed parameters by value, not index
                    props[suite.get("name") + "." + tc.get("name").rsplit("/", 1)[0] + "/" + tc.get("value_param")] = p
tree = ET.parse(sys.argv[2])
n = 0
for tc in tree.getroot().iter("testcase"):
    p = props.get(tc.get("name"))
    if not p:
        continue
    el = tc.find("properties")
    if el is None:
        el = ET.SubElement(tc, "properties")
    for k, v in p:
        ET.SubElement(el, "property", name=k, value=v)
    n += 1
    print("properties " + tc.get("name") + ": " + ", ".join(k + "=" + v for k, v in p))
tree.write(sys.argv[2], encoding="UTF-8", xml_declaration=True)
print(f"ctest_junit.xml: RecordProperty values of {n} test cases merged")
PY
  grep -E "relative L2|dB|rel|Passed|Failed|tests passed|SKIPPED" "$OUT/ctest.log" | tail -60
  tail -15 "$OUT/ctest.log"
fi
# The C++ plugin test (VTK filters with the CUDA backend vs CPU), built on the development
# machine and carried with its VTK libraries (scripts/collect_plugin_test.sh, carry .carry).
if [ -d .carry/plugin-test ] && { [ "$WHAT" = all ] || want tests; }; then
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
if [ "$WHAT" = fdtd-ext ]; then
  ./$BUILD/testing/benchmarks/bench_fdtd extensions "$OUT/bench_fdtd_ext.json" --commit "$COMMIT" "$@" \
    > "$OUT/bench_fdtd_ext.md" 2> "$OUT/bench_fdtd_ext.log" || rc=1
  cat "$OUT/bench_fdtd_ext.md"
  tail -5 "$OUT/bench_fdtd_ext.log"
fi
if want scaling; then
  # Distributed FDTD on the machine's GPUs (issue 18): examples/mpi/vem_fdtd_mpi, one rank per GPU,
  # slabs along z. Weak: 512^3 cells per GPU (512 x 512 x 512 G); strong: 1024^3 (SCALING_STRONG_N).
  # G = 1, 2, 4, 8 up to the GPU count. Every run also steps the pieces alone (--benchmark: the
  # exchange's cost). VEM_FDTD_STEP=two_pass so that 1 and G GPUs step with the same kernels (a
  # subdomain piece steps in two passes; one GPU alone would take the one-pass step); the one-pass
  # 1-GPU row is measured too. -> scaling_*.json, scaling.log (summary lines).
  NG=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
  SN=${SCALING_STRONG_N:-1024}
  SSTEPS=${SCALING_STEPS:-100}
  MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none"
  EXE=./$BUILD/examples/mpi/vem_fdtd_mpi
  : > "$OUT/scaling.log"
  # Halo variants on G > 1 GPUs (issue 17): NCCL device to device or MPI via page-locked host
  # memory, with the exchange overlapping the interior update (the default) or between whole
  # updates (serial). SCALING_VARIANTS picks them (names below; the first also runs on 1 GPU).
  VARIANTS=${SCALING_VARIANTS:-"nccl_overlap mpi_overlap mpi_serial"}
  for g in 1 2 4 8; do
    [ "$g" -le "$NG" ] || break
    for kind in weak strong; do
      if [ $kind = weak ]; then grid="512 512 $((512 * g))"; else grid="$SN $SN $SN"; fi
      for v in $VARIANTS; do
        [ "$g" -gt 1 ] || [ "$v" = "${VARIANTS%% *}" ] || continue  # one run on 1 GPU
        case $v in
          nccl_overlap) halo=nccl; ov=1 ;;
          nccl_serial) halo=nccl; ov=0 ;;
          mpi_overlap) halo=mpi; ov=1 ;;
          mpi_serial) halo=mpi; ov=0 ;;
          *) echo "unknown variant $v" >> "$OUT/scaling.log"; continue ;;
        esac
        echo "=== $kind, $g GPU(s), grid $grid, halo $v" >> "$OUT/scaling.log"
        VEM_HALO_OVERLAP=$ov VEM_FDTD_STEP=two_pass OMP_NUM_THREADS=4 timeout 240 $MPIRUN -np $g $EXE --backend cuda \
          --gpus-per-node $NG --halo $([ "$g" -gt 1 ] && echo $halo || echo mpi) \
          --grid $grid --ranks 1 1 $g --steps $SSTEPS --benchmark --json "$OUT/scaling_${kind}_${g}_${v}.json" \
          >> "$OUT/scaling.log" 2>&1 || { echo "run failed (rc $?)" >> "$OUT/scaling.log"; rc=1; }
      done
    done
  done
  # Bit for bit against one domain (rank 0 runs it): NCCL and MPI, slabs and a 2D/3D cut.
  for g in 2 4 8; do
    [ "$g" -le "$NG" ] || break
    for cut in "1 1 $g" "$((g / 2)) 2 1"; do
      for halo in nccl mpi; do
        echo "=== check, $g GPUs, ranks $cut, halo $halo" >> "$OUT/scaling.log"
        OMP_NUM_THREADS=4 timeout 120 $MPIRUN -np $g $EXE --backend cuda --gpus-per-node $NG --halo $halo \
          --grid 96 80 112 --ranks $cut --steps 300 --check >> "$OUT/scaling.log" 2>&1 || \
          { echo "check failed (rc $?)" >> "$OUT/scaling.log"; rc=1; }
      done
    done
  done
  for grid in "512 512 512" "$SN $SN $SN"; do
    echo "=== one-pass step, 1 GPU, grid $grid" >> "$OUT/scaling.log"
    OMP_NUM_THREADS=4 timeout 240 $MPIRUN -np 1 $EXE --backend cuda --grid $grid --steps $SSTEPS \
      --json "$OUT/scaling_onepass_$(echo $grid | cut -d' ' -f1).json" >> "$OUT/scaling.log" 2>&1 || rc=1
  done
  nvidia-smi topo -m >> "$OUT/scaling.log" 2>&1 || true
  cat "$OUT/scaling.log"
fi
if want fdfd-bench; then
  ./$BUILD/testing/benchmarks/bench_fdfd "$OUT/bench_fdfd.json" --commit "$COMMIT" "$@" > "$OUT/bench_fdfd.md" 2> "$OUT/bench_fdfd.log" || rc=1
  cat "$OUT/bench_fdfd.md"
fi
if want fdtd2d; then
  # 2D FDTD (issue 14): the CPU/CUDA agreement tests, then bench_fdtd2d (args: --sweep, --max-l,
  # ...) -> bench_fdtd2d.{json,md,log}, then Nsight Compute's DRAM bytes per 2D kernel at 8192^2
  # (bench_fdtd2d profile) -> ncu_fdtd2d.txt.
  ./$BUILD/testing/test_fdtd2d_cpu_cuda_agreement > "$OUT/test_fdtd2d.log" 2>&1 || rc=1
  grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|relative L2" "$OUT/test_fdtd2d.log" | tail -40
  ./$BUILD/testing/benchmarks/bench_fdtd2d "$OUT/bench_fdtd2d.json" --commit "$COMMIT" "$@" \
    > "$OUT/bench_fdtd2d.md" 2> "$OUT/bench_fdtd2d.log" || rc=1
  cat "$OUT/bench_fdtd2d.md"
  NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  if [ -x "$NCU" ]; then
    "$NCU" --kernel-name regex:"update_|step_blocked|cpml_all" --launch-count 40 \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      ./$BUILD/testing/benchmarks/bench_fdtd2d profile > "$OUT/ncu_fdtd2d.txt" 2>&1 || true
    grep -E "update_|step_blocked|cpml_all|duration|dram__" "$OUT/ncu_fdtd2d.txt" | head -120
  fi
fi
if want faults; then
  # GPU faults (issue 13): the out-of-memory tests (a grid larger than the GPU's free memory is
  # refused with the bytes needed and free, then a grid that fits runs and the memory comes back),
  # then the CUDA soak of the carried plugin test (100 FDTD Solver executions, host RSS and free
  # device memory flat, an abort in run 50) from $VEM_PLUGIN_TEST_DIR (default .carry/plugin-test,
  # scripts/collect_plugin_test.sh) -> faults.log. Run alone on the GPU (before sanitize's jobs).
  OMP_NUM_THREADS=4 ./$BUILD/testing/test_fdtd_bad_input --gtest_filter='*LargerThanGpuMemory*' \
    > "$OUT/faults.log" 2>&1 || rc=1
  PT=${VEM_PLUGIN_TEST_DIR:-.carry/plugin-test}
  if [ -x "$PT/test_plugin_filters" ]; then
    LD_LIBRARY_PATH=$PWD/$PT/lib:${LD_LIBRARY_PATH:-} OMP_NUM_THREADS=4 \
      "$PT/test_plugin_filters" --gtest_filter='*Soak*' >> "$OUT/faults.log" 2>&1 || rc=1
  else
    echo "device_check: no $PT/test_plugin_filters (scripts/collect_plugin_test.sh); soak not run" | tee -a "$OUT/faults.log"
  fi
  grep -E "^\[ *(OK|FAILED|SKIPPED|PASSED) *\]|soak:|bytes|free" "$OUT/faults.log" | tail -30
fi
if want sanitize; then
  CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  LIMIT=${VEM_SANITIZE_TIMEOUT:-60}
  # The heavy CUDA tests run their small grids (testing/unit/test_support.h) unless told otherwise.
  export VEM_TEST_SMALL_GRIDS=${VEM_TEST_SMALL_GRIDS:-1}
  # The project's kernels with __shared__ memory (grep __shared__ solver/src): the 3D and 2D DFT
  # steady-state windows, the 2D temporally blocked step, the FDFD reductions.
  RACE_KERNELS=${VEM_RACECHECK_KERNELS:-dft_window|dft2d_window|step_blocked|reduce_kernel}
  if [ "$RACE_KERNELS" != all ] && ! "$CS" --help 2>&1 | grep -q "regex  *: The value is a regular expression"; then
    echo "device_check: this compute-sanitizer has no kernel regex filter; racecheck instruments every kernel"
    RACE_KERNELS=all
  fi
  PROGRAMS=("$@")
  if [ ${#PROGRAMS[@]} -eq 0 ]; then
    mapfile -t PROGRAMS < <(ls $BUILD/testing/test_* | xargs -n1 basename)
  fi
  # One job per (tool, program) with CUDA tests; VEM_SANITIZE_JOBS of them at a time (default 1;
  # more share the GPU and the CPU cores, so their times are longer than alone).
  SAN=$(mktemp -d)
  export CS LIMIT RACE_KERNELS BUILD SAN VEM_SANITIZE_DEADLINE
  : > "$SAN/jobs"
  for tool in ${VEM_SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
    for prog in "${PROGRAMS[@]}"; do
      n=$("$BUILD/testing/$prog" --gtest_list_tests --gtest_filter='*cuda*:*Cuda*:*CUDA*' 2>/dev/null | grep -c '^  ')
      [ "$n" -gt 0 ] && echo "$tool $prog $n" >> "$SAN/jobs"
    done
  done
  sanitize_one() {
    local tool=$1 prog=$2 n=$3 log="$SAN/$1.$2.log" t0 code sec result filter=()
    # racecheck looks for hazards on shared memory only, so it instruments only the kernels that
    # use shared memory (VEM_RACECHECK_KERNELS, a regex; "all" instruments every kernel).
    if [ "$tool" = racecheck ] && [ "$RACE_KERNELS" != all ]; then
      filter=(--kernel-name "regex=$RACE_KERNELS")
    fi
    echo "=== $tool $prog ($n CUDA tests, VEM_TEST_SMALL_GRIDS=$VEM_TEST_SMALL_GRIDS)" > "$log"
    # VEM_SANITIZE_DEADLINE (epoch seconds): no job starts after it, none runs past it.
    local limit=$LIMIT left
    if [ -n "${VEM_SANITIZE_DEADLINE:-}" ]; then
      left=$(( VEM_SANITIZE_DEADLINE - $(date +%s) ))
      if [ "$left" -lt 5 ]; then printf 'not run (deadline)\t0\n' > "$SAN/$tool.$prog.result"; return; fi
      [ "$left" -lt "$limit" ] && limit=$left
    fi
    t0=$(date +%s.%N)
    OMP_NUM_THREADS=${VEM_SANITIZE_OMP:-4} timeout "$limit" "$CS" --tool "$tool" "${filter[@]}" \
      --error-exitcode 99 --print-limit 20 "$BUILD/testing/$prog" --gtest_filter='*cuda*:*Cuda*:*CUDA*' >> "$log" 2>&1
    code=$?
    sec=$(awk "BEGIN { print $(date +%s.%N) - $t0 }")
    case $code in
      0) result=clean ;;
      99) result=errors ;;
      124) result="timed out (${limit} s)" ;;
      *) result="test failure (exit $code)" ;;
    esac
    printf '%s\t%s\n' "$result" "$sec" > "$SAN/$tool.$prog.result"
  }
  export -f sanitize_one
  xargs -P "${VEM_SANITIZE_JOBS:-1}" -L 1 bash -c 'sanitize_one "$@"' _ < "$SAN/jobs"
  : > "$OUT/sanitize.log"
  echo '[' > "$OUT/sanitize.json"
  first=1
  printf '| tool | test program | CUDA tests | result | s |\n|---|---|---|---|---|\n' > "$OUT/sanitize.md"
  while read -r tool prog n; do
    cat "$SAN/$tool.$prog.log" >> "$OUT/sanitize.log"
    IFS=$'\t' read -r result sec < "$SAN/$tool.$prog.result" || { result="not run"; sec=0; }
    case $result in clean|timed*|not\ run*) ;; *) rc=1 ;; esac
    errors=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$SAN/$tool.$prog.log" | tail -1 | tr -d '=' | sed 's/"//g')
    printf '| %s | %s | %d | %s | %.0f |\n' "$tool" "$prog" "$n" "$result" "$sec" >> "$OUT/sanitize.md"
    [ $first = 1 ] || echo ',' >> "$OUT/sanitize.json"
    first=0
    printf '{"tool": "%s", "program": "%s", "cuda_tests": %d, "result": "%s", "seconds": %.1f, "summary": "%s", "small_grids": "%s", "jobs": %d}' \
      "$tool" "$prog" "$n" "$result" "$sec" "$errors" "$VEM_TEST_SMALL_GRIDS" "${VEM_SANITIZE_JOBS:-1}" >> "$OUT/sanitize.json"
  done < "$SAN/jobs"
  echo ']' >> "$OUT/sanitize.json"
  rm -rf "$SAN"
  cat "$OUT/sanitize.md"
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
