#!/usr/bin/env pvpython
"""VoxelEM dosimetry example: a 900 MHz half-wave dipole (the classic mobile-phone case) beside the
head phantom, SAR normalized to 1 W accepted power.

HeadPhantom (cubic voxels, as the 1 g / 10 g averaging needs) -> TissueProperties (Gabriel 1996
tissues at 900 MHz: permittivity, conductivity, density) -> FDTDSteadyState (the FDTD Steady State
filter, Illumination = 'Half-wave dipole'): a vertical dipole (along z, the head's long axis) 1.5 cm
from the side of the head at ear height, run until the 900 MHz phasors stop changing, normalized to
1 W accepted power. Then:

  <out>/sar.vti                   SAR, SAR_1g, SAR_10g (W/kg), E_magnitude, tissue, density
                                  (inline binary, readable by Debian 12's ParaView)
  <out>/sar_slice_axial.png       log10 local SAR on the axial plane of the feed
  <out>/sar_slice_coronal.png     log10 local SAR on the vertical plane through the dipole
  <out>/sar_volume.png            volume rendering of log10 SAR with the head surface
  <out>/summary.csv               the solver's summary table (output 1)
  <out>/far_field.csv             gain of the dipole beside the head (output 2)
  <out>/dosimetry.json            whole-head SAR, psSAR1g, psSAR10g and their locations, powers,
                                  feed impedance, steps, convergence, backend, times

  pvpython --force-offscreen-rendering examples/fdtd_phone_dosimetry.py --quick --backend cpu
  pvpython --force-offscreen-rendering examples/fdtd_phone_dosimetry.py --backend cuda       # 2 mm
  pvpython --force-offscreen-rendering examples/fdtd_phone_dosimetry.py --size fine --backend cuda

The plugin is found from --plugin, $VOXELEM_PLUGIN, PV_PLUGIN_PATH (already loaded), or the usual
build and install folders. Rendering needs an X display (xvfb-run -a on a headless machine);
--no-render skips the PNGs.
"""
import argparse
import csv
import json
import math
import os
import sys
import time

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager

import numpy as np
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import vtk_to_numpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from voxelem_example_common import dark_render_view, find_plugin  # noqa: E402

# name: (cubic voxel size m, air padding cells, CPML cells)
SIZES = {
    "quick": (0.005, 4, 8),
    "default": (0.002, 8, 10),
    "fine": (0.001, 12, 12),
}
FRAME_LO = (-0.1408, -0.1408, -0.095)  # the Head Phantom's default framing (head_phantom.h)
FRAME_HI = (0.1408, 0.1408, 0.084)
FREQUENCY = 900e6
GAP = 0.015       # dipole to the side of the head, m
FEED_Z = -0.010   # feed height (about the ear canal), m


def head_side_x(phantom, y_half_width=0.01):
    """Largest x of any tissue voxel centre within |y| < y_half_width (the side of the head, ear included)."""
    img = servermanager.Fetch(phantom)
    lab = vtk_to_numpy(img.GetCellData().GetArray("tissue"))
    dims = [img.GetDimensions()[a] - 1 for a in range(3)]
    o, h = img.GetOrigin(), img.GetSpacing()
    lab = lab.reshape(dims[2], dims[1], dims[0])
    x = o[0] + (np.arange(dims[0]) + 0.5) * h[0]
    y = o[1] + (np.arange(dims[1]) + 0.5) * h[1]
    band = np.abs(y) < max(y_half_width, h[1])
    tissue = (lab[:, band, :] > 0).any(axis=(0, 1))
    return float(x[tissue].max()) + 0.5 * h[0]


