/**
 * The MSPTI tracer (Huawei Ascend): the lines only it prints, the subscription and the optional copy kinds. Its
 * library, binding, enables, setup results, buffers, flush, layout self-check and sessions are read by the
 * templates every vendor shares (./activity.ts).
 */
import type { Rule } from './rule';
import { F, R, n, rx } from './rule';

export const MSPTI_RULES: readonly Rule[] = [
  {
    lines: [{ code: 'M2', component: 'mspti' }],
    pattern: rx(F, `msptiSubscribe failed: ${R}`),
    parse: (m) => ({
      severity: 'error',
      message:
        n(m[1]) === 2
          ? 'msptiSubscribe failed: another MSPTI subscriber (another profiler) owns the process. Session aborted.'
          : 'msptiSubscribe failed: session aborted.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    lines: [{ code: 'M5', component: 'mspti' }],
    pattern: rx(F, 'MSPTI memcpy activity unavailable'),
    parse: () => ({
      severity: 'warning',
      message:
        'MSPTI memcpy activity refused: libmspti.so was probably not LD_PRELOADed at process start. No gpu_memcpy records.',
      counts: { MEMCPY: 1 },
    }),
  },
  {
    lines: [{ code: 'M6', component: 'mspti' }],
    pattern: rx(F, 'MSPTI memset activity unavailable'),
    parse: () => ({
      severity: 'warning',
      message: 'MSPTI memset activity refused (needs the process-start preload). No gpu_memset records.',
      counts: { MEMSET: 1 },
    }),
  },
];
