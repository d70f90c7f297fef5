#!/usr/bin/env python3
"""Writes the nccl-tests log variants of this folder from the real logs in calibrate/published/nccl-tests-logs.

Run from the repository root: python3 tests/calibrate/data/nccl-tests-logs/make_variants.py
Each variant changes only the framing (launcher prefixes, NCCL messages cut into rows, line ends, which lines
were pasted, the header); the numbers are the published ones, except v100-8gpu-alltoall-old-format.log whose
rows are synthetic (see SOURCES.md). Deterministic: the same files every run.
"""
import os

SRC = "calibrate/published/nccl-tests-logs"
OUT = os.path.dirname(os.path.abspath(__file__))


def read(name):
    with open(os.path.join(SRC, name), newline="") as f:
        return f.read().split("\n")


def write(name, lines, eol="\n"):
    with open(os.path.join(OUT, name), "w", newline="") as f:
        f.write(eol.join(lines))


h100 = read("h100-8gpu-allreduce-nvls.log")
a100 = read("a100-pcie-2node-hdr-allreduce-info-interleaved.log")
v100 = read("v100-8gpu-allgather-old-format.log")
if h100[-1] == "":
    h100 = h100[:-1]
if a100[-1] == "":
    a100 = a100[:-1]
if v100[-1] == "":
    v100 = v100[:-1]

# srun -l: every line carries the task id of the task that wrote it ("%*d: "); test2 is task 1.
write("srun-label-a100-2node-allreduce.log",
      [("1: " if l.startswith("test2:") else "0: ") + l for l in a100] + [""])

# Open MPI --tag-output: "[jobid,rank]<stdout>:"; the 65536 B row forwarded in two chunks, each tagged.
tagged = []
for l in a100:
    tag = "[1,1]<stdout>:" if l.startswith("test2:") else "[1,0]<stdout>:"
    if l.startswith("       65536 "):
        cut = l.index("    183.1")
        l = l[:cut] + "[1,0]<stdout>:" + l[cut:]
    tagged.append(tag + l)
write("openmpi-tag-output-a100-2node-allreduce.log", tagged + [""])

# NCCL messages cut into rows: an INFO line glued after the 8 B row's root, then another INFO line, then the
# rest of the row; an INFO line inside the 4096 B row's out-of-place time ("22.7|6"); a WARN (NCCL prints a
# newline before it, and a timestamp) after the 1 MiB row's out-of-place block.
mid = []
for l in a100:
    if l.startswith("           8 "):
        cut = l.index("    17.08")
        mid.append(l[:cut] + "test1:5425:5439 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IBext_v8/0/GDRDMA")
        mid.append("test2:4962:4975 [0] NCCL INFO Connected all rings")
        mid.append(l[cut:])
    elif l.startswith("        4096 "):
        cut = l.index("22.76") + 4
        mid.append(l[:cut] + "test1:5425:5439 [0] NCCL INFO Using network IBext_v8")
        mid.append(l[cut:])
    elif l.startswith("     1048576 "):
        cut = l.index("   3392.5")
        mid.append(l[:cut])
        mid.append("[2025-03-10 09:12:44] test2:4962:4975 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got async event : port active")
        mid.append(l[cut:])
    else:
        mid.append(l)
write("info-mid-row-a100-2node-allreduce.log", mid + [""])

# CRLF line ends throughout (a log saved on Windows or pasted through a browser).
write("crlf-h100-8gpu-allreduce.log", h100 + [""], eol="\r\n")

# Several tables: the H100 run as nccl-tests 2.19 prints it (version and "Collective test starting"
# lines), then the V100 old-format all_gather run pasted below it.
write("several-tables-h100-allreduce-v100-allgather.log",
      ["# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807",
       "# Collective test starting: all_reduce_perf"] + h100 +
      ["# Collective test concluded: all_reduce_perf", ""] + v100 + [""])

