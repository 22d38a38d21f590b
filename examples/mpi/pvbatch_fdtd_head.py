"""The head phantom's FDTD run split over MPI ranks by ParaView itself (issue 17):

    mpirun -np 4 pvbatch examples/mpi/pvbatch_fdtd_head.py --plugin <VoxelEMPlugin.so> --out head-mpi

pvbatch runs the pipeline on every rank. HeadPhantom -> FDTD Solver (labels + tissue table, a
900 MHz half-wave dipole beside the head, or a point source) is stepped by the distributed engine:
each rank steps its own piece of the grid (a 3D Cartesian decomposition with the fewest halo samples)
and outputs only that piece, with the whole extent known to all. The parallel writer then writes
one .vti file per rank and a .pvti that joins them, for each saved time step, without gathering the
field on one rank; the probe table (identical on every rank) is written once. Open the .pvti files
(or head-mpi.pvd) in ParaView, or render them distributed with `mpirun -np 4 pvserver`.

One rank (plain `pvbatch`) gives the same files with one piece; the fields are equal bit for bit
(testing/paraview/test_pvbatch_distributed.py checks it with 2 and 3 ranks).

Notes:
- `--analysis steady`: FDTD Steady State instead (dipole or plane wave at 900 MHz): E phasors, |E|,
  SAR and 1 g / 10 g averaged SAR per piece in steady.pvti; the summary (whole-body SAR, psSAR,
  powers, feed impedance) and the far-field table, reduced over the ranks, in summary.csv /
  far_field.csv (written once).
- `--materials arrays`: TissueProperties' property arrays (averaged at the material edges) instead
  of the labels: each piece keeps its neighbours' cells beside its cuts, so the result is the same.
- Files are written inline binary (DataMode 'Binary'): Debian 12's expat cannot read back VTK's
  default 'Appended' raw mode.
- The input is split by the pipeline: each rank asks HeadPhantom (and TissueProperties) only for
  the voxels of its piece, so no rank generates or holds the whole phantom; the extent each rank
  read is in its .vti piece's field data `input_extent`.
- GPU: `--backend cuda`; rank r uses device r modulo VEM_GPUS_PER_NODE (default 1: all on device 0).
"""
import argparse
import os
import sys
import time

from paraview.simple import *  # noqa: F401,F403
from vtkmodules.vtkParallelCore import vtkMultiProcessController

