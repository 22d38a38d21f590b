"""pvpython test of the FDTD Steady State filter (vtkVEMFDTDSteadyState, pvpython FDTDSteadyState)
on the CPU, through paraview.simple with the properties' pvpython names.

0. The split of the FDTD filters: FDTDSteadyState has the outputs 'Steady-state fields', 'Summary'
   and 'Far field' and the steady-state properties but none of the transient ones; FDTDSolver
   (transient) has the outputs 'Fields' and 'Probes' and none of the steady-state properties.
1. A lossy block (property arrays with a density) lit by a plane wave at 1 GHz: no time steps,
   output 0 'Steady-state fields' (E_real / E_imag / E_magnitude / SAR / SAR_1g / SAR_10g and the
   materials, read with servermanager.Fetch and numpy dsa), SAR finite and > 0 in the tissue and
   0 in air, the field data equal to output 1 'Summary', output 2 'Far field' with the FDFD
   Solver's RCS columns from 0 to 180 degrees.
2. The same with two DFT frequencies: suffixed array names, two summary rows, a frequency_Hz
   column in the far field.
3. A half-wave dipole beside a coarse Head Phantom (labels + tissue table): normalized to the
   accepted power, gain columns, tissue and density arrays.
4. The transient FDTDSolver on the same input: a time series on output 0.
5. An error (no DFT frequency): every output empty, no crash, an error that starts with
   'FDTD Steady State:' and names DFTFrequencies.

  pvpython test_fdtd_steady_pipeline.py --plugin VoxelEMPlugin.so
"""
import argparse
import math
import sys

from paraview.simple import *  # noqa: F401,F403
from paraview import servermanager

import numpy as np
from vtkmodules.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.misc import calldata_type
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.util.vtkConstants import VTK_STRING
from vtkmodules.vtkCommonDataModel import vtkImageData
from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline

failures = []


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what)
    sys.stdout.flush()
    if not cond:
        failures.append(what)


def block_image(n, b, h, eps, sigma, rho):
    img = vtkImageData()
    img.SetDimensions(n + 1, n + 1, n + 1)
    img.SetSpacing(h, h, h)
    img.SetOrigin(-0.5 * n * h, -0.5 * n * h, -0.5 * n * h)
    idx = np.arange(n)
    k, j, i = np.meshgrid(idx, idx, idx, indexing="ij")  # x fastest after ravel
    lo, hi = (n - b) // 2, (n - b) // 2 + b
    inside = ((i >= lo) & (i < hi) & (j >= lo) & (j < hi) & (k >= lo) & (k < hi)).ravel()
    for name, v in (("permittivity", np.where(inside, eps, 1.0)),
                    ("conductivity", np.where(inside, sigma, 0.0)),
                    ("density", np.where(inside, rho, 0.0))):
        a = numpy_to_vtk(np.ascontiguousarray(v, dtype=np.float32), deep=1)
        a.SetName(name)
        img.GetCellData().AddArray(a)
    return img


def table_columns(t):
    return {t.GetColumnName(c): vtk_to_numpy(t.GetColumn(c)) for c in range(t.GetNumberOfColumns())}


def output_ports(proxy):
    sm = proxy.SMProxy
    return [sm.GetOutputPortName(q) for q in range(sm.GetNumberOfOutputPorts())]


def has_time_steps(proxy):
    info = proxy.GetClientSideObject().GetOutputInformation(0)
    return info.Has(vtkStreamingDemandDrivenPipeline.TIME_STEPS()) and \
        info.Length(vtkStreamingDemandDrivenPipeline.TIME_STEPS()) > 0


STEADY_ONLY = ["AcceptedPower", "DFTFrequencies", "SteadyStateTolerance", "MaxSteps", "FixedSteps",
               "DFTSampleInterval", "FarFieldStep", "ComputeAveragedSAR", "DensityArray"]
TRANSIENT_ONLY = ["SourceWaveform", "SourceFrequency", "SourceBandwidth", "StopMode", "NumberOfSteps",
                  "SimulatedTime", "SnapshotInterval", "KeepE", "KeepH", "KeepEMagnitude", "KeepMaterials",
                  "MemoryBudgetMB", "SpillToDisk", "SpillDirectory", "ProbePositions", "ProbeAtSource"]
