"""Soak test (issue 13): 100 runs in one pvpython session keep the host memory flat, and an abort in
the middle of a run leaves every output empty, after which the filter runs correctly again.

1. Soak. A TrivialProducer gives an 8 x 8 x 8 image of 2 mm cells (permittivity 4, conductivity
   0.1 S/m, density 1000 kg/m^3) to three filters on the CPU: FDTD Solver (20 steps, a snapshot every
   5), FDTD Steady State (150 fixed steps at 10 GHz) and FDFD Solver (10 GHz, tolerance 1e-4). Each
   of the 100 iterations changes a property of each (SourceAmplitude of the FDTD filters, IncidentPhi
   of the FDFD one) and updates all three, so each really runs again: NumberOfSolves counts the
   FDTD runs, the FDFD field must change, and max |E| / SourceAmplitude stays the same (the FDTD
   filters are linear in the source). Nothing may be printed (no error, no warning).
   After each iteration the process's resident set size (VmRSS of /proc/self/status) is read. After
   a warm-up of 10 iterations it must stay flat: every later reading within max(1 %, 2 MiB) of the
   10th (pvpython with the plugin holds ~490 MiB here, so that is ~4.9 MiB), and the least-squares
   trend over runs 10..100 must add less than 2 MiB. The slack absorbs allocator noise (glibc keeps or
   trims freed pages, Python's object pools; ~0.5 MiB seen) but not a leak of a run's data: the
   computational grid has 20^3 cells (31 KiB per float array, 375 KiB per complex128 vector field of
   the FDFD solve, several MiB allocated per iteration), so leaking one float array of the grid
   (31 KiB) per iteration adds 2.7 MiB over 90 runs and fails the trend.
2. Abort. On each filter (its outputs filled by the soak), a longer run is aborted from a
   ProgressEvent observer on the VTK algorithm (proxy.GetClientSideObject()) at the first progress
   report of the stepping / iterations: SetAbortExecute(1). The filter must stop there (no later step
   or iteration is reported, its progress text says it stopped, NumberOfSolves does not change),
   leave every output port empty and warn that the run was aborted (once). Then, with the observer
   removed and the flag cleared, the next update must run it again and give exactly what a fresh
   filter with the same properties gives. (A plain proxy.UpdatePipeline() right after the abort is
   skipped by ParaView's proxy, which does not know the run was aborted, so the test updates with a
   time, as the animation and Fetch do; that case is only noted.)

Known bugs are strict expected failures (XFAIL with the reason; the test fails with XPASS once they
pass, until the mark is removed).

  pvpython test_soak.py --plugin VoxelEMPlugin.so [--iterations 100] [--warmup 10]
"""
import argparse
import ctypes
import ctypes.util
import gc
import re
import sys
import time

from paraview.simple import *  # noqa: F401,F403

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonDataModel import vtkImageData

from vem_pvtest import Capture, Checker

# Known bugs, checked strictly (see Checker.known). Fixed: "abort_warning_once" (one
# UpdatePipeline() printed the abort warning once per output port: each port's request ran the
# aborted solve again; vem_vtk::RunOnce now records the abort for the pipeline state).
KNOWN_BUGS = {}


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("no VmRSS in /proc/self/status")


class _MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]


