"""Bad-input sweep (issue 13): every bad input gives one error message and empty outputs, no crash
and no hang, in FDTD Solver, FDTD Steady State, FDFD Solver and (for the tissue-table cases)
Tissue Properties.

The inputs are small vtkImageData (6 x 6 x 6 cells of 2 mm) given through a TrivialProducer:

  nan_spacing, zero_spacing, negative_spacing   the spacing along x is NaN, 0 or -2 mm
  flat_extent                                   1 point along z: 0 cells (voxels) along z (FDFD;
                                                for the FDTD filters a valid 2D model:
                                                flat_extent_fdtd must work)
  empty_extent                                  an inverted extent along z: no points at all
  eps_2_components, eps_9_components            a permittivity array with 2 or 9 components
  eps_nan, eps_negative                         one voxel's permittivity is NaN or -2
  labels_beyond_table                           label mode, a label (200) with no tissue row
  csv_random_bytes, csv_missing_columns,        label mode with TissueTableFile: random bytes,
  csv_huge_number                               a 'fixed' row without its density, eps_r = 1e400
  int32_arrays, double_arrays                   valid: int32 / float64 property arrays must WORK
                                                (no error, the same fields as float32 arrays)
and, beyond the issue's list: inf_spacing, points_nan_spacing (point arrays, each point a voxel),
eps_short_array (one value fewer than voxels), sigma_nan, sigma_negative, labels_negative (-1),
labels_too_large (70000), labels_float (a float label array), csv_nan_value, csv_empty_file,
csv_missing_file, and single_voxel (valid: a 1 x 1 x 1 image must work).

For each (case, filter) the text printed while updating is captured (a vtkStringOutputWindow is the
output window, as test_option_messages.py does) and must hold exactly one ERROR, naming the filter
('FDTD Solver: ...') and what is wrong (the case's keywords); every output port must be empty
afterwards. A second update of the same pipeline state must print nothing more and leave the outputs
empty. Each error is printed once in this log (not once per check).

The cases run in child pvpython processes (the whole sweep in one child, with a time limit): a case
that crashes or hangs the child is rerun alone to name it, and the cases after it run in a new child.

A (case, filter) marked in KNOWN_BUGS is a strict expected failure: it is printed as XFAIL with the
reason, and the test fails (XPASS) once it passes, until the mark is removed.

  pvpython test_bad_input_sweep.py --plugin VoxelEMPlugin.so [--pvpython pvpython] [--only CASE]
"""
import argparse
import json
import os
import queue
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

FILTERS = ("FDTDSolver", "FDTDSteadyState", "FDFDSolver", "TissueProperties")
LABELS = {"FDTDSolver": "FDTD Solver", "FDTDSteadyState": "FDTD Steady State",
          "FDFDSolver": "FDFD Solver", "TissueProperties": "Tissue Properties"}
SOLVERS = FILTERS[:3]
TABLE_FILTERS = FILTERS  # the tissue-table cases: the three solvers in label mode and Tissue Properties

# case -> (filters it applies to, keywords: the message must hold one of them (case-insensitive),
# or None for a valid input that must work)
CASES = {
    "nan_spacing": (SOLVERS, ["spacing along x is nan"]),
    "zero_spacing": (SOLVERS, ["spacing along x is 0"]),
    "negative_spacing": (SOLVERS, ["spacing along x is -0.002"]),
    "flat_extent": ([f for f in SOLVERS if f == "FDFDSolver"], ["no voxels along z"]),
    # issue 14: a flat image is a valid 2D model for the FDTD filters
    "flat_extent_fdtd": ([f for f in SOLVERS if f != "FDFDSolver"], None),
    "empty_extent": (SOLVERS, ["no voxels along z"]),
    "eps_2_components": (SOLVERS, ["has 2 components"]),
    "eps_9_components": (SOLVERS, ["has 9 components"]),
    "eps_nan": (SOLVERS, ["value nan at voxel"]),
    "eps_negative": (SOLVERS, ["value -2 at voxel"]),
    "labels_beyond_table": (TABLE_FILTERS, ["no tissue properties: 200"]),
    # a tissue-table error names the file and the line
    "csv_random_bytes": (TABLE_FILTERS, ["csv_random_bytes.csv line"]),
    "csv_missing_columns": (TABLE_FILTERS, ["csv_missing_columns.csv line 2"]),
    "csv_huge_number": (TABLE_FILTERS, ["csv_huge_number.csv line 2"]),
    "int32_arrays": (SOLVERS, None),
    "double_arrays": (SOLVERS, None),
    # Beyond the list: more of the same kinds.
    "inf_spacing": (SOLVERS, ["spacing along x is inf"]),
    "points_nan_spacing": (SOLVERS, ["spacing along x is nan"]),
    "eps_short_array": (SOLVERS, ["has 215 values"]),
    "sigma_nan": (SOLVERS, ["value nan at voxel"]),
    "sigma_negative": (SOLVERS, ["value -0.5 at voxel"]),
    "labels_negative": (TABLE_FILTERS, ["label -1 at voxel"]),
    "labels_too_large": (TABLE_FILTERS, ["label 70000 at voxel"]),
    "labels_float": (TABLE_FILTERS, ["must be an integer array"]),
    "csv_nan_value": (TABLE_FILTERS, ["csv_nan_value.csv line 2"]),
    "csv_empty_file": (TABLE_FILTERS, ["no tissue rows"]),
    "csv_missing_file": (TABLE_FILTERS, ["no_such_table.csv"]),
    "single_voxel": (SOLVERS, None),  # valid: one voxel
}

