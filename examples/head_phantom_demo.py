#!/usr/bin/env pvpython
"""VoxelEM head-phantom demo: a 900 MHz dipole beside an anatomical head.

HeadPhantom -> TissueProperties (Gabriel 1996 tissues at 900 MHz) -> FDTDSolver (z-directed
electric dipole about 1.5 cm from the right ear, CW sinusoid with a smooth ramp), then:

  <out>/phantom.vti                 tissue labels, permittivity, conductivity, density
  <out>/fields.pvd, fields/*.vti    |E| (and E) at every snapshot: open the .pvd in ParaView
  <out>/probes.csv                  E at the source and at probes in the head, every step
  <out>/slice_Emag.png              |E| (log scale) on an axial slice through the source
  <out>/volume_Emag.png             volume rendering of |E| with the head surface
  <out>/frames/slice_NNNN.png       the slice at every snapshot (the transient)
  <out>/head_phantom_demo.pvsm      ParaView state reproducing the pipeline and views
  <out>/summary.json                sizes, time step, backend, speed, field statistics

Run it with pvpython (or pvbatch):
  pvpython --force-offscreen-rendering examples/head_phantom_demo.py --quick
  pvpython --force-offscreen-rendering examples/head_phantom_demo.py            # 128x128x64 voxels
  pvpython --force-offscreen-rendering examples/head_phantom_demo.py --backend cuda --size fine

The plugin is found from --plugin, $VOXELEM_PLUGIN, PV_PLUGIN_PATH (already loaded), or the usual
build and install folders.
"""
import argparse
import json
import math
import os
import sys
import time

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from voxelem_example_common import dark_render_view, find_plugin  # noqa: E402

SIZES = {
    # name: (voxels, spacing in m, steps, snapshot interval)
    "quick": ((64, 64, 32), (0.0044, 0.0044, 0.0056), 340, 20),
    "default": ((128, 128, 64), (0.0022, 0.0022, 0.0028), 1200, 50),
    "fine": ((256, 256, 128), (0.0011, 0.0011, 0.0014), 2400, 100),
}
PHANTOM_ORIGIN = (-0.1408, -0.1408, -0.095)   # frames the head (see head_phantom.h)
SOURCE = (0.100, 0.0, -0.010)                 # beside the right ear (ear surface at x = 0.085 m)


def robust_top(proxy, fallback):
    """99th percentile of E_magnitude: the colour range ignores the near field of the source."""
    try:
        import numpy as np
        from vtkmodules.util.numpy_support import vtk_to_numpy
        data = servermanager.Fetch(proxy)
        e = vtk_to_numpy(data.GetCellData().GetArray("E_magnitude"))
        top = float(np.percentile(e, 99.0))
        return top if top > 0 else max(fallback, 1e-30)
    except Exception:
        return max(fallback * 0.02, 1e-30)


