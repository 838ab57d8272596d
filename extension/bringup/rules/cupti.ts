/**
 * The CUPTI tracer (cupti_device_tracer.cc), shared by CUDA, MetaX MCPTI and PPU: arming, activity enables, the
 * clock sample, buffer requests and completions, and the record layout self-check.
 */
import type { Rule } from './rule';
import {
  F,
  R,
  U,
  n,
  rx,
  info,
  keyValues,
  wordValues,
  resultSeverity,
  bufferRequested,
  bufferCompleted,
  setupSeverity,
} from './rule';

export const CUPTI_RULES: readonly Rule[] = [
  {
    code: 'C1',
    component: 'cupti',
    pattern: rx(F, 'CUPTI not available, tracer not armed'),
    parse: () => ({
      severity: 'warning',
      message: 'No usable CUPTI library or symbols: the tracer is not armed.',
    }),
  },
  {
    code: 'C2',
    component: 'cupti',
    pattern: rx(F, 'Registering CUPTI activity callbacks\\.\\.\\.'),
    parse: () => info('Registering activity buffer callbacks at load (before the first device context).'),
  },
  {
    code: 'C3',
    component: 'cupti',
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
    code: 'C4',
    component: 'cupti',
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
    code: 'C5',
    component: 'cupti',
    pattern: rx(F, 'CUPTI not available in start\\(\\)'),
    parse: () => ({ severity: 'warning', message: 'start() found no CUPTI library.' }),
  },
  {
    code: 'C6',
    component: 'cupti',
    pattern: rx(F, `clock sample result=${R} vendor=${U} realtime=${U}`),
    parse: (m) => {
      const ok = n(m[1]) === 0 && m[2] !== '0';
      return {
        severity: ok ? 'info' : 'warning',
        message: ok
          ? 'Clock sample (vendor against CLOCK_REALTIME).'
          : 'Clock sample failed: timestamps stay in the vendor clock and most events will fall outside the window.',
        counts: { result: n(m[1]) },
        fields: { vendor: m[2], realtime: m[3] },
      };
    },
  },
  {
    code: 'C7',
    component: 'cupti',
    pattern: rx(F, 'CuptiDeviceTracer::start\\(\\) called'),
    parse: () => info('Tracer session start.'),
  },
  {
    code: 'C8',
    component: 'cupti',
    pattern: rx(F, 'Activity setup results: (.*)', false),
    parse: (m) => {
      const counts = keyValues(m[1]);
      const fields = wordValues(m[1]);
      const severity = setupSeverity(counts, ['RUNTIME', 'EXTERNAL_CORRELATION', 'CALLBACKS']);
      const message = {
        error:
          'Session setup failed for CALLBACKS, RUNTIME or EXTERNAL_CORRELATION: no runtime events or no device-time attribution.',
        warning: 'An activity kind could not be enabled at session start.',
        info: 'All activity kinds enabled at session start.',
      }[severity];
      return { severity, message, counts, fields };
    },
  },
  {
    code: 'C9',
    component: 'cupti',
    pattern: rx(F, `Initial ActivityFlushAll result: ${R}`),
    parse: (m) => ({
      severity: resultSeverity(n(m[1])),
      message: 'Initial flush at session start.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    code: 'C10',
    component: 'cupti',
    pattern: rx(F, 'CuptiDeviceTracer::stop\\(\\) called'),
    parse: () => info('Tracer session stop.'),
  },
  {
    code: 'C11',
    component: 'cupti',
    pattern: rx(F, 'Flushing CUPTI activities\\.\\.\\.'),
    parse: () => info('Flushing activity buffers.'),
  },
  {
    code: 'C12',
    component: 'cupti',
    pattern: rx(F, `ActivityFlushAll result: ${R}`),
    parse: (m) => ({
      severity: resultSeverity(n(m[1])),
      message: 'Flush at session stop returned.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    code: 'C13',
    component: 'cupti',
    pattern: rx(F, 'CUPTI bufferRequested callback invoked'),
    parse: bufferRequested,
  },
  {
    code: 'C14',
    component: 'cupti',
    pattern: rx(F, `CUPTI bufferCompleted callback invoked, validSize=${U}`),
    parse: bufferCompleted,
  },
  {
    code: 'C15',
    component: 'cupti',
    pattern: rx(F, 'skipping (kernel|memcpy|memset|runtime) record with no timing'),
    parse: (m) => ({
      severity: 'debug',
      message: `A ${m[1]} record without timestamps was skipped (vendor 'no timing' sentinel).`,
      counts: { recordsDropped: 1 },
      fields: { kind: m[1] },
    }),
  },
  {
    code: 'C16',
    component: 'cupti',
    ungated: true,
    multiline: true,
    pattern: rx(F, 'CUPTI activity records failed the layout self-check \\((.*)\\)\\.'),
    parse: (m) => ({
      severity: 'error',
      message: `Activity record layout does not match the bound library (${m[1]}): affected records are dropped. Point FLAGOS_TRACER_LIBRARY at a matching library.`,
      fields: { reason: m[1] },
    }),
    // The continuation names the library the shim bound, and its variable tells the vintage.
    continuation: (fields, raw) => {
      const m = /bound CUPTI: (.*) \(API version (\d+)\)/.exec(raw);
      if (m) {
        fields.library = m[1];
        fields.apiVersion = m[2];
      }
      if (raw.includes('FLAGOS_CUPTI_LIBRARY')) fields.vintage = 'A';
      else if (raw.includes('FLAGOS_TRACER_LIBRARY')) fields.vintage = 'B';
    },
  },
  {
    code: 'C17',
    component: 'cupti',
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
  {
    code: 'C18',
    component: 'cupti',
    ungated: true,
    pattern: rx(F, `CUPTI activity buffer allocation failed \\(${U} bytes\\)(.*)`, false),
    parse: (m) => ({
      severity: 'warning',
      message: 'Host allocation of an activity buffer failed: records are dropped while memory is short.',
      counts: { bufferBytes: n(m[1]) },
    }),
  },
];
