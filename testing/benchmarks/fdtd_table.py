#!/usr/bin/env python3
"""Renders a bench_fdtd JSON file as the markdown tables of testing/benchmarks/results/fdtd.md.

Usage: fdtd_table.py results/fdtd_h100.json
"""
import json
import sys


def main(path):
    d = json.load(open(path))
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
