#!/usr/bin/env python3
"""Renders a bench_fdtd JSON file as the markdown tables of testing/benchmarks/results/fdtd.md.
A JSON of `bench_fdtd extensions` (benchmark "fdtd_extensions") gives the overhead tables of the
TF/SF source, DFT monitors and SAR averaging instead.

Usage: fdtd_table.py results/fdtd_h100.json
       fdtd_table.py results/fdtd_ext_h100.json
"""
import json
import sys


def extensions(d):
    print(f"Device: {d['device']} ({d['backend']} engine); commit {d['commit']}; {d['date']}; "
          f"copy bandwidth measured in the same run: {d['copy_bandwidth_GBps']:.0f} GB/s.\n")
    print(f"{d['n']}^3 cells of {d['cell_m'] * 1e3:g} mm, {d['material_mode']} materials, {d['cpml_cells']}-cell "
          f"CPML, {d['tuning']} tuning. CW at {d['cw_frequency_Hz'] / 1e9:.2f} GHz ({d['cw_choice']}): "
          f"{d['steps_per_period']:.1f} steps per period, Nyquist interval {d['nyquist_interval']} steps "
          f"(16 samples per period). DFT monitors: {d['dft_components']}; 8 frequencies = "
          f"{d['dft_frequencies_8'][0] / 1e9:.2f}..{d['dft_frequencies_8'][-1] / 1e9:.2f} GHz. TF/SF box: node "
          f"planes {d['tfsf_box'][0]}..{d['tfsf_box'][1]} on every axis ({d['tfsf_corrected_samples']:,} "
          f"corrected samples per step).\n")
    print("| variant | TF/SF | DFT freqs | sample interval | steps | ms/step | Mcells/s | overhead vs bare |")
    print("|---|---|---|---|---|---|---|---|")
    for r in d["results"]:
        interval = str(r["sample_interval"]) if r["dft_frequencies"] else "-"
        print(f"| {r['variant']} | {'yes' if r['tfsf'] else '-'} | {r['dft_frequencies'] or '-'} | {interval} | "
              f"{r['steps']} | {r['seconds_per_step'] * 1e3:.3f} | {r['mcells_per_s']:,.0f} | "
              f"{r['overhead_pct']:+.1f} % |")
    one = [r for r in d["results"] if r["dft_frequencies"] == 1 and not r["tfsf"]]
    if one:
        verdict = ", ".join(f"{r['overhead_pct']:.1f} % at interval {r['sample_interval']} "
                            f"({'met' if r['overhead_pct'] < 15 else 'not met'})" for r in one)
        print(f"\nTarget: under 15 % for one whole-volume DFT frequency at 512^3: {verdict}"
              + ("" if d["n"] == 512 else f" (this run: {d['n']}^3)") + ".")
    if "steady_state_check_seconds" in d:
        print(f"\nSteady-state check (DftMonitor::check_steady_state, 1 frequency, whole volume): "
              f"{d['steady_state_check_seconds']:.3f} s = {d['steady_state_check_equivalent_bare_steps']:,.0f} "
              f"bare steps, {d['steady_state_check_overhead_pct_every_2_periods']:.1f} % of the stepping when "
              f"checked every 2 periods ({2 * d['steps_per_period']:.0f} steps).")
    s = d.get("sar", {})
    if s.get("rows"):
        print(f"\nSAR averaging (vem::spatial_average_sar): {s['model']}, {s['n']}^3 voxels of "
              f"{s['voxel_m'] * 1e3:.2f} mm, {s['tissue_fraction'] * 100:.0f} % tissue; "
              f"equivalent bare steps = seconds / bare seconds per step of the {d['n']}^3 run.\n")
        print("| backend | voxels | mass | seconds | equivalent bare steps | valid | assigned | unassigned |")
        print("|---|---|---|---|---|---|---|---|")
        for r in s["rows"]:
            print(f"| {r['backend']} | {r['n']}^3 | {r['mass_g']:g} g | {r['seconds']:.3f} | "
                  f"{r['equivalent_bare_steps']:,.0f} | {r['valid']:,} | {r['assigned']:,} | {r['unassigned']:,} |")


def main(path):
    d = json.load(open(path))
    if d.get("benchmark") == "fdtd_extensions":
        extensions(d)
        return
    rows = d["results"]
    print(f"Device: {d['device']}; commit {d['commit']}; {d['date']}; "
          f"copy bandwidth measured in the same run: {d['copy_bandwidth_GBps']:.0f} GB/s.\n")
    print("| engine | materials | n | block | z-chunk | Mcells/s | B/cell-step | GB/s | of copy BW |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["engine"].startswith("cuda-sweep"):
            continue
        mode = r["material_mode"] + (f" ({r['table']} table)" if r["material_mode"] == "indexed" else "")
        gpu = r["engine"] != "cpu"
        print(f"| {r['engine']} | {mode} | {r['n']}^3 | "
              f"{'%dx%d' % tuple(r['block']) if gpu else '-'} | {r['z_chunk'] if gpu else '-'} | "
              f"{r['mcells_per_s']:,.0f} | {r['bytes_per_cell_step']:.1f} | {r['achieved_GBps']:.0f} | "
              f"{r['fraction_of_copy_bw']:.2f} |")
    # GPU / CPU ratios at the sizes both ran.
    cpu = {(r["material_mode"], r["n"]): r["mcells_per_s"] for r in rows if r["engine"] == "cpu"}
    gpu = {(r["material_mode"], r["n"]): r["mcells_per_s"] for r in rows if r["engine"] == "cuda"}
    ratios = [f"{m} {n}^3: {gpu[(m, n)] / cpu[(m, n)]:.0f}x" for (m, n) in sorted(cpu) if (m, n) in gpu]
    print("\nGPU / CPU engine (all cores of the device machine): " + ", ".join(ratios) + "\n")
    print("Tuning sweep (indexed, largest size):\n")
    print("| variant | block | z-chunk | table | Mcells/s | of copy BW |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if r["engine"].startswith("cuda-sweep"):
            print(f"| {r['engine']} | {'%dx%d' % tuple(r['block'])} | {r['z_chunk']} | {r['table']} | "
                  f"{r['mcells_per_s']:,.0f} | {r['fraction_of_copy_bw']:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
