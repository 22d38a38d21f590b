"""pvpython test: the FDTD filters report the solver's own option messages (issue 12).

The option checks live in the solver (VoxelDomainOptions, TransientOptions, HarmonicOptions,
HarmonicPlaneWave, HarmonicDipole ::validate() and point_source_as_dipole()); FDTD Solver and FDTD
Steady State only translate their properties. For each case of the table below this test

1. asks the C++ side for the message: the helper `option_messages` (option_messages.cpp, no VTK)
   runs validate() on the option type with the same bad value;
2. checks that message names the C++ member, the ParaView property in parentheses, the value and
   the limit (the case's `parts`);
3. sets the property on a filter in pvpython (a 6 x 6 x 6 image of 2 mm cells with 'permittivity'
   and 'conductivity' cell arrays, CPU backend), updates it with a vtkStringOutputWindow installed
   as the output window, and checks that the text printed holds '<label>: <message>' exactly once
   (label 'FDTD Solver' or 'FDTD Steady State') and that every output is empty afterwards.

Two control runs (the same filters without a bad value) must print no error and give outputs, so
each error is the bad value's.

A case marked `known_bug` is expected to fail (XFAIL, printed with the reason); once it passes the
test fails (XPASS) until the mark is removed. Cases marked `isolate` run in their own pvpython
process under a memory limit, so that a crash or a runaway allocation fails that case only.

  pvpython test_option_messages.py --plugin VoxelEMPlugin.so --option-messages path/to/option_messages \
      --pvpython /usr/bin/pvpython [--case NAME]
"""
import argparse
import resource
import subprocess
import sys

from paraview.simple import *  # noqa: F401,F403

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData

from vem_pvtest import Checker, update_capturing

LABELS = {"FDTDSolver": "FDTD Solver", "FDTDSteadyState": "FDTD Steady State"}

# Properties every case starts from: a small, valid run on the CPU (the cases override them). The
# steady state at 10 GHz: 27 steps a period on 2 mm cells, so 150 fixed steps hold two windows.
BASE = {
    "FDTDSolver": dict(Backend="CPU", AirPadding=4, CPMLThickness=6, SourcePosition=[0.0, 0.0, 0.0],
                       NumberOfSteps=20, SnapshotInterval=10, ProgressInterval=10),
    "FDTDSteadyState": dict(Backend="CPU", AirPadding=4, CPMLThickness=6, SourcePosition=[0.0, 0.0, 0.0],
                            DipoleCentre=[0.0, 0.0, 0.0], DFTFrequencies=[10e9], FixedSteps=150,
                            FarFieldStep=10.0, ProgressInterval=10),
}


class Case:
    def __init__(self, name, proxy, props, cpp, parts, known_bug=None, isolate=False):
        self.name = name            # the case's name (--case NAME)
        self.proxy = proxy          # paraview.simple function: FDTDSolver or FDTDSteadyState
        self.props = props          # the bad value (and what it needs) as ParaView properties
        self.cpp = cpp              # the same value for option_messages (see option_messages.cpp)
        self.parts = parts          # the message must name these: member, (property), value, limit
        self.known_bug = known_bug  # why this case is expected to fail, or None
        self.isolate = isolate      # run in its own pvpython process


# SnapshotInterval < 1 once made TransientOptions::snapshot_steps() loop for ever in
# RequestInformation (found by this test); the case runs isolated under a memory limit.