def load_plugin(path, ns):
    if "FDTDSolver" in ns:  # autoloaded through PV_PLUGIN_PATH
        return "already loaded"
    plugin = find_plugin(path)
    if not plugin:
        sys.exit("VoxelEMPlugin.so not found: pass --plugin /path/to/VoxelEMPlugin.so, set VOXELEM_PLUGIN, "
                 "or set PV_PLUGIN_PATH to its folder")
    LoadPlugin(plugin, remote=False, ns=ns)
    return plugin


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small model (same as --size quick), under a minute on 2 CPU cores")
    ap.add_argument("--size", choices=sorted(SIZES), default="default", help="model size (default: 128x128x64 voxels)")
    ap.add_argument("--steps", type=int, help="number of time steps (default depends on --size)")
    ap.add_argument("--snapshot-interval", type=int, help="steps between snapshots")
    ap.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--device", type=int, default=0, help="CUDA device index")
    ap.add_argument("--frequency", type=float, default=900e6, help="source and tissue frequency, Hz")
    ap.add_argument("--out", default="head_demo_output", help="output folder")
    ap.add_argument("--plugin", help="path to VoxelEMPlugin.so")
    ap.add_argument("--no-vti", action="store_true", help="do not write the .pvd/.vti time series")
    ap.add_argument("--no-frames", action="store_true", help="do not write one PNG per snapshot")
    ap.add_argument("--resolution", type=int, nargs=2, default=[1000, 800], help="image size")
    args = ap.parse_args()
    if args.quick:
        args.size = "quick"

    ns = globals()
    plugin = load_plugin(args.plugin, ns)
    voxels, spacing, steps, interval = SIZES[args.size]
    steps = args.steps or steps
    interval = args.snapshot_interval or interval
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    t_start = time.time()

    # --- Pipeline -------------------------------------------------------------------------
    phantom = HeadPhantom(registrationName="HeadPhantom")
    phantom.Dimensions = list(voxels)
    phantom.Spacing = list(spacing)
    phantom.Origin = list(PHANTOM_ORIGIN)

    tissues = TissueProperties(registrationName="TissueProperties", Input=phantom)
    tissues.LabelArray = ["CELLS", "tissue"]
    tissues.Frequency = args.frequency

    fdtd = FDTDSolver(registrationName="FDTDSolver", Input=tissues)
    fdtd.PermittivityArray = ["CELLS", "permittivity"]
    fdtd.ConductivityArray = ["CELLS", "conductivity"]
    fdtd.Backend = {"auto": "Auto", "cpu": "CPU", "cuda": "CUDA"}[args.backend]
    fdtd.DeviceIndex = args.device
    fdtd.SourcePosition = list(SOURCE)
    fdtd.SourcePolarization = [0, 0, 1]
    fdtd.SourceWaveform = "Sinusoid (CW, smooth ramp)"
    fdtd.SourceFrequency = args.frequency
    fdtd.SourceAmplitude = 1.0
    fdtd.NumberOfSteps = steps
    fdtd.SnapshotInterval = interval
    fdtd.KeepE = 1
    fdtd.KeepEMagnitude = 1
    # Probes: inside the skin near the source, in the brain, and on the far side of the head.
    fdtd.ProbePositions = [0.070, 0.0, -0.010, 0.030, 0.0, 0.010, -0.070, 0.0, -0.010]

    t0 = time.time()
    fdtd.UpdatePipeline(fdtd.TimestepValues[-1])
    solve_seconds = time.time() - t0
    fdtd.UpdatePropertyInformation()
    times = list(fdtd.TimestepValues)
    dt = fdtd.GetProperty("TimeStep").GetElement(0)
    backend = "?"
    try:  # builtin session: read the backend name from the output's field data
        out0 = fdtd.GetClientSideObject().GetOutputDataObject(0)
        backend = out0.GetFieldData().GetAbstractArray("backend").GetValue(0)
    except Exception:
        pass
    emag_range = fdtd.CellData["E_magnitude"].GetRange()
    ncells = fdtd.GetDataInformation().GetNumberOfCells()
    print(f"plugin: {plugin}")
    print(f"model: {voxels[0]}x{voxels[1]}x{voxels[2]} voxels of {spacing[0]*1e3:.2f}x{spacing[1]*1e3:.2f}x"
          f"{spacing[2]*1e3:.2f} mm; output grid {ncells} cells; dt = {dt*1e12:.3f} ps; {steps} steps "
          f"= {steps*dt*1e9:.2f} ns; {len(times)} snapshots; backend {backend}")
    print(f"solve: {solve_seconds:.1f} s; final |E| range {emag_range[0]:.3g} .. {emag_range[1]:.3g} V/m")

    # --- Data files -------------------------------------------------------------------------
    # Inline binary (not "appended"): Debian 12's expat cannot read ParaView 5.11's appended data.
    SaveData(os.path.join(out, "phantom.vti"), proxy=tissues, DataMode="Binary", CompressorType="ZLib")
    SaveData(os.path.join(out, "probes.csv"), proxy=OutputPort(fdtd, 1), FieldAssociation="Row Data")
    if not args.no_vti:
        fields_dir = os.path.join(out, "fields")
        os.makedirs(fields_dir, exist_ok=True)
        keep = PassArrays(registrationName="FieldsToSave", Input=fdtd)
        keep.CellDataArrays = ["E_magnitude", "E", "permittivity"]
        keep.PointDataArrays = []
        keep.FieldDataArrays = ["time_E", "step"]
        SaveData(os.path.join(out, "fields.pvd"), proxy=keep, WriteTimeSteps=1, DataMode="Binary",
                 CompressorType="ZLib")
        # PVD writer puts the .vti files next to the .pvd in a folder of the same name.
        Delete(keep)

    # --- Views --------------------------------------------------------------------------------
    view = dark_render_view(args.resolution)
    scene = GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    scene.AnimationTime = times[-1]

    # Colours are mapped linearly: show log10 |E| over 3 decades below the 99th percentile.
    top = robust_top(fdtd, emag_range[1])
    lt = math.log10(top)
    logE = Calculator(registrationName="Log10E", Input=fdtd)
    logE.AttributeType = "Cell Data"
    logE.ResultArrayName = "log10_E"
    logE.Function = "log10(max(E_magnitude, 1e-30))"
    slice_ = Slice(registrationName="AxialSlice", Input=logE)
    slice_.SliceType = "Plane"
    slice_.SliceType.Origin = [0.0, 0.0, SOURCE[2]]
    slice_.SliceType.Normal = [0.0, 0.0, 1.0]
    sd = Show(slice_, view)
    ColorBy(sd, ("CELLS", "log10_E"))
    lut = GetColorTransferFunction("log10_E")
    lut.ApplyPreset("Inferno (matplotlib)", True)
    lut.AutomaticRescaleRangeMode = "Never"
    lut.RescaleTransferFunction(lt - 3.0, lt)
    sd.SetScalarBarVisibility(view, True)
    bar = GetScalarBar(lut, view)
    bar.Title = "log10 E magnitude (V/m)"
    bar.ComponentTitle = ""

    # Tissue boundaries on the slice: contours of the permittivity.
    outline_src = Slice(registrationName="TissueSlice", Input=tissues)
    outline_src.SliceType.Origin = [0.0, 0.0, SOURCE[2]]
    outline_src.SliceType.Normal = [0.0, 0.0, 1.0]
    c2p = CellDatatoPointData(registrationName="TissueSlicePoints", Input=outline_src)
    contour = Contour(registrationName="TissueBoundaries", Input=c2p)
    contour.ContourBy = ["POINTS", "permittivity"]
    contour.Isosurfaces = [3.0, 9.0, 30.0, 45.0, 60.0]
    cd = Show(contour, view)
    ColorBy(cd, None)
    cd.AmbientColor = cd.DiffuseColor = [0.8, 0.9, 1.0]
    cd.LineWidth = 1.5
    cd.Opacity = 0.6

    text = Text(registrationName="Title")
    text.Text = ("VoxelEM: %.0f MHz dipole beside the head phantom - E-field magnitude, axial plane of the source"
                 % (args.frequency / 1e6))
    td = Show(text, view)
    td.FontSize = 14
    td.WindowLocation = "Upper Center"
    annot = AnnotateTimeFilter(registrationName="Time", Input=fdtd)
    annot.Format = "t = {time:.3e} s"
    ad = Show(annot, view)
    ad.WindowLocation = "Lower Left Corner"
    ad.FontSize = 14

    view.CameraPosition = [0.0, 0.0, 0.75]
    view.CameraFocalPoint = [0.0, 0.0, SOURCE[2]]
    view.CameraViewUp = [0.0, 1.0, 0.0]
    view.CameraParallelProjection = 0
    ResetCamera(view)
    view.CameraPosition = [0.0, -0.08, 0.55]
    view.CameraFocalPoint = [0.0, 0.0, SOURCE[2]]
    view.CameraViewUp = [0.0, 1.0, 0.0]
    Render(view)
    slice_png = os.path.join(out, "slice_Emag.png")
    SaveScreenshot(slice_png, view, ImageResolution=list(args.resolution))

    if not args.no_frames:
        frames = os.path.join(out, "frames")
        os.makedirs(frames, exist_ok=True)
        for i, t in enumerate(times):
            scene.AnimationTime = t
            Render(view)
            SaveScreenshot(os.path.join(frames, f"slice_{i:04d}.png"), view,
                           ImageResolution=[args.resolution[0] // 2, args.resolution[1] // 2])
        scene.AnimationTime = times[-1]
    algo_solves = fdtd.GetProperty("NumberOfSolves")
    fdtd.UpdatePropertyInformation()
    solves = algo_solves.GetElement(0)

    # Volume rendering of |E| with the head's skin surface.
    Hide(slice_, view)
    Hide(contour, view)
    # Volume rendering of log10 |E| over the top 2 decades.
    vd = Show(logE, view)
    ColorBy(vd, ("CELLS", "log10_E"))
    vd.SetRepresentationType("Volume")
    lut.RescaleTransferFunction(lt - 3.0, lt)  # showing the volume rescaled it to the data range
    vpwf = GetOpacityTransferFunction("log10_E")
    vpwf.Points = [lt - 3.0, 0.0, 0.5, 0.0, lt - 1.5, 0.0, 0.5, 0.0, lt - 0.5, 0.05, 0.5, 0.0,
                   lt, 0.3, 0.5, 0.0, lt + 3.0, 0.6, 0.5, 0.0]
    vd.ScalarOpacityUnitDistance = 3.0 * max(spacing)
    vd.SetScalarBarVisibility(view, True)
    lut.RescaleTransferFunction(lt - 3.0, lt)
    skin_pts = CellDatatoPointData(registrationName="PhantomPoints", Input=tissues)
    skin = Contour(registrationName="HeadSurface", Input=skin_pts)
    skin.ContourBy = ["POINTS", "permittivity"]
    skin.Isosurfaces = [2.0]
    kd = Show(skin, view)
    ColorBy(kd, None)
    kd.DiffuseColor = [0.85, 0.75, 0.65]
    kd.Opacity = 0.25
    view.CameraPosition = [0.55, 0.45, 0.30]
    view.CameraFocalPoint = [0.0, 0.0, -0.005]
    view.CameraViewUp = [0.0, 0.0, 1.0]
    text.Text = ("VoxelEM: %.0f MHz dipole beside the head phantom - volume rendering of log10 |E|, head surface"
                 % (args.frequency / 1e6))
    ResetCamera(view)
    Render(view)
    volume_png = os.path.join(out, "volume_Emag.png")
    SaveScreenshot(volume_png, view, ImageResolution=list(args.resolution))

    # Back to the slice view for the saved state.
    Hide(logE, view)
    Hide(skin, view)
    Show(slice_, view)
    Show(contour, view)
    SaveState(os.path.join(out, "head_phantom_demo.pvsm"))

    summary = {
        "size": args.size,
        "voxels": list(voxels),
        "spacing_m": list(spacing),
        "output_cells": ncells,
        "time_step_s": dt,
        "steps": steps,
        "snapshots": len(times),
        "backend": backend,
        "solve_seconds": solve_seconds,
        "number_of_solves": solves,
        "final_Emag_range_V_per_m": list(emag_range),
        "total_seconds": time.time() - t_start,
        "plugin": plugin,
    }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2, default=str)
    print(f"wrote {out}: phantom.vti, probes.csv, {'fields.pvd, ' if not args.no_vti else ''}"
          f"slice_Emag.png, volume_Emag.png, head_phantom_demo.pvsm, summary.json "
          f"({time.time() - t_start:.1f} s in all; {solves} solve(s))")
    if not (math.isfinite(emag_range[1]) and emag_range[1] > 0):
        sys.exit("the field is zero or not finite")


if __name__ == "__main__":
    main()
