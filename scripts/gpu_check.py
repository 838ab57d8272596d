"""Agent mode against kineto mode on a real GPU (run by scripts/gpu-check.sh; see there).

usage: gpu_check.py OUT_DIR FPC_DUMP
"""
import gzip
import json
import os
import subprocess
import sys
import time

OUT, FPC_DUMP = sys.argv[1], sys.argv[2]
PARITY = r'''
import json, os, sys, time
mode, out = sys.argv[1], sys.argv[2]
capture = None
if mode == "agent":
    from flagprof_agent import native  # before torch touches the device
    capture = native.open_capture(out)
import torch
from torch.profiler import ProfilerActivity, profile
dev = torch.device("cuda")
a = torch.randn(1024, 1024, device=dev)
b = torch.randn(1024, 1024, device=dev)
torch.cuda.synchronize()
def work():
    for _ in range(5):
        c = torch.relu(a @ b)
    torch.sort(torch.randn(16, device=dev))
    c.cpu()
    torch.cuda.synchronize()
work()  # warm-up outside the window
activities = [ProfilerActivity.CPU] if mode == "agent" else [ProfilerActivity.CPU, ProfilerActivity.CUDA]
t = time.perf_counter()
if capture is not None:
    capture.start()
with profile(activities=activities) as prof:
    work()
if capture is not None:
    capture.stop()
elapsed = time.perf_counter() - t
prof.export_chrome_trace(os.path.join(out, "trace.json"))
if capture is not None:
    capture.close()
json.dump({"seconds": elapsed}, open(os.path.join(out, "timing.json"), "w"))
'''


def run(mode):
    out = os.path.join(OUT, mode)
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    if mode == "kineto":
        env.pop("FLAGOS_TRACER_LIBRARY", None)
    proc = subprocess.run([sys.executable, "-c", PARITY, mode, out], env=env, capture_output=True, text=True, timeout=240)
    with open(os.path.join(out, "stderr.txt"), "w") as f:
        f.write(proc.stderr)
    if proc.returncode != 0:
        raise SystemExit("gpu-check: %s mode failed (%d): %s" % (mode, proc.returncode, proc.stderr.strip().splitlines()[-1:]))
    return out


def kineto_events(out):
    with open(os.path.join(out, "trace.json")) as f:
        doc = json.load(f)
    base = int(doc.get("baseTimeNanoseconds", 0))
    events = []
    for e in doc.get("traceEvents", []):
        if e.get("ph") != "X":
            continue
        start = base + int(round(float(e["ts"]) * 1000))
        events.append(dict(cat=e.get("cat", ""), name=e.get("name", ""), start=start, end=start + int(round(float(e.get("dur", 0)) * 1000)),
                           tid=e.get("tid"), pid=e.get("pid"), args=e.get("args", {})))
    flows = [e for e in doc.get("traceEvents", []) if e.get("ph") in ("s", "f") and e.get("cat") == "ac2g"]
    return events, flows


def innermost_op(ops_by_tid, tid, t):
    best = None
    for op in ops_by_tid.get(tid, []):
        if op["start"] <= t <= op["end"] and (best is None or op["end"] - op["start"] < best["end"] - best["start"]):
            best = op
    return best


def attribution(device, runtime_by_corr, ops_by_tid, ops_by_ext):
    """Device ns per op name: External id when present, else the runtime call's innermost enclosing op."""
    per_op = {}
    for d in device:
        op = ops_by_ext.get(d.get("external")) if d.get("external") is not None else None
        if op is None:
            r = runtime_by_corr.get(d["correlation"])
            op = innermost_op(ops_by_tid, r["tid"], r["start"]) if r else None
        key = op["name"] if op else "<unlinked>"
        per_op[key] = per_op.get(key, 0) + d["end"] - d["start"]
    return per_op


def summarize_kineto(out):
    events, flows = kineto_events(out)
    ops = [e for e in events if e["cat"] in ("cpu_op", "user_annotation")]
    ops_by_tid, ops_by_ext = {}, {}
    for op in ops:
        ops_by_tid.setdefault(op["tid"], []).append(op)
        if "External id" in op["args"]:
            ops_by_ext.setdefault(op["args"]["External id"], op)
    kinds = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset", "cuda_runtime": "runtime", "cuda_driver": "driver"}
    counts = {v: 0 for v in kinds.values()}
    device, runtime_by_corr = [], {}
    for e in events:
        k = kinds.get(e["cat"])
        if not k:
            continue
        counts[k] += 1
        if k in ("kernel", "memcpy", "memset"):
            device.append(dict(correlation=e["args"].get("correlation"), external=e["args"].get("External id"), start=e["start"], end=e["end"]))
        elif k == "runtime":
            runtime_by_corr.setdefault(e["args"].get("correlation"), e)
    halves = {}
    for f in flows:
        halves.setdefault(f["id"], set()).add(f["ph"])
    return dict(counts=counts, per_op=attribution(device, runtime_by_corr, ops_by_tid, ops_by_ext),
                flows=dict(ids=len(halves), paired=sum(1 for h in halves.values() if h == {"s", "f"})))