CASES = [
    # FDTD Solver (transient): TransientOptions and VoxelDomainOptions.
    Case("solver.steps", "FDTDSolver", {"NumberOfSteps": 0}, "transient.steps=0",
         ["TransientOptions::steps", "(NumberOfSteps)", "= 0", "1..100000000"]),
    Case("solver.frequency", "FDTDSolver", {"SourceFrequency": -1.0}, "transient.frequency=-1",
         ["TransientOptions::frequency", "(SourceFrequency)", "= -1 Hz", "> 0"]),
    Case("solver.bandwidth", "FDTDSolver", {"SourceBandwidth": -5e6}, "transient.bandwidth=-5e6",
         ["TransientOptions::bandwidth", "(SourceBandwidth)", "= -5e+06 Hz", ">= 0"]),
    Case("solver.simulated_time", "FDTDSolver", {"StopMode": "Simulated time", "SimulatedTime": 0.0},
         "transient.simulated_time=0",
         ["TransientOptions::simulated_time", "(SimulatedTime)", "= 0 s", "> 0"]),
    Case("solver.snapshot_interval", "FDTDSolver", {"SnapshotInterval": 0}, "transient.snapshot_interval=0",
         ["TransientOptions::snapshot_interval", "(SnapshotInterval)", "= 0 steps", ">= 1"],
         isolate=True),
    Case("solver.courant_factor", "FDTDSolver", {"CourantFactor": 1.5}, "domain.courant_factor=1.5",
         ["VoxelDomainOptions::courant_factor", "(CourantFactor)", "= 1.5", "(0, 1]"]),
    Case("solver.air_padding", "FDTDSolver", {"AirPadding": -1}, "domain.air_padding=-1",
         ["VoxelDomainOptions::air_padding", "(AirPadding)", "= -1 cells", ">= 0"]),
    Case("solver.cpml_thickness", "FDTDSolver", {"CPMLThickness": 0}, "domain.cpml_thickness=0",
         ["VoxelDomainOptions::cpml_thickness", "(CPMLThickness)", "= 0 cells", "1..1000"]),
    Case("solver.periodic", "FDTDSolver", {"XLowBoundary": "Periodic"},
         "domain.boundaries=periodic,cpml,cpml,cpml,cpml,cpml",
         ["VoxelDomainOptions::boundaries", "(XLowBoundary, XHighBoundary)", "x-low: periodic", "x-high: cpml"]),
    Case("solver.source_polarization", "FDTDSolver", {"SourcePolarization": [0.0, 0.0, 0.0]},
         "transient.source_polarization=0,0,0",
         ["TransientOptions::source_polarization", "(SourcePolarization)", "= (0, 0, 0)", "non-zero"]),
    Case("solver.incident_amplitude", "FDTDSolver", {"Illumination": "Plane wave", "IncidentAmplitude": 0.0},
         "transient.illumination=plane_wave;transient.plane_wave.amplitude=0",
         ["HarmonicPlaneWave::amplitude", "(IncidentAmplitude)", "= 0 V/m", "> 0"]),
    Case("solver.feed_current", "FDTDSolver", {"Illumination": "Half-wave dipole", "FeedCurrent": 0.0},
         "transient.illumination=dipole;transient.dipole.feed_current=0",
         ["HarmonicDipole::feed_current", "(FeedCurrent)", "= 0 A", "> 0"]),
    Case("solver.subpixel_tensor_s44", "FDTDSolver",
         {"Scheme": "S44 (4th order in space and time)", "SubpixelSmoothing": 1, "SubpixelTensor": "Full"},
         "domain.scheme=s44;domain.subpixel_smoothing=1;domain.subpixel.full_tensor=1",
         ["VoxelDomainOptions::subpixel.full_tensor", "(SubpixelTensor = Full)", "s44 (Scheme)", "Diagonal"]),
    Case("solver.field_storage_scheme", "FDTDSolver",
         {"Scheme": "FV24 (4th order, narrow-band)", "FieldStorage": "float16 (half the field memory)"},
         "domain.scheme=fv24;domain.field_storage=float16",
         ["VoxelDomainOptions::field_storage", "(FieldStorage) = float16", "fv24 (Scheme)", "yee only"]),
    # FDTD Steady State: HarmonicOptions, its dipole, point_source_as_dipole, VoxelDomainOptions.
    Case("steady.frequency", "FDTDSteadyState", {"DFTFrequencies": [-1.0]}, "harmonic.frequencies=-1",
         ["HarmonicOptions::frequencies", "(DFTFrequencies)", "#1 = -1 Hz", "> 0"]),
    Case("steady.no_frequency", "FDTDSteadyState", {"DFTFrequencies": []}, "harmonic.frequencies=",
         ["HarmonicOptions::frequencies", "(DFTFrequencies)", "none given", "at least one"]),
    Case("steady.same_label", "FDTDSteadyState", {"DFTFrequencies": [900e6, 900.0000001e6]},
         "harmonic.frequencies=900e6,900.0000001e6",
         ["HarmonicOptions::frequencies", "(DFTFrequencies)", "#1 = 9e+08 Hz and #2 = 9e+08 Hz",
          "6 significant digits", "'900MHz'"]),
    Case("steady.tolerance", "FDTDSteadyState", {"SteadyStateTolerance": 2.0}, "harmonic.steady_state_tolerance=2",
         ["HarmonicOptions::steady_state_tolerance", "(SteadyStateTolerance)", "= 2", "(0, 1)"]),
    Case("steady.far_field_step", "FDTDSteadyState", {"FarFieldStep": 0.0}, "harmonic.far_field_step_deg=0",
         ["HarmonicOptions::far_field_step_deg", "(FarFieldStep)", "= 0 deg", "(0, 90]"]),
    Case("steady.max_steps", "FDTDSteadyState", {"MaxSteps": -1}, "harmonic.max_steps=-1",
         ["HarmonicOptions::max_steps", "(MaxSteps)", "= -1", ">= 0"]),
    Case("steady.fixed_steps", "FDTDSteadyState", {"FixedSteps": -1}, "harmonic.fixed_steps=-1",
         ["HarmonicOptions::fixed_steps", "(FixedSteps)", "= -1", ">= 0"]),
    Case("steady.dft_sample_interval", "FDTDSteadyState", {"DFTSampleInterval": -1},
         "harmonic.dft_sample_interval=-1",
         ["HarmonicOptions::dft_sample_interval", "(DFTSampleInterval)", "= -1", ">= 0"]),
    Case("steady.dipole_length", "FDTDSteadyState", {"Illumination": "Half-wave dipole", "DipoleLength": -0.1},
         "harmonic.source=dipole;harmonic.dipole.length=-0.1",
         ["HarmonicDipole::length", "(DipoleLength)", "= -0.1 m", ">= 0"]),
    Case("steady.feed_current", "FDTDSteadyState",
         {"Illumination": "Half-wave dipole", "AcceptedPower": 0.0, "FeedCurrent": 0.0},
         "harmonic.source=dipole;harmonic.dipole.accepted_power=0;harmonic.dipole.feed_current=0",
         ["HarmonicDipole::feed_current", "(FeedCurrent)", "= 0 A", "> 0", "(AcceptedPower) is 0"]),
    Case("steady.accepted_power", "FDTDSteadyState", {"Illumination": "Half-wave dipole", "AcceptedPower": -1.0},
         "harmonic.source=dipole;harmonic.dipole.accepted_power=-1",
         ["HarmonicDipole::accepted_power", "(AcceptedPower)", "= -1 W", ">= 0"]),
    Case("steady.hard_source", "FDTDSteadyState", {"SourceType": "Hard E field"}, "point.kind=hard_e",
         ["TransientOptions::source_kind", "(SourceType)", "= hard_e", "no steady-state form"]),
    Case("steady.off_axis", "FDTDSteadyState", {"SourcePolarization": [1.0, 0.0, 1.0]},
         "point.polarization=1,0,1",
         ["TransientOptions::source_polarization", "(SourcePolarization)", "= (1, 0, 1)", "along x, y or z"]),
    Case("steady.subpixel_tensor_s44", "FDTDSteadyState",
         {"Scheme": "S44 (4th order in space and time)", "SubpixelSmoothing": 1, "SubpixelTensor": "Full"},
         "domain.scheme=s44;domain.subpixel_smoothing=1;domain.subpixel.full_tensor=1",
         ["VoxelDomainOptions::subpixel.full_tensor", "(SubpixelTensor = Full)", "s44 (Scheme)", "Diagonal"]),
    Case("steady.field_storage_tensor", "FDTDSteadyState",
         {"FieldStorage": "bfloat16 (half the field memory)", "SubpixelSmoothing": 1, "SubpixelTensor": "Full"},
         "domain.field_storage=bfloat16;domain.subpixel_smoothing=1;domain.subpixel.full_tensor=1",
         ["VoxelDomainOptions::field_storage", "(FieldStorage) = bfloat16", "(SubpixelTensor = Full)", "float32"]),
    Case("steady.courant_factor", "FDTDSteadyState", {"CourantFactor": 0.0}, "domain.courant_factor=0",
         ["VoxelDomainOptions::courant_factor", "(CourantFactor)", "= 0", "(0, 1]"]),
]