# (case, filter) -> the reason it is expected to fail (a bug found by this test, not fixed yet).
KNOWN_BUGS = {
}

CHILD = textwrap.dedent(r"""
    import json, os, sys, time
    import numpy as np
    from paraview.simple import *
    from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
    from vtkmodules.vtkCommonCore import vtkOutputWindow, vtkStringOutputWindow
    from vtkmodules.vtkCommonDataModel import vtkImageData
    plugin, tmp = sys.argv[1], sys.argv[2]
    pairs = [p.split(":") for p in sys.argv[3:]]
    LoadPlugin(plugin, remote=False, ns=globals())

    N, H = 6, 0.002

    def image(case):
        spacing = [H, H, H]
        dims = [N + 1, N + 1, N + 1]
        extent = None
        points = case == "points_nan_spacing"  # point arrays: each point is a voxel
        if case in ("nan_spacing", "points_nan_spacing"):
            spacing[0] = float("nan")
        elif case == "inf_spacing":
            spacing[0] = float("inf")
        elif case == "zero_spacing":
            spacing[0] = 0.0
        elif case == "negative_spacing":
            spacing[0] = -H
        elif case in ("flat_extent", "flat_extent_fdtd"):
            dims[2] = 1
        elif case == "empty_extent":
            extent = (0, N, 0, N, 0, -1)
        elif case == "single_voxel":
            dims = [2, 2, 2]
        img = vtkImageData()
        if extent:
            img.SetExtent(*extent)
        else:
            img.SetDimensions(*dims)
        img.SetSpacing(*spacing)
        img.SetOrigin(-0.5 * (dims[0] - 1) * H, -0.5 * (dims[1] - 1) * H, -0.5 * (dims[2] - 1) * H)
        if points:
            count = img.GetNumberOfPoints()
        else:
            count = img.GetNumberOfCells() if img.GetNumberOfPoints() > 0 else 0
        eps_comp, dtype = 1, np.float32
        if case == "eps_2_components":
            eps_comp = 2
        elif case == "eps_9_components":
            eps_comp = 9
        elif case == "int32_arrays":
            dtype = np.int32
        elif case == "double_arrays":
            dtype = np.float64
        eps = np.full((count, eps_comp) if eps_comp > 1 else count, 4, dtype=dtype)
        if case == "eps_nan":
            eps[count // 2] = np.nan
        elif case == "eps_negative":
            eps[count // 2] = -2.0
        elif case == "eps_short_array":
            eps = eps[:-1]  # one value fewer than the image has voxels
        sigma = np.full(count, 0 if dtype == np.int32 else 0.5, dtype=dtype)
        if case == "sigma_nan":
            sigma[count // 2] = np.nan
        elif case == "sigma_negative":
            sigma[count // 2] = -0.5
        density = np.full(count, 1000, dtype=dtype)
        labels = np.full(count, 3, dtype=np.uint8)  # muscle
        labels[: count // 2] = 1                      # skin
        if case == "labels_beyond_table":
            labels[count // 3] = 200
        elif case == "labels_negative":
            labels = labels.astype(np.int32)
            labels[count // 3] = -1
        elif case == "labels_too_large":
            labels = labels.astype(np.int32)
            labels[count // 3] = 70000
        elif case == "labels_float":
            labels = labels.astype(np.float32)
            labels[count // 3] = 1.5
        attrs = img.GetPointData() if points else img.GetCellData()
        for name, values in (("permittivity", eps), ("conductivity", sigma), ("density", density),
                             ("tissue", labels)):
            a = numpy_to_vtk(np.ascontiguousarray(values), deep=1)
            a.SetName(name)
            attrs.AddArray(a)
        src = TrivialProducer()
        src.GetClientSideObject().SetOutput(img)
        return src

    def csv_file(case):
        path = os.path.join(tmp, case + ".csv")
        if case == "csv_random_bytes":
            data = np.random.default_rng(13).integers(0, 256, 600, dtype=np.uint8).tobytes()
        elif case == "csv_missing_columns":
            data = b"label, name, model, eps_r, sigma, density\n1, skin, fixed, 40.0, 0.8\n"
        elif case == "csv_huge_number":
            data = b"label, name, model, eps_r, sigma, density\n1, skin, fixed, 1e400, 0.8, 1100\n"
        elif case == "csv_nan_value":
            data = b"label, name, model, eps_r, sigma, density\n1, skin, fixed, 40.0, nan, 1100\n"
        elif case == "csv_empty_file":
            data = b""
        elif case == "csv_missing_file":
            return os.path.join(tmp, "no_such_table.csv")
        else:
            return ""
        with open(path, "wb") as f:
            f.write(data)
        return path

    BASE = {
        "FDTDSolver": dict(Backend="CPU", AirPadding=2, CPMLThickness=4, SourcePosition=[0, 0, 0],
                           NumberOfSteps=20, SnapshotInterval=10),
        "FDTDSteadyState": dict(Backend="CPU", AirPadding=2, CPMLThickness=4, SourcePosition=[0, 0, 0],
                                DFTFrequencies=[10e9], FixedSteps=150, FarFieldStep=10.0,
                                ComputeAveragedSAR=0),
        "FDFDSolver": dict(Backend="CPU", AirPadding=2, PMLThickness=4, Frequency=10e9,
                           Tolerance=1e-3, RCSAngleStep=10.0),
        "TissueProperties": dict(Frequency=900e6),
    }
    PORTS = {"FDTDSolver": 2, "FDTDSteadyState": 3, "FDFDSolver": 3, "TissueProperties": 1}

    def make(case, name, src):
        props = dict(BASE[name])
        if case == "single_voxel" and name != "TissueProperties":
            props["AirPadding"] = 6  # room for the steady state's near-to-far box around the source
        table = csv_file(case)
        label_mode = case.startswith("labels_") or table
        assoc = "POINTS" if case.startswith("points_") else "CELLS"
        f = globals()[name](Input=src, **props)
        if name == "TissueProperties":
            f.LabelArray = [assoc, "tissue"]
            f.TissueTableFile = table
        elif label_mode:
            f.MaterialMode = "Labels + tissue table"
            f.LabelArray = [assoc, "tissue"]
            f.TissueTableFile = table
        else:
            f.PermittivityArray = [assoc, "permittivity"]
            f.ConductivityArray = [assoc, "conductivity"]
            if name == "FDTDSteadyState":
                f.DensityArray = [assoc, "density"]
        return f

    def update_capturing(proxy):
        previous = vtkOutputWindow.GetInstance()
        previous.Register(None)
        window = vtkStringOutputWindow()
        vtkOutputWindow.SetInstance(window)
        try:
            proxy.UpdatePipeline()
        finally:
            vtkOutputWindow.SetInstance(previous)
            previous.UnRegister(None)
        text = window.GetOutput()
        # VTK hands text that is not valid UTF-8 (a message quoting random bytes) over as bytes.
        return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text

    def sizes(name, algo):
        out = []
        for p in range(PORTS[name]):
            d = algo.GetOutputDataObject(p)
            if d.IsA("vtkTable"):
                out.append(d.GetNumberOfRows() + d.GetNumberOfColumns())
            else:
                out.append(d.GetNumberOfPoints() + d.GetNumberOfCells()
                           + d.GetCellData().GetNumberOfArrays() + d.GetPointData().GetNumberOfArrays())
        return out

    def field(name, algo):
        cd = algo.GetOutputDataObject(0).GetCellData()
        key = {"FDTDSolver": "E", "FDTDSteadyState": "E_real", "FDFDSolver": "E_scat_real"}.get(name)
        a = cd.GetArray(key) if key else None
        return None if a is None else vtk_to_numpy(a).astype(float)

    progress = open(os.path.join(tmp, "progress.txt"), "a")
    for case, name in pairs:
        progress.write("BEGIN %s:%s\n" % (case, name))
        progress.flush()
        print("BEGIN %s:%s" % (case, name), flush=True)
        t0 = time.time()
        src = image(case)
        f = make(case, name, src)
        text = update_capturing(f)
        algo = f.GetClientSideObject()
        res = dict(case=case, filter=name, text=text, sizes=sizes(name, algo),
                   seconds=round(time.time() - t0, 3))
        # A second update of the same pipeline state prints nothing more (each error once).
        res["again"] = update_capturing(f)
        res["sizes_again"] = sizes(name, algo)
        if case in ("int32_arrays", "double_arrays"):
            e = field(name, algo)
            ref_src = image("float32_control")
            if case == "int32_arrays":  # the same values as float32: eps 4, sigma 0
                img = ref_src.GetClientSideObject().GetOutputDataObject(0)
                img.GetCellData().GetArray("conductivity").Fill(0.0)
            ref = make("float32_control", name, ref_src)
            ref.UpdatePipeline()
            r = field(name, ref.GetClientSideObject())
            res["max_diff_vs_float32"] = (float(np.max(np.abs(e - r))) / max(1e-300, float(np.max(np.abs(r))))
                                          if e is not None and r is not None and e.shape == r.shape else None)
            Delete(ref)
            Delete(ref_src)
        Delete(f)
        Delete(src)
        # Progress and results go through files: the pipe also carries whatever VTK and ParaView
        # print, which can land inside a line of ours (seen on a fresh Debian 12 root).
        with open(os.path.join(tmp, "result-%s-%s.json" % (case, name)), "w") as out:
            json.dump(res, out)
        print("RESULT %s:%s" % (case, name), flush=True)
    open(os.path.join(tmp, "done"), "w").close()
    print("DONE", flush=True)
""")