def log_sar(source, floor):
    calc = Calculator(registrationName="Log10SAR", Input=source)
    calc.AttributeType = "Cell Data"
    calc.ResultArrayName = "log10_SAR"
    calc.Function = f"log10(max(SAR, {floor:g}))"
    return calc


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="5 mm voxels (same as --size quick): about a minute on 2 CPU cores")
    ap.add_argument("--size", choices=sorted(SIZES), default="default", help="voxel size: quick 5 mm, default 2 mm, fine 1 mm")
    ap.add_argument("--backend", choices=["auto", "cpu", "cuda"], default="auto")
    ap.add_argument("--device", type=int, default=0, help="CUDA device index")
    ap.add_argument("--tolerance", type=float, default=1e-3, help="steady-state tolerance (relative change)")
    ap.add_argument("--out", default="phone_dosimetry_output", help="output folder")
    ap.add_argument("--plugin", help="path to VoxelEMPlugin.so")
    ap.add_argument("--no-render", action="store_true", help="do not write the PNG renderings")
    ap.add_argument("--resolution", type=int, nargs=2, default=[1000, 800], help="image size")
    args = ap.parse_args()
    if args.quick:
        args.size = "quick"
    if "FDTDSteadyState" not in globals():
        plugin = find_plugin(args.plugin)
        if not plugin:
            sys.exit("VoxelEMPlugin.so not found: give --plugin, set VOXELEM_PLUGIN or PV_PLUGIN_PATH")
        LoadPlugin(plugin, remote=False, ns=globals())
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    t_start = time.time()

    # --- Pipeline ------------------------------------------------------------------------------
    h, pad, pml = SIZES[args.size]
    dims = [int(round((FRAME_HI[a] - FRAME_LO[a]) / h)) for a in range(3)]
    phantom = HeadPhantom(registrationName="HeadPhantom", Dimensions=dims, Spacing=[h, h, h], Origin=list(FRAME_LO))
    tissues = TissueProperties(registrationName="TissueProperties", Input=phantom)
    tissues.LabelArray = ["CELLS", "tissue"]
    tissues.Frequency = FREQUENCY
    side = head_side_x(phantom)
    centre = [side + GAP, 0.0, FEED_Z]

    fdtd = FDTDSteadyState(registrationName="FDTDSteadyState", Input=tissues)
    fdtd.MaterialMode = "Property arrays"
    fdtd.PermittivityArray = ["CELLS", "permittivity"]
    fdtd.ConductivityArray = ["CELLS", "conductivity"]
    fdtd.DensityArray = ["CELLS", "density"]
    fdtd.Illumination = "Half-wave dipole"
    fdtd.DFTFrequencies = [FREQUENCY]
    fdtd.DipoleCentre = centre
    fdtd.DipoleAxis = "z"
    fdtd.DipoleLength = 0.0          # half a free-space wavelength, 16.7 cm
    fdtd.AcceptedPower = 1.0         # W
    fdtd.SteadyStateTolerance = args.tolerance
    fdtd.ComputeAveragedSAR = 1
    fdtd.FarFieldStep = 2.0
    fdtd.AirPadding = pad
    fdtd.CPMLThickness = pml
    fdtd.Backend = {"auto": "Auto", "cpu": "CPU", "cuda": "CUDA"}[args.backend]
    fdtd.DeviceIndex = args.device
    fdtd.ProgressInterval = 100
    print(f"model: {dims[0]}x{dims[1]}x{dims[2]} voxels of {h * 1e3:.1f} mm; head side at x = {side * 1e3:.1f} mm; "
          f"dipole feed at ({centre[0] * 1e3:.1f}, {centre[1] * 1e3:.1f}, {centre[2] * 1e3:.1f}) mm")
    sys.stdout.flush()

    t0 = time.time()
    fdtd.UpdatePipeline()
    solve_seconds = time.time() - t0
    fields = OutputPort(fdtd, 0)
    img = servermanager.Fetch(fdtd, idx=0)
    if img.GetNumberOfCells() == 0:
        sys.exit("FDTD Steady State produced no output (see the errors above)")
    d = dsa.WrapDataObject(img)
    fd = d.FieldData
    sar = np.asarray(d.CellData["SAR"])
    summary_t = servermanager.Fetch(fdtd, idx=1)
    summary = {summary_t.GetColumnName(c): float(summary_t.GetColumn(c).GetTuple1(0))
               for c in range(summary_t.GetNumberOfColumns())}

    def fin(v):
        return None if v is None or not math.isfinite(v) else v

    result = {
        "frequency_Hz": FREQUENCY,
        "size": args.size,
        "voxel_mm": h * 1e3,
        "voxels": dims,
        "grid_cells_with_padding_and_cpml": int(np.prod([n + 2 * (pad + pml) for n in dims])),
        "dipole_feed_m": centre,
        "dipole_axis": "z",
        "accepted_power_W": summary["accepted_power_W"],
        "whole_head_SAR_W_per_kg": summary["whole_body_SAR_W_per_kg"],
        "peak_local_SAR_W_per_kg": summary["peak_local_SAR_W_per_kg"],
        "psSAR1g_W_per_kg": fin(summary["psSAR1g_W_per_kg"]),
        "psSAR1g_location_m": [fin(summary[f"psSAR1g_{a}_m"]) for a in "xyz"],
        "psSAR10g_W_per_kg": fin(summary["psSAR10g_W_per_kg"]),
        "psSAR10g_location_m": [fin(summary[f"psSAR10g_{a}_m"]) for a in "xyz"],
        "absorbed_power_W": summary["absorbed_power_W"],
        "radiated_power_W": fin(summary["radiated_power_W"]),
        "feed_impedance_ohm": [summary["feed_impedance_real_ohm"], summary["feed_impedance_imag_ohm"]],
        "steps": int(summary["steps"]),
        "converged": bool(summary["converged"]),
        "relative_change": float(fd["relative_change"][0]),
        "time_step_s": float(fd["time_step_dt"][0]),
        "dft_sample_interval": int(fd["dft_sample_interval"][0]),
        "backend": img.GetFieldData().GetAbstractArray("backend").GetValue(0),
        "solve_seconds": solve_seconds,
    }
    print(f"solve: {solve_seconds:.1f} s on {result['backend']}, {result['steps']} steps, "
          f"converged {result['converged']} (relative change {result['relative_change']:.2e})")
    print(f"normalized to {result['accepted_power_W']:.3f} W accepted: feed impedance "
          f"{result['feed_impedance_ohm'][0]:.1f} {result['feed_impedance_ohm'][1]:+.1f}j ohm, "
          f"{result['absorbed_power_W']:.3f} W absorbed in the head")
    print(f"whole-head SAR   {result['whole_head_SAR_W_per_kg']:.4f} W/kg")
    print(f"peak local SAR   {result['peak_local_SAR_W_per_kg']:.3f} W/kg")
    for m in ("1g", "10g"):
        v, loc = result[f"psSAR{m}_W_per_kg"], result[f"psSAR{m}_location_m"]
        where = "n/a" if v is None else "(" + ", ".join(f"{x * 1e3:.1f}" for x in loc) + ") mm"
        print(f"psSAR{m:<4s}       {'n/a' if v is None else f'{v:.3f}'} W/kg at {where}")
    sys.stdout.flush()

    # --- Data files ------------------------------------------------------------------------------
    # Inline binary (not "appended"): Debian 12's expat cannot read ParaView 5.11's appended data.
    keep = PassArrays(registrationName="SARToSave", Input=fields)
    keep.CellDataArrays = ["SAR", "SAR_1g", "SAR_10g", "E_magnitude", "tissue", "density", "conductivity"]
    keep.PointDataArrays = []
    SaveData(os.path.join(out, "sar.vti"), proxy=keep, DataMode="Binary", CompressorType="ZLib")
    SaveData(os.path.join(out, "summary.csv"), proxy=OutputPort(fdtd, 1), FieldAssociation="Row Data")
    SaveData(os.path.join(out, "far_field.csv"), proxy=OutputPort(fdtd, 2), FieldAssociation="Row Data")

    # --- Renderings ------------------------------------------------------------------------------
    if not args.no_render:
        # Colours over 3 decades below the 99.9th percentile of the tissue SAR (single voxels at
        # the ear would otherwise set the scale).
        top = float(np.log10(max(np.percentile(sar[sar > 0], 99.9), 1e-30))) if np.any(sar > 0) else 0.0
        lo = top - 3.0
        logS = log_sar(fields, 10 ** (lo - 1))
        view = dark_render_view(args.resolution)
        lut = GetColorTransferFunction("log10_SAR")
        lut.ApplyPreset("Inferno (matplotlib)", True)
        lut.AutomaticRescaleRangeMode = "Never"
        half = 0.5 * 299792458.0 / FREQUENCY / 2.0
        wire = Line(registrationName="Dipole", Point1=[centre[0], centre[1], centre[2] - half],
                    Point2=[centre[0], centre[1], centre[2] + half])
        wd = Show(wire, view)
        wd.ColorArrayName = ["POINTS", ""]
        wd.AmbientColor = wd.DiffuseColor = [0.3, 0.9, 1.0]
        wd.LineWidth = 4.0
        title = Text(registrationName="Title")
        td = Show(title, view)
        td.FontSize = 14
        td.WindowLocation = "Upper Center"

        def slice_png(name, origin, normal, cam_pos, view_up, text):
            sl = Slice(registrationName=name, Input=logS)
            sl.SliceType = "Plane"
            sl.SliceType.Origin = origin
            sl.SliceType.Normal = normal
            sd = Show(sl, view)
            ColorBy(sd, ("CELLS", "log10_SAR"))
            lut.RescaleTransferFunction(lo, top)
            sd.SetScalarBarVisibility(view, True)
            bar = GetScalarBar(lut, view)
            bar.Title = "log10 SAR (W/kg), 1 W accepted"
            bar.ComponentTitle = ""
            # Tissue outlines on the slice.
            ts = Slice(registrationName=name + "Tissue", Input=tissues)
            ts.SliceType.Origin = origin
            ts.SliceType.Normal = normal
            c2p = CellDatatoPointData(Input=ts)
            cont = Contour(Input=c2p)
            cont.ContourBy = ["POINTS", "permittivity"]
            cont.Isosurfaces = [3.0, 9.0, 30.0, 45.0, 60.0]
            cd = Show(cont, view)
            ColorBy(cd, None)
            cd.AmbientColor = cd.DiffuseColor = [0.8, 0.9, 1.0]
            cd.Opacity = 0.5
            title.Text = text
            view.CameraPosition = cam_pos
            view.CameraFocalPoint = [0.0, 0.0, origin[2]]
            view.CameraViewUp = view_up
            ResetCamera(view)
            Render(view)
            SaveScreenshot(os.path.join(out, name.lower() + ".png"), view, ImageResolution=list(args.resolution))
            Hide(sl, view)
            Hide(cont, view)

        slice_png("SAR_slice_axial", [0.0, 0.0, centre[2]], [0.0, 0.0, 1.0], [0.0, 0.0, 0.8], [0.0, 1.0, 0.0],
                  "900 MHz dipole (cyan), 1 W accepted: local SAR on the axial plane of the feed")
        slice_png("SAR_slice_coronal", [0.0, 0.0, centre[2]], [0.0, 1.0, 0.0], [0.0, -0.8, centre[2]], [0.0, 0.0, 1.0],
                  "900 MHz dipole (cyan), 1 W accepted: local SAR on the vertical plane through the dipole")
        vd = Show(logS, view)
        ColorBy(vd, ("CELLS", "log10_SAR"))
        vd.SetRepresentationType("Volume")
        lut.RescaleTransferFunction(lo, top)
        pwf = GetOpacityTransferFunction("log10_SAR")
        pwf.Points = [lo, 0.0, 0.5, 0.0, top - 2.0, 0.0, 0.5, 0.0, top - 1.0, 0.15, 0.5, 0.0,
                      top, 0.8, 0.5, 0.0]
        vd.ScalarOpacityUnitDistance = 3.0 * h
        vd.SetScalarBarVisibility(view, True)
        skin_pts = CellDatatoPointData(Input=tissues)
        skin = Contour(Input=skin_pts)
        skin.ContourBy = ["POINTS", "permittivity"]
        skin.Isosurfaces = [2.0]
        kd = Show(skin, view)
        ColorBy(kd, None)
        kd.DiffuseColor = [0.85, 0.75, 0.65]
        kd.Opacity = 0.2
        title.Text = "900 MHz dipole, 1 W accepted: volume rendering of log10 SAR (top 2 decades), head surface"
        view.CameraPosition = [0.6, -0.45, 0.25]
        view.CameraFocalPoint = [0.02, 0.0, -0.01]
        view.CameraViewUp = [0.0, 0.0, 1.0]
        ResetCamera(view)
        Render(view)
        SaveScreenshot(os.path.join(out, "sar_volume.png"), view, ImageResolution=list(args.resolution))
        Delete(view)  # before interpreter shutdown: a view left to it ends in an X error under xvfb
        del view

    result["total_seconds"] = time.time() - t_start
    with open(os.path.join(out, "dosimetry.json"), "w") as f:
        json.dump(result, f, indent=2)
    with open(os.path.join(out, "dosimetry.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["quantity", "value", "unit"])
        w.writerow(["whole_head_SAR", result["whole_head_SAR_W_per_kg"], "W/kg"])
        w.writerow(["psSAR1g", result["psSAR1g_W_per_kg"], "W/kg"])
        w.writerow(["psSAR1g_x", result["psSAR1g_location_m"][0], "m"])
        w.writerow(["psSAR1g_y", result["psSAR1g_location_m"][1], "m"])
        w.writerow(["psSAR1g_z", result["psSAR1g_location_m"][2], "m"])
        w.writerow(["psSAR10g", result["psSAR10g_W_per_kg"], "W/kg"])
        w.writerow(["psSAR10g_x", result["psSAR10g_location_m"][0], "m"])
        w.writerow(["psSAR10g_y", result["psSAR10g_location_m"][1], "m"])
        w.writerow(["psSAR10g_z", result["psSAR10g_location_m"][2], "m"])
        w.writerow(["accepted_power", result["accepted_power_W"], "W"])
        w.writerow(["absorbed_power", result["absorbed_power_W"], "W"])
    print(f"wrote {out}: sar.vti, summary.csv, far_field.csv, dosimetry.json, dosimetry.csv"
          f"{'' if args.no_render else ', sar_slice_axial.png, sar_slice_coronal.png, sar_volume.png'} "
          f"({result['total_seconds']:.1f} s in all)")
    ok = (result["converged"] and math.isfinite(result["whole_head_SAR_W_per_kg"])
          and result["whole_head_SAR_W_per_kg"] > 0 and result["psSAR10g_W_per_kg"] is not None)
    if not ok:
        sys.exit("no complete result: not converged, or no finite SAR (see above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