def summarize_agent(out):
    events, _ = kineto_events(out)
    ops = [e for e in events if e["cat"] in ("cpu_op", "user_annotation")]
    ops_by_tid = {}
    for op in ops:
        ops_by_tid.setdefault(op["tid"], []).append(op)
    proc = subprocess.run([FPC_DUMP, os.path.join(out, "capture.fpc")], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit("gpu-check: fpc_dump failed: " + proc.stderr.strip())
    lines = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
    head, capture = lines[0], lines[1:]
    lo, hi = head["window"]
    inside = [e for e in capture if e["start"] >= lo and e["end"] <= hi]
    counts = {k: sum(1 for e in inside if e["kind"] == k) for k in ("kernel", "memcpy", "memset", "runtime", "driver")}
    runtime_by_corr = {}
    for e in inside:
        if e["kind"] == "runtime":
            runtime_by_corr.setdefault(e["correlation"], dict(tid=e["thread"], start=e["start"]))
    device = [e for e in inside if e["kind"] in ("kernel", "memcpy", "memset")]
    # External ids here are the agent's own pushes (none in this workload): link through the runtime call.
    for d in device:
        d["external"] = None
    paired = sum(1 for d in device if d["correlation"] in runtime_by_corr)
    names = [e["name"] for e in inside if e["kind"] == "kernel"]
    return dict(counts=counts, per_op=attribution(device, runtime_by_corr, ops_by_tid, {}),
                flows=dict(ids=len(device), paired=paired),
                window=dict(events=len(capture), inside=len(inside), outside=len(capture) - len(inside)),
                mangled_kernel_names=sum(1 for n in names if n.startswith("_Z")),
                generic_runtime_names=sum(1 for e in inside if e["kind"] == "runtime" and e["name"] == "cudaRuntime"),
                dropped=head["dropped"])


def share_same_op(a, b):
    ta, tb = sum(a.values()) or 1, sum(b.values()) or 1
    keys = set(a) | set(b)
    return sum(min(a.get(k, 0) / ta, b.get(k, 0) / tb) for k in keys)


def main():
    timings = {}
    results = {}
    for mode in ("kineto", "agent", "kineto", "agent"):  # interleaved; the second pair is measured
        out = run(mode)
        with open(os.path.join(out, "timing.json")) as f:
            timings.setdefault(mode, []).append(json.load(f)["seconds"])
    results["kineto"] = summarize_kineto(os.path.join(OUT, "kineto"))
    results["agent"] = summarize_agent(os.path.join(OUT, "agent"))
    share = share_same_op(results["kineto"]["per_op"], results["agent"]["per_op"])
    report = dict(
        modes=results,
        same_op_device_time_share=share,
        share_target_met=share >= 0.99,
        overhead_agent_vs_kineto=min(timings["agent"]) / min(timings["kineto"]),
        timings=timings,
        fixture=os.path.join(OUT, "agent", "capture.fpc"),
    )
    with open(os.path.join(OUT, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    for mode in ("kineto", "agent"):
        r = results[mode]
        print("gpu-check: %-6s counts %s flows paired %d/%d" % (mode, r["counts"], r["flows"]["paired"], r["flows"]["ids"]))
    a = results["agent"]
    print("gpu-check: agent window: %d of %d events inside, mangled kernel names %d, generic runtime names %d, dropped %d"
          % (a["window"]["inside"], a["window"]["events"], a["mangled_kernel_names"], a["generic_runtime_names"], a["dropped"]))
    print("gpu-check: device time attributed to the same op in both modes: %.2f%% (target >= 99%%)" % (share * 100))
    print("gpu-check: agent / kineto wall time of the profiled region: %.3fx" % report["overhead_agent_vs_kineto"])
    print("gpu-check: report in %s" % os.path.join(OUT, "report.json"))


if __name__ == "__main__":
    main()
