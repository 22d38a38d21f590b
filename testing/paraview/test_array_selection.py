"""No silent fallback to an unrelated array (issue 13): pvpython with differently named arrays.

ParaView's array menus fall back to the first array when no array has the default name, so with
cell arrays 'eps_r' and 'sigma' FDTDSolver's ConductivityArray starts as 'eps_r'. The filters must
refuse that (naming the property to set and the array that looks right) instead of running with
sigma = eps_r. Each case runs in a child pvpython so that the test reads exactly what a user sees
on the console, and checks that every error is printed once and that the outputs are empty.

Usage: pvpython test_array_selection.py --plugin VoxelEMPlugin.so
"""
import argparse
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(r"""
    import sys, numpy as np
    from paraview.simple import *
    from paraview import servermanager
    from vtkmodules.vtkCommonDataModel import vtkImageData
    from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
    LoadPlugin(sys.argv[1], remote=False, ns=globals())

    def image(arrays):
        img = vtkImageData()
        img.SetDimensions(7, 7, 7)
        img.SetSpacing(0.002, 0.002, 0.002)
        img.SetOrigin(-0.006, -0.006, -0.006)
        for name, value in arrays:
            a = numpy_to_vtk(np.full(216, value))
            a.SetName(name)
            img.GetCellData().AddArray(a)
        src = TrivialProducer()
        src.GetClientSideObject().SetOutput(img)
        return src

    def report(tag, f, port=0):
        f.UpdatePipeline()
        out = servermanager.Fetch(f, idx=port) if port else servermanager.Fetch(f)
        cd = out.GetCellData()
        sigma = cd.GetArray("conductivity")
        print("RESULT %s cells=%d sigma=%s" % (tag, out.GetNumberOfCells(),
              "%.3g" % vtk_to_numpy(sigma).max() if sigma is not None else "none"), flush=True)

    def transient(src):
        return FDTDSolver(Input=src, NumberOfSteps=10, SnapshotInterval=10, Backend="CPU",
                          AirPadding=2, CPMLThickness=4, SourcePosition=[0, 0, 0])

    case = sys.argv[2]
    if case == "eps_r_sigma":
        f = transient(image([("eps_r", 4.0), ("sigma", 0.5)]))
        print("SELECTED", list(f.PermittivityArray), list(f.ConductivityArray), flush=True)
        report("default", f)
        f.ConductivityArray = ["CELLS", "sigma"]
        report("fixed", f)
    elif case == "unrecognised":
        f = transient(image([("a", 4.0), ("b", 0.5)]))
        report("default", f)
        f.PermittivityArray = ["CELLS", "a"]
        f.ConductivityArray = ["CELLS", "b"]
        report("fixed", f)
    elif case == "other_names":
        f = transient(image([("Epsilon", 3.0), ("cond", 0.2), ("PermittivityArray_copy", 3.0)]))
        report("default", f)
        f.ConductivityArray = ["CELLS", "cond"]
        report("fixed", f)
    elif case == "steady_density":
        f = FDTDSteadyState(Input=image([("eps_r", 4.0), ("sigma", 0.5)]), Backend="CPU",
                            AirPadding=2, CPMLThickness=4, SourcePosition=[0, 0, 0],
                            FixedSteps=400, DFTFrequencies=[3e9])
        f.ConductivityArray = ["CELLS", "sigma"]
        print("SELECTED", list(f.DensityArray), flush=True)
        report("density", f)
    print("DONE", flush=True)
""")


def run_case(pvpython, plugin, case):
    r = subprocess.run([pvpython, "-c", CHILD, plugin, case], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=240)
    return r.returncode, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    args = ap.parse_args()
    pvpython = os.environ.get("VEM_PVPYTHON", sys.executable if "pvpython" in sys.executable else "pvpython")
    failures = []

    def check(ok, what, log):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)
            print(textwrap.indent(log[-3000:], "    | "))

    rc, log = run_case(pvpython, args.plugin, "eps_r_sigma")
    check(rc == 0 and "DONE" in log, "eps_r/sigma: the script runs to its end", log)
    check("SELECTED ['CELLS', 'eps_r'] ['CELLS', 'eps_r']" in log,
          "eps_r/sigma: ParaView's menu really falls back to 'eps_r' for the conductivity", log)
    msg = "ConductivityArray selects the array 'eps_r', which is named like a permittivity"
    check(log.count(msg) == 1, "eps_r/sigma: refused once, naming ConductivityArray", log)
    check("'sigma' is named like one" in log, "eps_r/sigma: the message points at 'sigma'", log)
    check("RESULT default cells=0" in log, "eps_r/sigma: every output empty after the error", log)
    check("RESULT fixed cells=" in log and "sigma=0.5" in log and "RESULT fixed cells=0" not in log,
          "eps_r/sigma: with ConductivityArray = sigma the run uses 0.5 S/m", log)

    rc, log = run_case(pvpython, args.plugin, "unrecognised")
    msg = "PermittivityArray and ConductivityArray both select the array 'a'"
    check(log.count(msg) == 1, "a/b: one array for two quantities is refused once", log)
    check("RESULT default cells=0" in log and "sigma=0.5" in log,
          "a/b: empty after the error, runs with b once both are set", log)

    rc, log = run_case(pvpython, args.plugin, "other_names")
    check("ConductivityArray selects the array 'Epsilon', which is named like a permittivity" in log
          and "'cond' is named like one" in log,
          "Epsilon/cond: usual names recognised, the message suggests 'cond'", log)
    check("RESULT fixed" in log and "sigma=0.2" in log, "Epsilon/cond: runs with cond", log)

    rc, log = run_case(pvpython, args.plugin, "steady_density")
    check(rc == 0 and "DONE" in log, "steady state without a density array: the script runs", log)
    if "SELECTED ['CELLS', 'density']" in log or "'None']" in log:
        print("note: DensityArray is its default 'density' (absent) or None: nothing to refuse")
        check("RESULT density cells=" in log and "RESULT density cells=0" not in log,
              "steady state: runs without SAR", log)
    else:
        check("DensityArray selects the array" in log and "it is not used (no density)" in log,
              "steady state: a density menu fallen back to another array is dropped with a warning", log)
        check("RESULT density cells=" in log and "RESULT density cells=0" not in log,
              "steady state: the run still gives its outputs (no SAR)", log)

    if failures:
        print("FAILED: %d check(s): %s" % (len(failures), "; ".join(failures)))
        sys.exit(1)
    print("all array-selection checks passed")


if __name__ == "__main__":
    main()
