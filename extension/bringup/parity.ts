/**
 * The parity workload of torch_fl profiler.md §5 (5× matmul+relu on 1024×1024, a 16-element sort, a device-to-host copy), as
 * a script for any device: cuda, a PrivateUse1 backend's name (torch_fl's "flagos", ...) or cpu. Profiled like any
 * other file through extension/capture, so the checks see exactly what a user's run would produce.
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { startCapture, type CaptureOptions, type CaptureRun } from '../capture/launcher';
import { createSessionDir } from '../capture/sessions';

export const PARITY_SCRIPT_NAME = 'flagos_parity_workload.py';

/** A device string torch accepts: a backend name with an optional ordinal. */
export function validDevice(device: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*(:\d+)?$/.test(device);
}

export function parityWorkloadSource(device: string): string {
  if (!validDevice(device)) throw new Error(`not a torch device name: '${device}'`);
  return `"""FlagOS parity workload (the structural parity checks' reference workload).

5x (x @ y).relu() on 1024x1024, a 16-element sort (its bitonic-sort kernel runs a 16-thread block), and a
device-to-host copy (.item()), which also waits for the device so its work lands inside the capture window.
Run it under FlagOS: Run Parity Workload, or: flagprof profile -- ${PARITY_SCRIPT_NAME} [--device NAME]
"""
import sys

import torch

# The device it was written for; --device NAME overrides it (other arguments are ignored).
DEVICE = ${JSON.stringify(device)}
if "--device" in sys.argv[1:-1]:
    DEVICE = sys.argv[sys.argv.index("--device") + 1]
backend = DEVICE.split(":")[0]

if backend == "cuda":
    if not torch.cuda.is_available():
        sys.exit("FlagOS parity workload: device 'cuda' was chosen but torch.cuda.is_available() is False")
elif backend != "cpu":
    try:
        import torch_fl  # noqa: F401  (registers the PrivateUse1 backend and its profiler plugin)
    except ImportError:
        pass
    registered = torch._C._get_privateuse1_backend_name()
    if registered != backend:
        sys.exit(
            f"FlagOS parity workload: device '{DEVICE}' is not available: "
            f"this torch's PrivateUse1 backend is '{registered}'"
        )


def synchronize():
    module = getattr(torch, backend, None)
    if module is not None and hasattr(module, "synchronize"):
        module.synchronize()


x = torch.randn(1024, 1024, device=DEVICE)
y = torch.randn(1024, 1024, device=DEVICE)
small = torch.randn(16, device=DEVICE)
synchronize()

for _ in range(5):
    z = (x @ y).relu()
values, indices = torch.sort(small)
total = z.sum().item()

print(f"parity workload on {DEVICE}: sum={total:.3f}, smallest={values[0].item():.3f}")
`;
}

export function writeParityWorkload(folder: string, device: string): string {
  mkdirSync(folder, { recursive: true });
  const file = path.join(folder, PARITY_SCRIPT_NAME);
  writeFileSync(file, parityWorkloadSource(device));
  return file;
}

export interface ParityRunOptions extends Omit<CaptureOptions, 'script' | 'sessionDir' | 'args'> {
  device: string;
  /** Where the workload file and its session folders go. */
  folder: string;
}

/** Writes the workload and starts profiling it; the session folder is in run.options.sessionDir. */
export function startParityRun(options: ParityRunOptions): CaptureRun {
  const { device, folder, ...capture } = options;
  const script = writeParityWorkload(folder, device);
  const sessionDir = createSessionDir(path.join(folder, 'sessions'), script);
  return startCapture({ ...capture, script, args: [], sessionDir, cwd: folder });
}