# One placement only: the H100 table cut after the out-of-place block (header, label and rows).
oop = []
for l in h100:
    if "out-of-place" in l:
        oop.append(l[: l.index("in-place")].rstrip())
    elif l.startswith("#       size") or l.startswith("#        (B)") or (l and l.lstrip()[:1].isdigit()):
        # the in-place block starts at the second "time" column: cut the line there
        cols = l.split()
        lead = 6 if l.startswith("#") else 5
        keep = lead + 4 if not l.startswith("#        (B)") else None
        if keep is None:
            oop.append(l[:88].rstrip())
        else:
            # find the character position of the start of the (keep)th field
            pos, n = 0, 0
            while n < keep:
                while l[pos] == " ":
                    pos += 1
                while pos < len(l) and l[pos] != " ":
                    pos += 1
                n += 1
            oop.append(l[:pos])
    else:
        oop.append(l)
write("out-of-place-only-h100-8gpu-allreduce.log", oop + [""])

# -G 1: the same run launched with CUDA graphs (the command line and "graph: 1"), numbers unchanged.
graph = ["all_reduce_perf -b 128M -e 4G -f 2 -g 8 -n 2 -G 1"]
graph += [l.replace("graph: 0", "graph: 1") for l in h100]
write("graph-h100-8gpu-allreduce.log", graph + [""])

# A paste that starts at "# Using devices": no nThread line, no closing lines; the file name names no
# collective either.
start = next(i for i, l in enumerate(h100) if l.startswith("# Using devices"))
end = next(i for i, l in enumerate(h100) if "Out of bounds" in l)
write("headless-paste-h100.log", h100[start:end] + [""])

# Only the rows (from 1 MiB up) pasted: no header at all, nothing about the ranks.
rows = [l for l in a100 if l.strip()[:1].isdigit() and int(l.split()[0]) >= 1048576]
write("rows-only-paste.txt", rows + [""])

# The table and the NCCL INFO lines, without the '#' preamble: ranks and nodes only from NCCL INFO.
write("a100-info-only-paste-allreduce.log", [l for l in a100 if not l.startswith("#")] + [""])

# Old-format all-to-all (nccl-tests 119a0ec, 2020: src/alltoall.cu print_header / print_line_header with
# opName ""): a header naming redop over rows whose redop is blank, an "error" column, no root. Synthetic
# numbers: t = 40 us + S / 140 GB/s, algbw = S / t, busbw = algbw x 7/8, printed as nccl-tests did then.
old = ["# nThread 1 nGpus 8 minBytes 1048576 maxBytes 1073741824 step: 4(factor) warmup iters: 5 iters: 20 validation: 1 ",
       "#",
       "# Using devices"]
for r in range(8):
    old.append("#   Rank %2d Pid %6d on %10s device %2d [0x%02x] %s" % (r, 40117, "dgx1", r, 0x1a + r, "Tesla V100-SXM2-32GB"))
old.append("#")
old.append("# %10s  %12s  %6s  %6s            out-of-place                       in-place          " % ("", "", "", ""))
old.append("# %10s  %12s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % ("size", "count", "type", "redop",
           "time", "algbw", "busbw", "error", "time", "algbw", "busbw", "error"))
old.append("# %10s  %12s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s" % ("(B)", "(elements)", "", "",
           "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))


def tstr(us):
    return "%7.0f" % us if us > 10000 else ("%7.1f" % us if us > 100 else "%7.2f" % us)


size = 1048576
while size <= 1073741824:
    line = "%12li  %12li  %6s  %6s" % (size, size // 4, "float", "")
    for extra in (0.0, 1.5):
        t = 40.0 + extra + size / 140e3
        alg = size / (t * 1e3)
        line += "  %7s  %6.2f  %6.2f  %5.0e" % (tstr(t), alg, alg * 7 / 8, 0.0)
    old.append(line)
    size *= 4
old.append("# Out of bounds values : 0 OK")
old.append("# Avg bus bandwidth    : 0 ")
old.append("#")
write("v100-8gpu-alltoall-old-format.log", old + [""])