def run_child(args, tmp, pairs):
    """Runs `pairs` in one child pvpython; returns ({pair: result}, the pair it died in or None, why,
    log). A child that prints nothing more for args.timeout seconds hangs: it is killed. The child
    reports through files in `tmp` (progress.txt, result-<case>-<filter>.json, done); its output,
    VTK's messages included, is only kept as the log."""
    for name in ["progress.txt", "done"] + ["result-%s-%s.json" % p for p in pairs]:
        if os.path.exists(os.path.join(tmp, name)):
            os.remove(os.path.join(tmp, name))
    cmd = [args.pvpython, "-c", CHILD, args.plugin, tmp] + ["%s:%s" % p for p in pairs]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines = queue.Queue()

    def reader():
        for raw in proc.stdout:
            lines.put(raw.decode(errors="replace"))
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()
    out, why = [], None
    while True:
        try:
            line = lines.get(timeout=args.timeout)
        except queue.Empty:
            proc.kill()
            why = "no answer within %d s (hang)" % args.timeout
            break
        if line is None:
            break
        out.append(line)
    rc = proc.wait()
    results, current = {}, None
    for pair in pairs:
        path = os.path.join(tmp, "result-%s-%s.json" % pair)
        if os.path.exists(path):
            with open(path) as f:
                results[pair] = json.load(f)
    progress = os.path.join(tmp, "progress.txt")
    if os.path.exists(progress):
        with open(progress) as f:
            begun = [tuple(l[6:].strip().split(":")) for l in f if l.startswith("BEGIN ")]
        if begun and begun[-1] not in results:
            current = begun[-1]
    if why is None and rc != 0:
        why = "exit status %d" % rc
    if why is None and not os.path.exists(os.path.join(tmp, "done")):
        why = "ended without finishing"
    return results, (current if why else None), why, "".join(out)


