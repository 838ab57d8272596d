/**
 * The CUPTI tracer (cupti_device_tracer.cc), shared by CUDA, MetaX MCPTI and PPU: arming, activity enables at
 * load, session start and stop, flushes, records without timing and the per-buffer record cap. Its clock sample,
 * setup results, buffers, allocation failure and layout self-check are read by the templates every vendor shares
 * (./activity.ts).
 */
import type { Rule } from './rule';
import { F, R, U, n, rx, info, keyValues, wordValues, resultSeverity } from './rule';

export const CUPTI_RULES: readonly Rule[] = [
  {
    lines: [{ code: 'C1', component: 'cupti' }],
    pattern: rx(F, 'CUPTI not available, tracer not armed'),
    parse: () => ({
      severity: 'warning',
      message: 'No usable CUPTI library or symbols: the tracer is not armed.',
    }),
  },
  {
    lines: [{ code: 'C2', component: 'cupti' }],
    pattern: rx(F, 'Registering CUPTI activity callbacks\\.\\.\\.'),
    parse: () => info('Registering activity buffer callbacks at load (before the first device context).'),
  },
  {
    lines: [{ code: 'C3', component: 'cupti' }],
    pattern: rx(F, `ActivityRegisterCallbacks result: ${R}`),
    parse: (m) => ({
      severity: resultSeverity(n(m[1]), 'error'),
      message:
        n(m[1]) === 0
          ? 'Buffer callbacks registered.'
          : 'Buffer callback registration failed: buffers will never arrive.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    lines: [{ code: 'C4', component: 'cupti' }],
    pattern: rx(F, 'init ActivityEnable (.*)', false),
    parse: (m) => {
      const counts = keyValues(m[1]);
      const fields = wordValues(m[1]);
      // A kind reported as 'skipped' was not enabled; KERNEL and CONCURRENT_KERNEL exclude each other on PPU.
      const enabled = (k: string): boolean => counts[k] === 0;
      const noKernels = !enabled('CONCURRENT_KERNEL') && !enabled('KERNEL');
      const other = Object.entries(counts).some(
        ([k, v]) => v !== 0 && k !== 'CONCURRENT_KERNEL' && k !== 'KERNEL',
      );
      return {
        severity: noKernels ? 'error' : other ? 'warning' : 'info',
        message: noKernels
          ? 'Neither kernel activity kind could be enabled at load: no kernels will be recorded.'
          : other
            ? 'A device activity kind could not be enabled at load.'
            : 'Device activity kinds enabled at load (runtime and external correlation wait for start()).',
        counts,
        fields,
      };
    },
  },
  {
    lines: [{ code: 'C5', component: 'cupti' }],
    pattern: rx(F, 'CUPTI not available in start\\(\\)'),
    parse: () => ({ severity: 'warning', message: 'start() found no CUPTI library.' }),
  },
  {
    lines: [{ code: 'C7', component: 'cupti' }],
    pattern: rx(F, 'CuptiDeviceTracer::start\\(\\) called'),
    parse: () => info('Tracer session start.'),
  },
  {
    lines: [{ code: 'C9', component: 'cupti' }],
    pattern: rx(F, `Initial ActivityFlushAll result: ${R}`),
    parse: (m) => ({
      severity: resultSeverity(n(m[1])),
      message: 'Initial flush at session start.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    lines: [{ code: 'C10', component: 'cupti' }],
    pattern: rx(F, 'CuptiDeviceTracer::stop\\(\\) called'),
    parse: () => info('Tracer session stop.'),
  },
  {
    lines: [{ code: 'C11', component: 'cupti' }],
    pattern: rx(F, 'Flushing CUPTI activities\\.\\.\\.'),
    parse: () => info('Flushing activity buffers.'),
  },
  {
    lines: [{ code: 'C12', component: 'cupti' }],
    pattern: rx(F, `ActivityFlushAll result: ${R}`),
    parse: (m) => ({
      severity: resultSeverity(n(m[1])),
      message: 'Flush at session stop returned.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    lines: [{ code: 'C15', component: 'cupti' }],
    pattern: rx(F, 'skipping (kernel|memcpy|memset|runtime) record with no timing'),
    parse: (m) => ({
      severity: 'debug',
      message: `A ${m[1]} record without timestamps was skipped (vendor 'no timing' sentinel).`,
      counts: { recordsDropped: 1 },
      fields: { kind: m[1] },
    }),
  },
  {
    lines: [{ code: 'C17', component: 'cupti' }],
    ungated: true,
    pattern: rx(
      F,
      `processBuffer (?:hit the per-buffer record bound|exceeded max record count) \\(${U}\\) for buffer size ${U} bytes(.*)`,
      false,
    ),
    parse: (m) => ({
      severity: 'warning',
      message: 'A buffer hit the per-buffer record cap: the tail of that buffer is missing from the trace.',
      counts: { recordBound: n(m[1]), bufferBytes: n(m[2]) },
      fields: { vintage: m[0].includes('exceeded max record count') ? 'A' : 'B' },
    }),
  },
];
