"""FDTD Solver on several pvbatch ranks (issue 17), run by ctest:

  pvpython test_pvbatch_distributed.py --plugin VoxelEMPlugin.so --pvbatch pvbatch --mpirun mpirun --out DIR

Runs examples/mpi/pvbatch_fdtd_head.py (head phantom, labels + tissue table, CPU) with plain pvbatch
and with `mpirun -np N pvbatch` for N = 2 and 3 (dipole; uneven pieces for 3), 4 (point source, a
2 x 2 x 1 split) and 2 (plane wave), and checks:
- each rank wrote its own piece (N .vti files per time step, their extents partition the whole extent,
  none is the whole image): the field was not gathered;
- each rank read only its piece of the input image (the input_extent field data of its output: none
  is what all ranks read together): the input was split by the pipeline, not read whole everywhere;
- every array (E, H, |E|, permittivity, conductivity, tissue) at every saved time equals the one-rank
  run's bit for bit, and the probe table is written once with the same values;
- FDTD Steady State (dipole, fixed steps) on 2 and 3 ranks: the phasor / |E| / SAR / 1 g / 10 g
  arrays bit for bit, the summary and far-field tables (written once) within 1e-9 relative;
- a plane wave (TF/SF) on 2 ranks equals one rank bit for bit;
- property arrays (TissueProperties, averaged at the material edges) on 3 ranks equal one rank
  bit for bit;
- a bad value on 2 ranks ends both ranks with the message, in time.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOXML import vtkXMLImageDataReader, vtkXMLPImageDataReader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vem_pvtest import Checker  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "mpi", "pvbatch_fdtd_head.py")
# pvpython itself is an MPI singleton: its OMPI_* / PMIX_* variables would make the child mpirun
# believe it runs inside that job. The children get a clean MPI environment.
_BASE = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_", "ORTE_"))}
ENV = dict(_BASE, OMP_NUM_THREADS="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl="self,vader", OMPI_MCA_btl_vader_single_copy_mechanism="none",
           OMPI_MCA_rmaps_base_oversubscribe="1")


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, env=ENV)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")


def cells(ext):
    return [ext[2 * a + 1] - ext[2 * a] for a in range(3)]


def pieces(pvti):
    root = ET.parse(pvti).getroot()
    img = root.find("PImageData")
    whole = [int(v) for v in img.get("WholeExtent").split()]
    return whole, [([int(v) for v in p.get("Extent").split()], p.get("Source")) for p in img.findall("Piece")]


def arrays(pvti):
    r = vtkXMLPImageDataReader()
    r.SetFileName(pvti)
    r.Update()
    cd = r.GetOutput().GetCellData()
    return {cd.GetArrayName(i): vtk_to_numpy(cd.GetArray(i)).copy() for i in range(cd.GetNumberOfArrays())}


# pvbatch script: HeadPhantom -> TissueProperties -> (permittivity -1 at voxel (0, 0, 0) of the whole
# image, seen only by the rank that reads it) -> FDTD Solver with property arrays.
BAD_PIECE_SCRIPT = '''
import sys
from paraview.simple import *
LoadPlugin(sys.argv[1], remote=False, ns=globals())
phantom = HeadPhantom(Dimensions=[40, 40, 26], Spacing=[0.0066] * 3, Origin=[-0.132, -0.132, -0.0858])
tissues = TissueProperties(Input=phantom, Frequency=900e6)
bad = ProgrammableFilter(Input=tissues)
bad.Script = """
inp = self.GetInputDataObject(0, 0)
out = self.GetOutputDataObject(0)
out.ShallowCopy(inp)
ext = inp.GetExtent()
print("bad_piece: %s extent %s" % ("whole" if list(ext) == [0, 40, 0, 40, 0, 26] else "read", list(ext)))
eps = inp.GetCellData().GetArray("permittivity").NewInstance()
eps.DeepCopy(inp.GetCellData().GetArray("permittivity"))
if ext[0] == 0 and ext[2] == 0 and ext[4] == 0:
    eps.SetValue(0, -1.0)
