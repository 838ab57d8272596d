/** A real torchrun job under `flagprof profile`: the 2-rank CPU DDP fixture with the gloo backend. */
import path from 'node:path';
import { runCli } from './cli';
import { PYTHON, ROOT } from './paths';

export const LAUNCH = path.join(ROOT, 'test', 'fixtures', 'launch');
export const DDP_SCRIPT = path.join(LAUNCH, 'ddp_gloo.py');
// Two ranks importing torch at once on a loaded machine, and torchrun's own start.
export const TORCHRUN_TIMEOUT = 480_000;
// localhost:0: the c10d rendezvous store takes a free port, so parallel runs never collide.
export const TORCHRUN = [
  'torchrun',
  '--nproc-per-node',
  '2',
  '--rdzv-backend=c10d',
  '--rdzv-endpoint=localhost:0',
];

/** Profiles ddp_gloo.py on 2 ranks into OUT (cpu mode); `flags` go before `--`, `args` to the script. */
export function profileRanks(out: string, args: string[], flags: string[] = []) {
  return runCli(
    [
      'profile',
      '--out',
      out,
      '--python',
      PYTHON,
      '--mode',
      'cpu',
      ...flags,
      '--',
      ...TORCHRUN,
      'ddp_gloo.py',
      ...args,
    ],
    // Before the test's own timeout, so a stuck job is reported with what it printed.
    { cwd: LAUNCH, timeoutMs: TORCHRUN_TIMEOUT - 30_000 },
  );
}
