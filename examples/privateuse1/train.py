"""A small training run on the "flagos" test device: a 2-layer MLP, 10 SGD steps, the loss printed each step.

The flagos device computes on the CPU and launches its device work through a fake vendor library, so this script
can be profiled the way a PrivateUse1 accelerator is, without the hardware (see README.md beside it).
"""
import sys

try:
    import flagos_backend  # noqa: F401  (registers the "flagos" device)
except RuntimeError as exc:
    print("train.py: %s" % str(exc).splitlines()[0], file=sys.stderr)
    sys.exit(1)

import torch  # noqa: E402

torch.manual_seed(0)
device = torch.device("flagos")
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
inputs = torch.randn(256, 64).to(device)
targets = torch.randn(256, 10).to(device)

# Backward runs on this thread, not on autograd's thread for the device. On that thread the last backward's state
# is released after backward() has returned here, and releasing it takes the GIL (torch 2.13 keeps a Python
# context in it); when the script has ended by then, CPython 3.11 ends that thread inside torch's C++ and the
# process aborts at exit ("terminate called without an active exception"), a few times in a hundred on a busy
# machine. The device work is the same either way.
with torch.autograd.set_multithreading_enabled(False):
    for step in range(10):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        print("step %d loss %.4f" % (step, loss.item()))