def judge(pair, res, keywords):
    """Problems with one (case, filter) result; empty when it passed."""
    case, name = pair
    label = LABELS[name]
    text = res["text"]
    errors = text.count("ERROR")
    problems = []
    if keywords is None:  # a valid input
        if errors or res["again"].count("ERROR"):
            problems.append("an error for a valid input")
        if min(res["sizes"]) == 0:
            problems.append("an empty output for a valid input (%s)" % res["sizes"])
        diff = res.get("max_diff_vs_float32", 0.0)
        if diff is None or diff > 1e-5:
            problems.append("fields differ from the float32 arrays' (relative %s)" % diff)
        return problems
    if errors == 0:
        problems.append("no error printed")
    elif errors > 1:
        problems.append("%d errors printed (one expected)" % errors)
    if errors and ("%s: " % label) not in text:
        problems.append("the error does not name '%s'" % label)
    low = text.lower()
    if errors and not any(k.lower() in low for k in keywords):
        problems.append("the message holds none of %s" % keywords)
    if any(res["sizes"]):
        problems.append("outputs not empty %s" % res["sizes"])
    if res["again"].count("ERROR"):
        problems.append("a second update of the same state prints the error again")
    if any(res["sizes_again"]):
        problems.append("outputs not empty after a second update %s" % res["sizes_again"])
    return problems