def tiny_image():
    """6 x 6 x 6 cells of 2 mm around the origin: permittivity 4, conductivity 0.1 S/m."""
    n, h = 6, 0.002
    img = vtkImageData()
    img.SetDimensions(n + 1, n + 1, n + 1)
    img.SetSpacing(h, h, h)
    img.SetOrigin(-0.5 * n * h, -0.5 * n * h, -0.5 * n * h)
    for name, v in (("permittivity", 4.0), ("conductivity", 0.1)):
        a = numpy_to_vtk(np.full(n ** 3, v, dtype=np.float32), deep=1)
        a.SetName(name)
        img.GetCellData().AddArray(a)
    return img


def outputs(proxy_name, algorithm):
    """Cells / rows / columns of every output port of the filter (its own outputs, no re-execution)."""
    image = algorithm.GetOutputDataObject(0)
    sizes = {"port 0 cells": image.GetNumberOfCells(), "port 0 arrays": image.GetCellData().GetNumberOfArrays()}
    tables = [1] if proxy_name == "FDTDSolver" else [1, 2]
    for p in tables:
        t = algorithm.GetOutputDataObject(p)
        sizes[f"port {p} rows"] = t.GetNumberOfRows()
        sizes[f"port {p} columns"] = t.GetNumberOfColumns()
    return sizes