SIZES = {  # cubic voxel (m), phantom dimensions
    "quick": (0.0066, [40, 40, 26]),
    "demo": (0.004, [66, 66, 84]),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--plugin", default=None, help="VoxelEMPlugin.so (default: already loaded via PV_PLUGIN_PATH)")
    ap.add_argument("--out", default="head-mpi")
    ap.add_argument("--size", choices=sorted(SIZES), default="quick")
    ap.add_argument("--illumination", choices=["dipole", "point", "plane"], default="dipole")
    ap.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="cpu")
    ap.add_argument("--analysis", choices=["transient", "steady"], default="transient",
                    help="FDTD Solver (time series) or FDTD Steady State (phasors, SAR, psSAR, far field)")
    ap.add_argument("--materials", choices=["labels", "arrays"], default="labels",
                    help="labels + tissue table, or TissueProperties' property arrays")
    ap.add_argument("--fixed-steps", type=int, default=0,
                    help="steady state: this many steps (0: until the steady-state tolerance)")
    ap.add_argument("--steps", type=int, default=240)
    ap.add_argument("--snapshot-interval", type=int, default=80)
    args = ap.parse_args()
    if args.plugin:
        LoadPlugin(args.plugin, remote=False, ns=globals())
    ranks = vtkMultiProcessController.GetGlobalController().GetNumberOfProcesses()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    t0 = time.time()

    h, dims = SIZES[args.size]
    phantom = HeadPhantom(Dimensions=dims, Spacing=[h, h, h],
                          Origin=[-dims[0] * h / 2, -dims[1] * h / 2, -dims[2] * h / 2])
    steady = args.analysis == "steady"
    Filter = FDTDSteadyState if steady else FDTDSolver
    if args.materials == "labels":
        fdtd = Filter(Input=phantom, MaterialMode="Labels + tissue table")
    else:
        tissues = TissueProperties(Input=phantom, Frequency=900e6)
        fdtd = Filter(Input=tissues, MaterialMode="Property arrays")
    fdtd.Backend = {"auto": "Auto", "cpu": "CPU", "cuda": "CUDA"}[args.backend]
    # Room for the near-to-far box outside the dipole (steady) and the TF/SF box around the head.
    fdtd.AirPadding = 8 if steady or args.illumination == "plane" else 4
    fdtd.CPMLThickness = 6
    if steady:
        fdtd.DFTFrequencies = [900e6]
        fdtd.FixedSteps = args.fixed_steps
        fdtd.ComputeAveragedSAR = 1
        fdtd.FarFieldStep = 15.0
    else:
        fdtd.SourceFrequency = 900e6
        fdtd.NumberOfSteps = args.steps
        fdtd.SnapshotInterval = args.snapshot_interval
        fdtd.KeepH = 1
        fdtd.ProbePositions = [0.05, 0.0, 0.0]
    side = dims[0] * h / 2
    if args.illumination == "dipole":
        fdtd.Illumination = "Half-wave dipole"
        fdtd.DipoleCentre = [side + 0.01, 0.0, 0.0]
        fdtd.DipoleAxis = "z"
        fdtd.DipoleLength = 0.08
    elif args.illumination == "point":
        fdtd.Illumination = "Point source"
        fdtd.SourcePosition = [side + 0.01, 0.0, -0.01]
    else:
        fdtd.Illumination = "Plane wave"
    fdtd.UpdatePipelineInformation()
    if steady:
        writer = XMLPImageDataWriter(Input=fdtd, DataMode="Binary", FileName=os.path.join(out, "steady.pvti"))
        writer.UpdatePipeline()
        SaveData(os.path.join(out, "summary.csv"), proxy=OutputPort(fdtd, 1))
        SaveData(os.path.join(out, "far_field.csv"), proxy=OutputPort(fdtd, 2))
        fdtd.UpdatePropertyInformation()
        solves = fdtd.GetProperty("NumberOfSolves").GetElement(0)
        print("pvbatch_fdtd_head: %d rank(s), steady state -> %s (%.1f s, %d solve(s) on rank 0)"
              % (ranks, out, time.time() - t0, solves))
        return 0 if solves >= 1 else 1
    times = list(fdtd.TimestepValues)

    writer = XMLPImageDataWriter(Input=fdtd, DataMode="Binary")
    files = []
    for i, t in enumerate(times):
        writer.FileName = os.path.join(out, "fields_%03d.pvti" % i)
        writer.UpdatePipeline(t)
        files.append((t, os.path.basename(writer.FileName)))
    SaveData(os.path.join(out, "probes.csv"), proxy=OutputPort(fdtd, 1))
    with open(os.path.join(out, "head-mpi.pvd"), "w") as f:
        f.write('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1">\n  <Collection>\n')
        for t, name in files:
            f.write('    <DataSet timestep="%.9g" file="%s"/>\n' % (t, name))
        f.write("  </Collection>\n</VTKFile>\n")
    fdtd.UpdatePropertyInformation()
    solves = fdtd.GetProperty("NumberOfSolves").GetElement(0)
    print("pvbatch_fdtd_head: %d rank(s), %d snapshots -> %s (%.1f s, %d solve(s) on rank 0)"
          % (ranks, len(times), out, time.time() - t0, solves))
    return 0 if solves >= 1 else 1


if __name__ == "__main__":
    # (sys.exit(0) from pvbatch's rank 0 would cut the other ranks' shutdown short: only on failure.)
    if main() != 0:
        sys.exit(1)