def first_error(text):
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if l.startswith("ERROR") and i + 1 < len(lines):
            return lines[i + 1]
    return lines[0] if lines else "(nothing printed)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--pvpython", default=os.environ.get("VEM_PVPYTHON", "pvpython"))
    ap.add_argument("--only", help="run this case only")
    ap.add_argument("--timeout", type=int, default=60,
                    help="seconds a case (or the child's start) may take before it counts as a hang")
    args = ap.parse_args()
    pairs = [(c, f) for c, (filters, _) in CASES.items() for f in filters if not args.only or c == args.only]
    if not pairs:
        sys.exit("no case '%s'; the cases: %s" % (args.only, ", ".join(CASES)))
    start = time.time()
    results, died = {}, {}
    with tempfile.TemporaryDirectory(prefix="vem_bad_input_") as tmp:
        todo = list(pairs)
        while todo:
            got, culprit, why, log = run_child(args, tmp, todo)
            results.update(got)
            rest = [p for p in todo if p not in got]
            if not why:
                if rest:  # should not happen
                    for p in rest:
                        died[p] = ("not reported", log[-2000:])
                break
            if culprit is None and "BEGIN " not in log:  # the child did not get to its first case
                for p in rest:
                    died[p] = ("did not start its cases: %s" % why, log[-2000:])
                break
            if culprit is None:
                culprit = rest[0] if rest else None
            if culprit is None:
                break
            if len(todo) > 1:  # confirm it alone
                got1, c1, why1, log1 = run_child(args, tmp, [culprit])
                results.update(got1)
                if culprit not in got1:
                    died[culprit] = (why1 or why, log1[-2000:])
            else:
                died[culprit] = (why, log[-2000:])
            todo = [p for p in rest if p != culprit]

    failures, xfail, xpass = [], [], []
    for pair in pairs:
        case, name = pair
        keywords = CASES[case][1]
        tag = "[%s / %s]" % (case, name)
        if pair in died:
            problems = ["the child pvpython %s" % died[pair][0]]
            detail = died[pair][1]
        else:
            res = results[pair]
            problems = judge(pair, res, keywords)
            detail = res["text"]
            summary = ("works, %.1e from float32, %.2f s" % (res.get("max_diff_vs_float32") or 0, res["seconds"])
                       if keywords is None else first_error(res["text"])[:300])
        bug = KNOWN_BUGS.get(pair)
        if problems:
            if bug:
                xfail.append(pair)
                print("XFAIL %s %s (known bug: %s)" % (tag, "; ".join(problems), bug))
            else:
                failures.append(tag)
                print("FAIL  %s %s" % (tag, "; ".join(problems)))
                print(textwrap.indent(detail.strip()[-3000:] or "(nothing printed)", "    | "))
        else:
            if bug:
                xpass.append(pair)
                failures.append(tag + " XPASS")
                print("XPASS %s passes now: remove its KNOWN_BUGS mark (%s)" % (tag, bug))
            else:
                print("ok    %s %s" % (tag, summary))
    print("%d (case, filter) pairs in %.1f s: %d failed, %d expected failure(s), %d unexpected pass(es)"
          % (len(pairs), time.time() - start, len(failures), len(xfail), len(xpass)))
    if failures:
        print("FAILED: " + ", ".join(failures))
        return 1
    print("all bad-input checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