def make_filter(source, proxy_name, props):
    kwargs = dict(BASE[proxy_name])
    kwargs.update(props)
    return globals()[proxy_name](Input=source, **kwargs)


def run_control(chk, source, proxy_name):
    f = make_filter(source, proxy_name, {})
    text = update_capturing(f)
    sizes = outputs(proxy_name, f.GetClientSideObject())
    chk.check("ERROR" not in text, f"[control {proxy_name}] no error with valid properties"
              + ("" if "ERROR" not in text else f": {text.strip()}"))
    chk.check(sizes["port 0 cells"] > 0 and sizes["port 1 columns"] > 0,
              f"[control {proxy_name}] outputs filled ({sizes})")
    Delete(f)


def run_case(chk, source, case, message):
    """The filter's side of one case, against the C++ `message`. Returns True when every check passed."""
    ok = True
    label = LABELS[case.proxy]
    f = make_filter(source, case.proxy, case.props)
    text = update_capturing(f)
    sizes = outputs(case.proxy, f.GetClientSideObject())
    Delete(f)
    expected = f"{label}: {message}"
    n_labelled, n_bare = text.count(expected), text.count(message)
    ok &= chk.check(n_labelled == 1 and n_bare == 1,
                    f"[{case.name}] {case.proxy} prints '{expected}' exactly once "
                    f"(labelled {n_labelled}x, message {n_bare}x)"
                    + ("" if n_labelled == 1 else f"; printed: {text.strip()[:2000]!r}"))
    ok &= chk.check(all(v == 0 for v in sizes.values()), f"[{case.name}] every output empty after the error ({sizes})")
    return ok