SHARED = ["MaterialMode", "AirPadding", "CPMLThickness", "CourantFactor", "Backend", "Illumination",
          "IncidentTheta", "IncidentPhi", "Polarization", "IncidentAmplitude", "DipoleCentre", "DipoleAxis",
          "DipoleLength", "FeedCurrent", "SourceType", "SourcePosition", "SourcePolarization",
          "SourceAmplitude", "TissueFrequency", "XLowBoundary", "ZHighBoundary"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    args = ap.parse_args()
    LoadPlugin(args.plugin, remote=False, ns=globals())
    check("FDTDSteadyState" in globals(), "pvpython name FDTDSteadyState exists")
    check("FDTDSolver" in globals(), "pvpython name FDTDSolver exists")

    # --- 0. Two filters: outputs and properties. ----------------------------------------------
    n, b, h = 12, 6, 0.005
    src = TrivialProducer()
    src.GetClientSideObject().SetOutput(block_image(n, b, h, 40.0, 0.8, 1000.0))
    fdtd = FDTDSteadyState(Input=src)
    transient = FDTDSolver(Input=src)
    check(fdtd.SMProxy.GetXMLLabel() == "FDTD Steady State", f"label '{fdtd.SMProxy.GetXMLLabel()}'")
    check(output_ports(fdtd) == ["Steady-state fields", "Summary", "Far field"],
          f"FDTDSteadyState outputs {output_ports(fdtd)}")
    check(output_ports(transient) == ["Fields", "Probes"], f"FDTDSolver outputs {output_ports(transient)}")
    props = lambda p: set(p.ListProperties())
    check(set(STEADY_ONLY + SHARED) <= props(fdtd),
          f"FDTDSteadyState has the steady-state and shared properties {sorted(set(STEADY_ONLY + SHARED) - props(fdtd))}")
    check(not (set(TRANSIENT_ONLY) & props(fdtd)),
          f"FDTDSteadyState has no transient property {sorted(set(TRANSIENT_ONLY) & props(fdtd))}")
    check(set(TRANSIENT_ONLY + SHARED) <= props(transient),
          f"FDTDSolver has the transient and shared properties {sorted(set(TRANSIENT_ONLY + SHARED) - props(transient))}")
    check(not (set(STEADY_ONLY) & props(transient)),
          f"FDTDSolver has no steady-state property {sorted(set(STEADY_ONLY) & props(transient))}")
    check("Analysis" not in props(fdtd) | props(transient), "no Analysis property left")
    Delete(transient)
    del transient

    # --- 1. Lossy block, plane wave, one frequency. -------------------------------------------
    check(list(fdtd.DFTFrequencies) == [900e6], f"DFTFrequencies default [900e6] ({list(fdtd.DFTFrequencies)})")
    fdtd.Illumination = "Plane wave"
    fdtd.DFTFrequencies = [1e9]
    fdtd.IncidentTheta = 0.0
    fdtd.IncidentPhi = 0.0
    fdtd.Polarization = 0.0
    fdtd.IncidentAmplitude = 1.0
    fdtd.SteadyStateTolerance = 1e-3
    fdtd.FarFieldStep = 2.0
    fdtd.ComputeAveragedSAR = 1
    fdtd.DensityArray = ["CELLS", "density"]
    fdtd.AirPadding = 8
    fdtd.CPMLThickness = 6
    fdtd.Backend = "CPU"
    fdtd.ProgressInterval = 50
    fdtd.UpdatePipeline()
    fdtd.UpdatePipelineInformation()
    check(not has_time_steps(fdtd), "no time steps in the steady state")
    img = servermanager.Fetch(fdtd, idx=0)
    m = n + 16
    check(img.GetNumberOfCells() == m ** 3, f"output 0 has (voxels + 2 x padding)^3 = {m}^3 cells")
    d = dsa.WrapDataObject(img)
    names = set(d.CellData.keys())
    want = {"E_real", "E_imag", "E_magnitude", "SAR", "SAR_1g", "SAR_10g", "permittivity", "conductivity", "density"}
    check(want <= names, f"output 0 arrays {sorted(want - names) or 'all present'}")
    if want <= names:
        check(d.CellData["E_real"].shape == (m ** 3, 3), "E_real has 3 components")
        sar = np.asarray(d.CellData["SAR"])
        rho = np.asarray(d.CellData["density"])
        tissue = rho > 0
        check(int(tissue.sum()) == b ** 3, f"{b ** 3} tissue voxels in 'density'")
        check(np.all(np.isfinite(sar)) and np.all(sar[tissue] > 0), f"SAR finite and > 0 in tissue (max {sar.max():.3g} W/kg)")
        check(np.all(sar[~tissue] == 0) and np.all(np.asarray(d.CellData["SAR_10g"])[~tissue] == 0), "SAR 0 in air")
        fd = d.FieldData
        wb = float(fd["whole_body_SAR_W_per_kg"][0])
        check(abs(wb - sar[tissue].mean()) <= 1e-4 * wb, f"whole-body SAR {wb:.4g} W/kg = mean local SAR (uniform density)")
        summary = table_columns(servermanager.Fetch(fdtd, idx=1))
        check(len(summary.get("frequency_Hz", [])) == 1 and summary["frequency_Hz"][0] == 1e9, "summary: one row at 1 GHz")
        for field, col in (("whole_body_SAR_W_per_kg", "whole_body_SAR_W_per_kg"),
                           ("psSAR1g_W_per_kg", "psSAR1g_W_per_kg"), ("psSAR10g_W_per_kg", "psSAR10g_W_per_kg"),
                           ("absorbed_power_W", "absorbed_power_W"), ("steps", "steps"), ("converged", "converged")):
            a, c = float(fd[field][0]), float(summary[col][0]) if col in summary else float("inf")
            check(a == c, f"summary {col} = field data {field} ({c:.6g})")
        loc = np.asarray(fd["psSAR1g_location_m"])[0]
        check(all(float(summary[f"psSAR1g_{ax}_m"][0]) == loc[q] for q, ax in enumerate("xyz")),
              f"psSAR1g location {loc} in field data and summary")
        check(int(fd["converged"][0]) == 1, f"converged after {int(fd['steps'][0])} steps")
        check(math.isnan(float(summary["feed_impedance_real_ohm"][0])), "no feed impedance for a plane wave (NaN)")
        far = table_columns(servermanager.Fetch(fdtd, idx=2))
        cols = ["theta_deg", "rcs_E_plane_dBsm", "rcs_H_plane_dBsm", "rcs_E_plane_m2", "rcs_H_plane_m2"]
        check(list(far.keys()) == cols, f"far-field columns {list(far.keys())}")
        if "theta_deg" in far:
            th = far["theta_deg"]
            check(len(th) == 91 and th[0] == 0 and th[-1] == 180, "far field from 0 to 180 degrees in 2 degree steps")
            check(np.all(np.isfinite(far["rcs_E_plane_dBsm"])), "RCS finite")

    # --- 2. Two frequencies: suffixes. ------------------------------------------------------------
    fdtd.DFTFrequencies = [0.9e9, 1.8e9]
    fdtd.UpdatePipeline()
    d = dsa.WrapDataObject(servermanager.Fetch(fdtd, idx=0))
    names = set(d.CellData.keys())
    want = {"E_real_900MHz", "E_imag_1800MHz", "E_magnitude_900MHz", "SAR_900MHz", "SAR_1800MHz",
            "SAR_1g_1800MHz", "SAR_10g_900MHz"}
    check(want <= names and "SAR" not in names, f"suffixed arrays ({sorted(names)})")
    check(len(d.FieldData["frequency_Hz"]) == 2, "field data: one tuple per frequency")
    summary = table_columns(servermanager.Fetch(fdtd, idx=1))
    check(list(summary.get("frequency_Hz", [])) == [0.9e9, 1.8e9], "summary: two rows")
    far = table_columns(servermanager.Fetch(fdtd, idx=2))
    check("frequency_Hz" in far and len(far["frequency_Hz"]) == 2 * 91, "far field: frequency_Hz column, 2 x 91 rows")
    Delete(fdtd)

    # --- 3. Half-wave dipole beside a coarse head, labels + tissue table. ----------------------
    phantom = HeadPhantom(Dimensions=[20, 20, 14], Spacing=[0.014, 0.014, 0.014], Origin=[-0.14, -0.14, -0.098])
    dip = FDTDSteadyState(Input=phantom, MaterialMode="Labels + tissue table",
                          Illumination="Half-wave dipole", DFTFrequencies=[900e6], DipoleCentre=[0.1, 0.0, 0.0],
                          DipoleAxis="z", DipoleLength=0.0, AcceptedPower=0.25, Backend="CPU", AirPadding=4,
                          CPMLThickness=6, FarFieldStep=5.0, ProgressInterval=50)
    dip.UpdatePipeline()
    d = dsa.WrapDataObject(servermanager.Fetch(dip, idx=0))
    check({"tissue", "density", "SAR", "SAR_10g"} <= set(d.CellData.keys()), "label mode: tissue, density and SAR arrays")
    summary = table_columns(servermanager.Fetch(dip, idx=1))
    pacc = float(summary["accepted_power_W"][0])
    check(abs(pacc - 0.25) < 1e-6, f"accepted power normalized to 0.25 W ({pacc:.6g})")
    pabs = float(summary["absorbed_power_W"][0])
    check(0 < pabs < pacc, f"absorbed in the head {pabs:.3g} W of {pacc:.3g} W accepted")
    check(float(d.FieldData["tissue_frequency_Hz"][0]) == 900e6, "tissue table at the DFT frequency")
    far = table_columns(servermanager.Fetch(dip, idx=2))
    check(list(far.keys()) == ["theta_deg", "gain_E_plane_dBi", "gain_H_plane_dBi", "gain_E_plane", "gain_H_plane"],
          f"dipole far-field columns {list(far.keys())}")
    if "theta_deg" in far:
        check(len(far["theta_deg"]) == 73 and far["theta_deg"][-1] == 360, "dipole far field from 0 to 360 degrees")

    # --- 4. The transient FDTD Solver on the same input. ------------------------------------------
    tr = FDTDSolver(Input=phantom, MaterialMode="Labels + tissue table", Illumination="Point source",
                    SourcePosition=[0.1, 0.0, 0.0], NumberOfSteps=60, SnapshotInterval=30, Backend="CPU",
                    AirPadding=4, CPMLThickness=6, ProgressInterval=50)
    tr.UpdatePipelineInformation()
    tr.UpdatePipeline(tr.TimestepValues[-1] if len(tr.TimestepValues) else 0.0)
    check(len(tr.TimestepValues) == 2, f"transient: two snapshot times ({list(tr.TimestepValues)})")
    check(servermanager.Fetch(tr, idx=0).GetCellData().GetArray("E") is not None, "transient: E on output 0")
    check(servermanager.Fetch(tr, idx=1).GetNumberOfRows() == 60, "transient: probe table on output 1")
    Delete(tr)
    Delete(dip)

    # --- 5. An error: no DFT frequency. ----------------------------------------------------------
    bad = FDTDSteadyState(Input=phantom, MaterialMode="Labels + tissue table", Illumination="Half-wave dipole",
                          DFTFrequencies=[], Backend="CPU", AirPadding=4, CPMLThickness=6)
    errors = []

    @calldata_type(VTK_STRING)
    def on_error(obj, event, text):
        errors.append(text)

    bad.GetClientSideObject().AddObserver("ErrorEvent", on_error)
    bad.UpdatePipeline()
    check(servermanager.Fetch(bad, idx=0).GetNumberOfCells() == 0 and
          all(servermanager.Fetch(bad, idx=q).GetNumberOfColumns() == 0 for q in (1, 2)),
          "[error] no DFT frequency: every output empty, no crash")
    want = "): FDTD Steady State: HarmonicOptions::frequencies (DFTFrequencies): none given; need at least one (Hz)"
    check(any(want in e for e in errors), f"[error] message '{want[3:]}' ({errors})")

    if failures:
        print(f"{len(failures)} check(s) failed:")
        for f in failures:
            print("  " + f)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