out.GetCellData().AddArray(eps)
"""
fdtd = FDTDSolver(Input=bad, MaterialMode="Property arrays")
fdtd.AirPadding = 4
fdtd.CPMLThickness = 6
fdtd.NumberOfSteps = 20
fdtd.UpdatePipeline()
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--pvbatch", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    c = Checker()

    def solve(n, illumination, tag, extra=()):
        out = os.path.join(args.out, tag)
        for f in glob.glob(os.path.join(out, "**", "*.*"), recursive=True):
            os.remove(f)
        cmd = [args.pvbatch, EXAMPLE, "--plugin", args.plugin, "--out", out, "--illumination", illumination] + list(extra)
        if n > 1:
            cmd = [args.mpirun, "--oversubscribe", "-np", str(n)] + cmd
        rc, log = run(cmd, 240)
        ok = rc == 0 and "pvbatch_fdtd_head:" in log and " 0 solve(s)" not in log
        c.check(ok, "%s: %d rank(s) ran and solved (rc %s)" % (tag, n, rc))
        if not ok:
            print(log[-3000:])
        return out

    def same_arrays(tag, name, a, b):
        c.check(sorted(a) == sorted(b), "%s %s: same arrays %s" % (tag, name, sorted(b)))
        for k in sorted(a):
            same = k in b and a[k].shape == b[k].shape and np.array_equal(a[k].view(np.uint8), b[k].view(np.uint8))
            finite = a[k][np.isfinite(a[k])]
            peak = float(np.abs(finite).max()) if finite.size else 0.0
            c.check(same and peak > 0, "%s %s: %s equals the one-rank run bit for bit (max |value| %.3g)"
                    % (tag, name, k, peak))

    def check_pieces(tag, f, n, out):
        whole, ps = pieces(f)
        wc = cells(whole)
        name = os.path.basename(f)
        c.check(len(ps) == n, "%s %s: %d pieces (one per rank; got %d)" % (tag, name, n, len(ps)))
        covered = np.zeros(wc, dtype=np.int32)
        for e, src in ps:
            covered[e[0]:e[1], e[2]:e[3], e[4]:e[5]] += 1
            c.check(os.path.exists(os.path.join(out, src)), "%s: piece file %s exists" % (tag, src))
        c.check(covered.min() == 1 and covered.max() == 1,
                "%s %s: the pieces partition the whole extent (each cell once)" % (tag, name))
        c.check(all(e != whole for e, _ in ps), "%s %s: no rank holds the whole image (not gathered)" % (tag, name))
        # The input was split by the pipeline: each rank read only its piece of the image (field
        # data input_extent), a proper part of what the ranks read together.
        read = []
        for e, src in ps:
            r = vtkXMLImageDataReader()
            r.SetFileName(os.path.join(out, src))
            r.Update()
            a = r.GetOutput().GetFieldData().GetArray("input_extent")
            read.append([int(a.GetValue(i)) for i in range(6)] if a is not None and a.GetNumberOfTuples() == 6 else None)
        if not c.check(all(x is not None for x in read), "%s %s: every rank reports the input extent it read" % (tag, name)):
            return
        union = [min(x[0] for x in read), max(x[1] for x in read), min(x[2] for x in read),
                 max(x[3] for x in read), min(x[4] for x in read), max(x[5] for x in read)]
        size = lambda x: np.prod([x[2 * a + 1] - x[2 * a] + 1 for a in range(3)])
        c.check(all(x != union for x in read) and sum(size(x) for x in read) < n * size(union),
                "%s %s: no rank read the whole input (%s of %s)" % (tag, name, read, union))

    # --- FDTD Steady State: phasors, SAR, psSAR 1 g / 10 g, summary and far field (fixed steps). ---
    steady = ["--analysis", "steady", "--fixed-steps", "400"]
    ref_steady = solve(1, "dipole", "np1_steady", steady)
    for n in (2, 3):
        tag = "np%d_steady" % n
        out = solve(n, "dipole", tag, steady)
        f = os.path.join(out, "steady.pvti")
        if not c.check(os.path.exists(f), "%s: steady.pvti written" % tag):
            continue
        check_pieces(tag, f, n, out)
        same_arrays(tag, "steady.pvti", arrays(os.path.join(ref_steady, "steady.pvti")), arrays(f))
        for table, tol in (("summary.csv", 1e-9), ("far_field.csv", 1e-9)):
            ta = np.genfromtxt(os.path.join(ref_steady, table), delimiter=",", names=True)
            tb = np.genfromtxt(os.path.join(out, table), delimiter=",", names=True)
            c.check(ta.shape == tb.shape and sorted(ta.dtype.names) == sorted(tb.dtype.names),
                    "%s: %s written once with the same columns (%s rows)" % (tag, table, tb.shape))
            if ta.shape == tb.shape and sorted(ta.dtype.names) == sorted(tb.dtype.names):
                worst = 0.0
                for k in ta.dtype.names:
                    x, y = np.atleast_1d(ta[k]).astype(float), np.atleast_1d(tb[k]).astype(float)
                    both_nan = np.isnan(x) & np.isnan(y)
                    d = np.abs(x - y)[~both_nan] / np.maximum(1e-300, np.abs(x)[~both_nan])
                    worst = max(worst, float(d.max()) if d.size else 0.0)
                c.check(worst <= tol, "%s: %s equals the one-rank run within %g relative (worst %.2e)"
                        % (tag, table, tol, worst))
    sa = np.genfromtxt(os.path.join(ref_steady, "summary.csv"), delimiter=",", names=True)
    c.check(np.isfinite(sa["psSAR10g_W_per_kg"]) and sa["psSAR10g_W_per_kg"] > 0,
            "steady: psSAR10g is computed (%.4g W/kg)" % sa["psSAR10g_W_per_kg"])

    # --- FDTD Solver: time series. ---
    ref = solve(1, "dipole", "np1_dipole")
    ref_point = solve(1, "point", "np1_point")
    ref_plane = solve(1, "plane", "np1_plane")
    ref_files = sorted(glob.glob(os.path.join(ref, "fields_*.pvti")))
    c.check(len(ref_files) == 3, "one rank: 3 time steps written (%d)" % len(ref_files))
    # Property arrays (TissueProperties -> 'Property arrays', averaged at the material edges).
    ref_arrays = solve(1, "dipole", "np1_arrays", ["--materials", "arrays"])
    for n, illum, ref_dir, extra in ((2, "dipole", ref, []), (3, "dipole", ref, []), (4, "point", ref_point, []),
                                     (2, "plane", ref_plane, []), (3, "dipole", ref_arrays, ["--materials", "arrays"])):
        tag = "np%d_%s%s" % (n, illum, "_arrays" if extra else "")
        out = solve(n, illum, tag, extra)
        files = sorted(glob.glob(os.path.join(out, "fields_*.pvti")))
        c.check(len(files) == 3, "%s: 3 time steps written (%d)" % (tag, len(files)))
        for f in files:
            check_pieces(tag, f, n, out)
            same_arrays(tag, os.path.basename(f), arrays(os.path.join(ref_dir, os.path.basename(f))), arrays(f))
        fa, fb = os.path.join(ref_dir, "probes.csv"), os.path.join(out, "probes.csv")
        if os.path.getsize(fa) == 0:  # (a plane wave has no source probe and the example sets one probe)
            c.check(not os.path.exists(fb) or os.path.getsize(fb) == 0, "%s: no probe table, as one rank" % tag)
            continue
        pa = np.genfromtxt(fa, delimiter=",", names=True)
        pb = np.genfromtxt(fb, delimiter=",", names=True)
        c.check(pa.shape == pb.shape, "%s: probe table written once (%d rows, one rank: %d)" % (tag, pb.shape[0], pa.shape[0]))
        if pa.shape == pb.shape:
            c.check(all(np.array_equal(pa[k], pb[k]) for k in pa.dtype.names),
                    "%s: probe table equals the one-rank run's" % tag)

    # A bad value (NumberOfSteps -5): every rank ends with the solver's message, in time, no hang.
    out = os.path.join(args.out, "np2_bad")
    rc, log = run([args.mpirun, "--oversubscribe", "-np", "2", args.pvbatch, EXAMPLE, "--plugin", args.plugin,
                   "--out", out, "--steps", "-5"], 120)
    msg = "NumberOfSteps"
    ranks_with_msg = set(re.findall(r"\[pvbatch\.(\d)\s*\][^\n]*ERR[^\n]*" + re.escape(msg), log))
    c.check(rc is not None, "bad NumberOfSteps on 2 ranks: ended within 120 s (no hang)")
    c.check(ranks_with_msg == {"0", "1"}, "bad NumberOfSteps on 2 ranks: both ranks report it (ranks %s)"
            % sorted(ranks_with_msg))
    c.check(rc not in (None, 0) or " 0 solve(s)" in log, "bad NumberOfSteps on 2 ranks: reported as a failure")
    # A bad value in ONE rank's piece of the input (permittivity -1 at voxel (0, 0, 0), held only by
    # the rank whose piece starts there): every rank ends with that rank's message, in time.
    script = os.path.join(args.out, "bad_piece.py")
    with open(script, "w") as f:
        f.write(BAD_PIECE_SCRIPT)
    rc, log = run([args.mpirun, "--oversubscribe", "-np", "2", args.pvbatch, script, args.plugin], 120)
    msg = "has the value -1 at voxel (0, 0, 0)"
    ranks_with_msg = set(re.findall(r"\[pvbatch\.(\d)\s*\][^\n]*ERR[^\n]*rank \d of 2: [^\n]*" + re.escape(msg), log))
    c.check(rc is not None, "bad value in one rank's piece: ended within 120 s (no hang)")
    c.check(ranks_with_msg == {"0", "1"}, "bad value in one rank's piece: both ranks report that rank's message "
            "(ranks %s)" % sorted(ranks_with_msg))
    if ranks_with_msg != {"0", "1"}:
        print(log[-3000:])
    c.check("bad_piece: read" in log and "bad_piece: whole" not in log,
            "bad value in one rank's piece: the ranks read pieces of the input, not the whole")

    if c.failures:
        print("FAILED: %d check(s)" % len(c.failures))
        sys.exit(1)
    print("all checks passed")


main()