def cpp_messages(helper, cases):
    res = subprocess.run([helper] + [c.cpp for c in cases], capture_output=True, text=True, timeout=60)
    lines = res.stdout.splitlines()
    if res.returncode != 0 or len(lines) != len(cases):
        sys.exit(f"option_messages failed (exit {res.returncode}, {len(lines)} lines for {len(cases)} cases):\n"
                 f"{res.stdout}{res.stderr}")
    return lines


def check_message(chk, case, message):
    missing = [p for p in case.parts if p not in message]
    return chk.check(not missing and message != "(valid)",
                     f"[{case.name}] C++ '{case.cpp}': '{message}'"
                     + (f" lacks {missing}" if missing else " names member, property, value, limit"))


def limit_memory():
    limit = 6 << 30  # address space; pvpython with the plugin maps well under 2 GiB
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_isolated(args, case):
    fail = "FAIL (known bug)" if case.known_bug else "FAIL"
    cmd = [args.pvpython, __file__, "--plugin", args.plugin, "--option-messages", args.option_messages,
           "--pvpython", args.pvpython, "--case", case.name]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=180, preexec_fn=limit_memory)
    except subprocess.TimeoutExpired:
        print(f"{fail} [{case.name}] its pvpython process ran past 180 s")
        return False
    for line in res.stdout.splitlines():
        if line.startswith(("PASS", "FAIL")):
            print("  " + line)
    if res.returncode != 0:
        tail = " | ".join(res.stderr.strip().splitlines()[:2])
        print(f"{fail} [{case.name}] its pvpython process exited with {res.returncode}" + (f": {tail}" if tail else ""))
    return res.returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--option-messages", required=True, help="the option_messages helper (C++ side)")
    ap.add_argument("--pvpython", default="pvpython", help="for the cases run in a process of their own")
    ap.add_argument("--case", help="run this case only, in this process (used for isolated cases)")
    args = ap.parse_args()
    names = [c.name for c in CASES]
    if len(set(names)) != len(names):
        sys.exit("duplicate case names")
    chk = Checker()

    if args.case:  # one case, in this process
        case = next((c for c in CASES if c.name == args.case), None)
        if case is None:
            sys.exit(f"no case '{args.case}'")
        message = cpp_messages(args.option_messages, [case])[0]
        LoadPlugin(args.plugin, remote=False, ns=globals())
        source = TrivialProducer()
        source.GetClientSideObject().SetOutput(tiny_image())
        ok = check_message(chk, case, message) and run_case(chk, source, case, message)
        return 0 if ok else 1

    messages = cpp_messages(args.option_messages, CASES)
    LoadPlugin(args.plugin, remote=False, ns=globals())
    chk.check("FDTDSolver" in globals() and "FDTDSteadyState" in globals(),
              "pvpython names FDTDSolver and FDTDSteadyState exist")
    source = TrivialProducer()
    source.GetClientSideObject().SetOutput(tiny_image())
    for proxy_name in LABELS:
        run_control(chk, source, proxy_name)

    xfail, xpass = [], []
    for case, message in zip(CASES, messages):
        case_chk = Checker() if case.known_bug else chk
        ok = check_message(case_chk, case, message)
        if case.isolate:
            ok = run_isolated(args, case) and ok
            if not ok and not case.known_bug:
                chk.failures.append(f"[{case.name}] in its own process")
        else:
            ok = run_case(case_chk, source, case, message) and ok
        if case.known_bug:
            if ok:
                xpass.append(case.name)
                chk.check(False, f"[{case.name}] XPASS: passes now; remove its known_bug mark ({case.known_bug})")
            else:
                xfail.append(case.name)
                print(f"XFAIL [{case.name}] known bug: {case.known_bug}")

    print(f"{len(CASES)} cases, {len(xfail)} expected failure(s) {xfail}")
    if chk.failures:
        print(f"{len(chk.failures)} check(s) failed:")
        for f in chk.failures:
            print("  " + f)
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