def _heap_reader():
    """glibc's mallinfo2(): bytes malloc has handed out and not got back (all arenas, mmapped chunks
    included), or None where it is not available."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        f = libc.mallinfo2
    except (OSError, AttributeError):
        return None
    f.restype = _MallInfo2

    def heap_mib():
        m = f()
        return (m.uordblks + m.hblkhd) / 1048576.0
    return heap_mib


heap_mib = _heap_reader()


def image(n=8, h=0.002):
    img = vtkImageData()
    img.SetDimensions(n + 1, n + 1, n + 1)
    img.SetSpacing(h, h, h)
    img.SetOrigin(-0.5 * n * h, -0.5 * n * h, -0.5 * n * h)
    for name, v in (("permittivity", 4.0), ("conductivity", 0.1), ("density", 1000.0)):
        a = numpy_to_vtk(np.full(n ** 3, v, dtype=np.float32), deep=1)
        a.SetName(name)
        img.GetCellData().AddArray(a)
    return img


PORTS = {"FDTDSolver": 2, "FDTDSteadyState": 3, "FDFDSolver": 3}
COMMON = dict(Backend="CPU", AirPadding=2)
PROPS = {
    "FDTDSolver": dict(COMMON, CPMLThickness=4, SourcePosition=[0.0, 0.0, 0.0], NumberOfSteps=20,
                       SnapshotInterval=5, ProgressInterval=5),
    "FDTDSteadyState": dict(COMMON, CPMLThickness=4, SourcePosition=[0.0, 0.0, 0.0], DFTFrequencies=[10e9],
                            FixedSteps=150, FarFieldStep=10.0, ComputeAveragedSAR=0, ProgressInterval=10),
    "FDFDSolver": dict(COMMON, PMLThickness=4, Frequency=10e9, Tolerance=1e-4, RCSAngleStep=10.0),
}
# The aborted runs: long enough that the abort at the first report stops them early.
LONG = {
    "FDTDSolver": dict(NumberOfSteps=2000, SnapshotInterval=500),
    "FDTDSteadyState": dict(FixedSteps=3000),
    "FDFDSolver": dict(Tolerance=1e-12, MaxIterations=100000, Method="BiCGSTAB"),  # ~1000 iterations
}
FIELD = {"FDTDSolver": "E", "FDTDSteadyState": "E_real", "FDFDSolver": "E_scat_real"}


def make(name, src, extra=None):
    props = dict(PROPS[name])
    props.update(extra or {})
    f = globals()[name](Input=src, **props)
    if name != "FDFDSolver":
        f.PermittivityArray = ["CELLS", "permittivity"]
        f.ConductivityArray = ["CELLS", "conductivity"]
    if name == "FDTDSteadyState":
        f.DensityArray = ["CELLS", "density"]
    return f


def solves(proxy):
    proxy.UpdatePropertyInformation()
    return proxy.GetProperty("NumberOfSolves").GetElement(0)


def sizes(name, algo):
    out = []
    for p in range(PORTS[name]):
        d = algo.GetOutputDataObject(p)
        out.append(d.GetNumberOfRows() + d.GetNumberOfColumns() if d.IsA("vtkTable")
                   else d.GetNumberOfCells() + d.GetCellData().GetNumberOfArrays())
    return out


def snapshot(name, algo):
    """Every array of every output port, as numpy arrays (copies)."""
    data = {}
    for p in range(PORTS[name]):
        d = algo.GetOutputDataObject(p)
        if d.IsA("vtkTable"):
            arrays = [d.GetColumn(i) for i in range(d.GetNumberOfColumns())]
        else:
            cd = d.GetCellData()
            arrays = [cd.GetArray(i) for i in range(cd.GetNumberOfArrays())]
        for a in arrays:
            if a is not None and a.IsA("vtkDataArray"):
                data["%d/%s" % (p, a.GetName())] = vtk_to_numpy(a).astype(float).copy()
    return data


def compare(a, b):
    """Largest difference relative to each array's largest value; None when the arrays differ in
    names or shapes."""
    if sorted(a) != sorted(b) or any(a[k].shape != b[k].shape for k in a):
        return None
    worst = 0.0
    for k in a:
        x, y = a[k], b[k]
        both_nan = np.isnan(x) & np.isnan(y)
        if np.any(np.isnan(x) != np.isnan(y)):
            return None
        scale = max(1e-300, float(np.nanmax(np.abs(y))) if y.size and not np.all(both_nan) else 1.0)
        d = np.where(both_nan, 0.0, np.abs(x - y))
        worst = max(worst, float(d.max()) / scale if d.size else 0.0)
    return worst


def soak(chk, src, iterations, warmup):
    filters = {name: make(name, src) for name in PORTS}
    algos = {name: f.GetClientSideObject() for name, f in filters.items()}
    ratios = {"FDTDSolver": [], "FDTDSteadyState": []}
    seconds = {name: [] for name in PORTS}
    rss, heap, reruns, changed = [], [], {name: 0 for name in PORTS}, 0
    previous_fdfd = None
    gc.collect()
    rss_before = rss_mib()
    with Capture() as cap:
        for i in range(1, iterations + 1):
            amplitude = 1.0 + 0.01 * i
            filters["FDTDSolver"].SourceAmplitude = amplitude
            filters["FDTDSteadyState"].SourceAmplitude = amplitude
            filters["FDFDSolver"].IncidentPhi = float((37 * i) % 360)
            for name, f in filters.items():
                t0 = time.perf_counter()
                f.UpdatePipeline()
                seconds[name].append(time.perf_counter() - t0)
                algo = algos[name]
                e = algo.GetOutputDataObject(0).GetCellData().GetArray(FIELD[name])
                if e is None or min(sizes(name, algo)) == 0:
                    continue
                if name in ratios:
                    if solves(f) == i:
                        reruns[name] += 1
                    ratios[name].append(float(np.abs(vtk_to_numpy(e)).max()) / amplitude)
                else:
                    reruns[name] += 1
                    v = vtk_to_numpy(e).copy()
                    if previous_fdfd is not None and not np.array_equal(v, previous_fdfd):
                        changed += 1
                    previous_fdfd = v
            gc.collect()
            rss.append(rss_mib())
            if heap_mib:
                heap.append(heap_mib())
    chk.check(cap.text.strip() == "", "soak: nothing printed in %d iterations%s"
              % (iterations, "" if not cap.text.strip() else ": " + cap.text.strip()[:2000]))
    for name in PORTS:
        chk.check(reruns[name] == iterations,
                  "soak: %s ran and gave outputs in %d of %d iterations" % (name, reruns[name], iterations))
    chk.check(changed == iterations - 1, "soak: the FDFD field changed with IncidentPhi in %d of %d iterations"
              % (changed, iterations - 1))
    for name, r in ratios.items():
        spread = (max(r) - min(r)) / max(r) if r else float("nan")
        chk.check(len(r) == iterations and spread < 1e-5,
                  "soak: %s max|E| / SourceAmplitude the same in every run (spread %.1e): it ran with "
                  "each new amplitude" % (name, spread))
    for name, s in seconds.items():
        print("soak: %s per run: median %.1f ms, max %.1f ms, total %.2f s"
              % (name, 1e3 * np.median(s), 1e3 * max(s), sum(s)))
    # Memory.
    base = rss[warmup - 1]
    later = rss[warmup - 1:]
    slack = max(0.01 * base, 2.0)
    growth = max(later) - base
    print("soak: RSS before the first run %.1f MiB; after run 1 %.1f, run %d %.1f, run %d %.1f MiB; "
          "runs %d..%d: min %.1f max %.1f MiB" % (rss_before, rss[0], warmup, base, iterations, rss[-1],
                                                  warmup, iterations, min(later), max(later)))
    print("soak: RSS every 10 runs (MiB): " + " ".join("%.1f" % r for r in rss[9::10]))
    chk.check(growth <= slack and base - min(later) <= slack,
              "soak: RSS flat from run %d to run %d: within %.2f MiB of %.1f MiB (max(1 %%, 2 MiB) = %.2f MiB)"
              % (warmup, iterations, max(growth, base - min(later)), base, slack))
    runs = np.arange(warmup, iterations + 1, dtype=float)
    slope = float(np.polyfit(runs, np.array(later), 1)[0]) if len(later) > 1 else 0.0
    trend = slope * (iterations - warmup)
    chk.check(trend < 2.0, "soak: RSS trend over runs %d..%d: %+.3f MiB (%+.1f KiB per iteration), < 2 MiB"
              % (warmup, iterations, trend, 1024 * slope))
    # The heap in use (malloc's own count, not pages): a leak shows here even while it fits into
    # pages that are already resident, which RSS does not see.
    if heap:
        hb = heap[warmup - 1:]
        hslope = float(np.polyfit(runs, np.array(hb), 1)[0]) if len(hb) > 1 else 0.0
        print("soak: heap in use (mallinfo2) after run 1 %.2f, run %d %.2f, run %d %.2f MiB; runs %d..%d: "
              "min %.2f max %.2f MiB" % (heap[0], warmup, hb[0], iterations, heap[-1], warmup, iterations,
                                         min(hb), max(hb)))
        chk.check(max(hb) - hb[0] < 1.0 and hslope * (iterations - warmup) < 0.5,
                  "soak: heap in use flat from run %d to run %d: max %+.3f MiB, trend %+.3f MiB "
                  "(%+.2f KiB per iteration); limits 1 MiB and 0.5 MiB"
                  % (warmup, iterations, max(hb) - hb[0], hslope * (iterations - warmup), 1024 * hslope))
    else:
        print("soak: mallinfo2 not available; heap in use not checked")
    return filters


def abort_then_rerun(chk, src, name, f):
    algo = f.GetClientSideObject()
    for k, v in LONG[name].items():
        setattr(f, k, v)
    step = re.compile(r"(step|iteration) (\d+)")
    state = {"asked": None, "reported": []}

    def on_progress(obj, event):
        m = step.search(obj.GetProgressText() or "")
        if m:
            state["reported"].append(int(m.group(2)))
            if state["asked"] is None:
                state["asked"] = int(m.group(2))
                obj.SetAbortExecute(1)

    counted = name != "FDFDSolver"
    before = solves(f) if counted else None
    tag = algo.AddObserver("ProgressEvent", on_progress)
    t0 = time.perf_counter()
    with Capture() as cap:
        f.UpdatePipeline()
    aborted_s = time.perf_counter() - t0
    algo.RemoveObserver(tag)
    text = algo.GetProgressText() or ""
    tag_ = "[abort %s]" % name
    chk.check(state["asked"] is not None, "%s abort asked at the first progress report (%s %s)"
              % (tag_, "iteration" if name == "FDFDSolver" else "step", state["asked"]))
    chk.check(state["reported"] and max(state["reported"]) == state["asked"],
              "%s no later %s reported after the abort (reported %s)"
              % (tag_, "iteration" if name == "FDFDSolver" else "step", sorted(set(state["reported"]))))
    chk.check(("aborted" in text) if counted else ("no output" in text),
              "%s progress text after the abort: '%s'" % (tag_, text))
    if counted:
        chk.check(solves(f) == before, "%s NumberOfSolves unchanged (%d)" % (tag_, solves(f)))
    chk.check(not any(sizes(name, algo)), "%s every output port empty after the abort %s"
              % (tag_, sizes(name, algo)))
    warnings = cap.text.count("the run was aborted")
    chk.check("ERROR" not in cap.text and warnings >= 1,
              "%s a warning that the run was aborted, no error" % tag_)
    chk.check(warnings == 1, "%s the abort warning printed once (printed %d times)" % (tag_, warnings))

    # The next update, without the abort. A plain proxy.UpdatePipeline() does not reach the VTK
    # executive here: ParaView's vtkSMSourceProxy skips it until a property changes (its NeedsUpdate
    # flag was cleared by the update that was aborted), for any VTK filter, so that is only noted.
    # The next update that reaches the executive (UpdatePipeline(time), Fetch, a render after a
    # change) must run the filter again.
    algo.SetAbortExecute(0)
    with Capture() as cap:
        f.UpdatePipeline()
    plain = min(sizes(name, algo)) > 0
    print("note: %s proxy.UpdatePipeline() right after the abort %s" % (
        tag_, "ran the filter again" if plain else "is skipped by the proxy (outputs still %s)" % sizes(name, algo)))
    t = f.TimestepValues[-1] if name == "FDTDSolver" else 0.0
    t0 = time.perf_counter()
    if not plain:
        with Capture() as cap:
            f.UpdatePipeline(t)
    full_s = time.perf_counter() - t0
    after = snapshot(name, algo)

    fresh = make(name, src, dict(LONG[name], **({"SourceAmplitude": f.SourceAmplitude} if counted
                                                else {"IncidentPhi": f.IncidentPhi})))
    fresh.UpdatePipeline(t)
    reference = snapshot(name, fresh.GetClientSideObject())
    diff = compare(after, reference)
    chk.check(diff is not None and diff <= 1e-6,
              "%s the run after the abort equals a fresh filter's: %d arrays, largest relative "
              "difference %s" % (tag_, len(reference), diff))
    print("%s aborted update %.3f s, the full run %.3f s (%s)" % (tag_, aborted_s, full_s, algo.GetProgressText()))
    chk.check(aborted_s < full_s, "%s the aborted update took less than the full run" % tag_)
    Delete(fresh)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args()
    start = time.time()
    LoadPlugin(args.plugin, remote=False, ns=globals())
    chk = Checker(KNOWN_BUGS)
    src = TrivialProducer()
    src.GetClientSideObject().SetOutput(image())
    t0 = time.time()
    filters = soak(chk, src, args.iterations, args.warmup)
    print("soak: %d iterations in %.1f s" % (args.iterations, time.time() - t0))
    t0 = time.time()
    for name, f in filters.items():
        abort_then_rerun(chk, src, name, f)
    print("abort checks in %.1f s; whole test %.1f s" % (time.time() - t0, time.time() - start))
    if chk.xfail:
        print("%d expected failure(s): %s" % (len(chk.xfail), ", ".join(sorted(set(chk.xfail)))))
    if chk.failures:
        print("%d check(s) failed:" % len(chk.failures))
        for what in chk.failures:
            print("  " + what)
        return 1
    print("all soak checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
