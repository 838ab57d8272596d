"""The flagos backend's workload for the integration test, against whichever fake vendor library
FLAGOS_TRACER_LIBRARY names: results on "flagos" against the CPU, the legacy profiler's device time per op, and
optionally an agent capture (--capture) and, when the backend was built with the Kineto adaptor, a torch.profiler
trace over it (--kineto).

usage: workload.py OUT_DIR [--capture] [--kineto]
Writes OUT_DIR/result.json (and capture.fpc, trace.json); exits 1 with a one-line reason on failure.
"""
import copy
import json
import os
import sys

out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)

try:
    import flagos_backend
except RuntimeError as exc:
    print(str(exc).splitlines()[0], file=sys.stderr)
    sys.exit(1)

import torch  # noqa: E402

result = {"family": flagos_backend.tracer_family(), "adaptor": flagos_backend.has_kineto_adaptor(), "checks": {}}


def check(name, ok):
    result["checks"][name] = bool(ok)


def matmul_relu(a, b):
    return torch.relu(a @ b)


def train(model, x, y, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


torch.manual_seed(0)
a, b = torch.randn(64, 32), torch.randn(32, 48)
da, db = a.to("flagos"), b.to("flagos")
check("device", da.device.type == "flagos" and da.is_flagos)
check("roundtrip", torch.equal(da.cpu(), a))
check("matmul", torch.allclose((da @ db).cpu(), a @ b, atol=1e-5))
check("relu", torch.allclose(matmul_relu(da, db).cpu(), matmul_relu(a, b), atol=1e-5))
check("add_mul_sum", torch.allclose(((da + 1) * da).sum().cpu(), ((a + 1) * a).sum(), rtol=1e-5))
check("item", abs(da.sum().item() - a.sum().item()) < 1e-3)
check("zeros", torch.count_nonzero(torch.zeros(5, device="flagos").cpu()).item() == 0)
# Ops without a kernel of their own run the CPU kernel on the device memory: views, in-place, out=, lists.
check("views", torch.equal(da[1:3, ::2].t().cpu(), a[1:3, ::2].t()) and torch.equal(da.view(-1).cpu(), a.view(-1)))
check("inplace", torch.equal(da.clone().mul_(2).add_(1).cpu(), a * 2 + 1))
check("cat_max", torch.equal(torch.cat([da, da]).max(dim=1).values.cpu(), torch.cat([a, a]).max(dim=1).values))
check("factory", torch.equal(torch.arange(7, device="flagos").cpu(), torch.arange(7)))

model = torch.nn.Sequential(torch.nn.Linear(32, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
device_model = copy.deepcopy(model).to("flagos")
x, y = torch.randn(8, 32), torch.randn(8, 4)
cpu_losses = train(model, x, y, 3)
device_losses = train(device_model, x.to("flagos"), y.to("flagos"), 3)
check("linear_sgd_losses", all(abs(p - q) < 1e-5 for p, q in zip(cpu_losses, device_losses)))
check("linear_sgd_weights", all(torch.allclose(p.detach(), q.detach().cpu(), atol=1e-5)
                                for p, q in zip(model.parameters(), device_model.parameters())))
check("grad_on_device", all(p.grad is not None and p.grad.device.type == "flagos"
                            for p in device_model.parameters()))
result["losses"] = device_losses

# The legacy path: ProfilerStubs events read the device clock around each op.
big_a, big_b = torch.randn(256, 256).to("flagos"), torch.randn(256, 256).to("flagos")
clock_before = flagos_backend.device_clock_ns()
with torch.autograd.profiler.profile(use_device="flagos") as prof:
    for _ in range(3):
        matmul_relu(big_a, big_b)
    torch.flagos.synchronize()
result["device_clock_ns"] = flagos_backend.device_clock_ns() - clock_before
legacy = {}
for event in prof.key_averages():
    if event.key in ("aten::mm", "aten::relu"):
        entry = legacy.setdefault(event.key, {"count": 0, "device_time_us": 0})
        entry["count"] += event.count
        entry["device_time_us"] += event.self_device_time_total
result["legacy"] = legacy

if "--capture" in sys.argv:
    # The kernels the backend launched, as the vendor library recorded them for the capture agent.
    from flagprof_agent import native

    capture = native.open_capture(out_dir)
    capture.start()
    matmul_relu(big_a, big_b).sum().cpu()
    torch.zeros(16, device="flagos")
    torch.flagos.synchronize()
    capture.stop()
    result["capture"] = capture.close()

if "--kineto" in sys.argv and flagos_backend.has_kineto_adaptor():
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as kineto_prof:
        train(device_model, x.to("flagos"), y.to("flagos"), 2)
        matmul_relu(big_a, big_b).cpu()
        torch.flagos.synchronize()
    kineto_prof.export_chrome_trace(os.path.join(out_dir, "trace.json"))
    result["trace"] = os.path.join(out_dir, "trace.json")

with open(os.path.join(out_dir, "result.json"), "w") as f:
    json.dump(result, f, indent=1)
print(json.dumps(result["checks"]))
