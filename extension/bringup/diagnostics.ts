/**
 * FLAGOS_TRACE output -> Diagnostic[]. Patterns follow the torch_fl tracer family's stderr lines (both the
 * per-component *_DEBUG vintage and the FLAGOS_TRACE vintage); the product's agent adds structured frames.
 * Matching is on full patterns, never on the prefix alone: other torch_fl code prints '[flagos] ...' too.
 */
import type { Component, Diagnostic, DiagnosticFrame, DiagnosticsSummary, Severity } from './types';
import { COMPONENTS, SEVERITIES } from './types';

/** EventKind codes printed as kind=<K>. */
export const EVENT_KIND_NAMES = ['kernel', 'memcpy', 'memset', 'runtime'] as const;

function kindName(code: string): string {
  return EVENT_KIND_NAMES[Number(code)] ?? `kind${code}`;
}

interface Parsed {
  severity: Severity;
  message: string;
  counts?: Record<string, number>;
  fields?: Record<string, string>;
}

interface Rule {
  code: string;
  component: Component;
  /** Matched against the text from the '[flagos' prefix on. */
  pattern: RegExp;
  ungated?: boolean;
  /** Header of a warning whose continuation lines ('[flagos]   ...') belong to it. */
  multiline?: boolean;
  parse(m: RegExpExecArray): Parsed;
}

const n = Number;
const F = '\\[flagos\\] ';
const SHIM = '\\[flagos-cupti-shim\\] ';
const R = '(-?\\d+)';
const U = '(\\d+)';

function rx(prefix: string, body: string, anchoredEnd = true): RegExp {
  return new RegExp(`^${prefix}${body}${anchoredEnd ? '\\s*$' : ''}`);
}

function resultSeverity(result: number, bad: Severity = 'warning'): Severity {
  return result === 0 ? 'info' : bad;
}

/** Parses 'A=1, B=2' and 'A=1 B=2' lists into counts. */
function keyValues(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/([A-Z_a-z][A-Z_a-z0-9]*)=(-?\d+)/g)) out[m[1]] = n(m[2]);
  return out;
}

/** Non-numeric values of a key=value list ('KERNEL=skipped'). */
function wordValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/([A-Z_][A-Z_0-9]*)=([A-Za-z][\w-]*)/g)) out[m[1]] = m[2];
  return out;
}

function info(message: string, counts?: Record<string, number>, fields?: Record<string, string>): Parsed {
  return { severity: 'info', message, counts, fields };
}

const RULES: Rule[] = [
  // ---- adaptor (flagos_kineto_profiler.cc)
  {
    code: 'A1',
    component: 'adaptor',
    pattern: rx(F, 'FlagosKinetoProfiler registered with kineto'),
    parse: () => info('Device profiler plugin registered with kineto.'),
  },
  {
    code: 'A2',
    component: 'adaptor',
    pattern: rx(F, 'no device tracer available, FlagosKinetoProfiler not registered'),
    parse: () => ({
      severity: 'warning',
      message:
        'No device tracer available: profiles will hold CPU events only (look for the shim lines, or a build without the vendor SDK).',
    }),
  },
  {
    code: 'A3',
    component: 'adaptor',
    pattern: rx(F, `FlagosKinetoProfiler::configure called with ${U} activity types`),
    parse: (m) =>
      info(`kineto asked the plugin for a session (${m[1]} activity types).`, { activityTypes: n(m[1]) }),
  },
  {
    code: 'A4',
    component: 'adaptor',
    pattern: rx(F, `session stop: drained ${U} (?:device )?events`),
    parse: (m) => {
      const drained = n(m[1]);
      return drained === 0
        ? {
            severity: 'warning',
            message:
              'Session stopped with 0 events drained: the vendor tracer collected nothing (check arming, buffer completion, layout warnings).',
            counts: { eventsDrained: 0 },
          }
        : info(`Session stopped: ${drained} events drained (runtime events included).`, {
            eventsDrained: drained,
          });
    },
  },
  {
    code: 'A5',
    component: 'adaptor',
    pattern: rx(F, `processTrace\\(1-arg\\) called with ${U} events`),
    parse: (m) => ({
      severity: 'error',
      message:
        'kineto used the one-argument processTrace: no window filtering, no CPU-op linkage (device time stays 0), no flow arrows. Override the four-argument form.',
      counts: { events: n(m[1]) },
    }),
  },
  {
    code: 'A6',
    component: 'adaptor',
    pattern: rx(F, `processTrace\\(4-arg\\) called with ${U} events, window=\\[${R},${R}\\]`),
    parse: (m) =>
      info(
        `processTrace received ${m[1]} events and the capture window.`,
        { events: n(m[1]) },
        {
          windowStart: m[2],
          windowEnd: m[3],
        },
      ),
  },
  {
    code: 'A7',
    component: 'adaptor',
    pattern: rx(F, `processTrace events by kind: kernel=${U} memcpy=${U} memset=${U} runtime=${U}`),
    parse: (m) => {
      const counts = { kernel: n(m[1]), memcpy: n(m[2]), memset: n(m[3]), runtime: n(m[4]) };
      return counts.kernel === 0 && counts.runtime > 0
        ? {
            severity: 'warning',
            message:
              'Runtime launches were seen but no kernel records: the kernel activity kind is not enabled, records were rejected, or a flush was lost.',
            counts,
          }
        : info('Events by kind before window filtering.', counts);
    },
  },
  {
    code: 'A8',
    component: 'adaptor',
    pattern: rx(F, `First event: kind=${U} start=${U} end=${U}`),
    parse: (m) => info(`First event (${kindName(m[1])}).`, { kind: n(m[1]) }, { start: m[2], end: m[3] }),
  },
  {
    code: 'A9',
    component: 'adaptor',
    pattern: rx(F, `Last event: kind=${U} start=${U} end=${U}`),
    parse: (m) => info(`Last event (${kindName(m[1])}).`, { kind: n(m[1]) }, { start: m[2], end: m[3] }),
  },
  {
    code: 'A10',
    component: 'adaptor',
    pattern: rx(F, `Device event #${U}: kind=${U} start=${U} end=${U} window=\\[${R},${R}\\]`),
    parse: (m) =>
      info(
        `Device event #${m[1]} (${kindName(m[2])}) against the window.`,
        { index: n(m[1]), kind: n(m[2]) },
        { start: m[3], end: m[4], windowStart: m[5], windowEnd: m[6] },
      ),
  },
  {
    code: 'A11',
    component: 'adaptor',
    pattern: rx(F, `Found ${U}/${U} device events in window`),
    parse: (m) => {
      const inWindow = n(m[1]);
      const total = n(m[2]);
      return inWindow === 0 && total > 0
        ? {
            severity: 'error',
            message: `0 of ${total} device events fall in the capture window: vendor timestamps are not epoch ns (clock domain), or the window is wrong.`,
            counts: { inWindow, total },
          }
        : info(`${inWindow} of ${total} device events in the capture window.`, { inWindow, total });
    },
  },
  {
    code: 'A12',
    component: 'adaptor',
    ungated: true,
    multiline: true,
    pattern: rx(F, 'kineto called processTrace with an EMPTY getLinkedActivity callback\\.'),
    parse: () => ({
      severity: 'error',
      message:
        'kineto handed the plugin no linked-activity resolver: self device time will read 0 for every op. The fix is on the torch/libkineto side.',
    }),
  },
  {
    code: 'A13',
    component: 'adaptor',
    pattern: rx(F, 'First 10 events_ kinds:(.*)', false),
    parse: (m) => {
      const kinds = m[1].trim().split(/\s+/).filter(Boolean);
      return {
        severity: 'debug',
        message: 'Kinds of the first events (ordering hint).',
        fields: { kinds: kinds.join(' ') },
      };
    },
  },
  {
    code: 'A14',
    component: 'adaptor',
    pattern: rx(F, `Dropped device event: kind=${U} start=${U} end=${U} \\(window=\\[${R},${R}\\]\\)`),
    parse: (m) => ({
      severity: 'debug',
      message: `A ${kindName(m[1])} event outside the capture window was dropped.`,
      counts: { kind: n(m[1]) },
      fields: { start: m[2], end: m[3], windowStart: m[4], windowEnd: m[5] },
    }),
  },
  {
    code: 'A15',
    component: 'adaptor',
    pattern: rx(F, `toActivity: kind=${U} -> activityType=${U} name=(.*)`, false),
    parse: (m) => ({
      severity: 'debug',
      message: `${kindName(m[1])} event converted to kineto activity type ${m[2]}.`,
      counts: { kind: n(m[1]), activityType: n(m[2]) },
      fields: { name: m[3] },
    }),
  },
  {
    code: 'A16',
    component: 'adaptor',
    pattern: rx(
      F,
      `processTrace\\(4-arg\\) linked ${U}/${U} link candidates \\(of ${U} events, resolver=(present|EMPTY)\\), dropped ${U} outside window \\(kernel=${U} memcpy=${U} memset=${U} runtime=${U}\\)`,
    ),
    parse: (m) => {
      const counts = {
        linked: n(m[1]),
        candidates: n(m[2]),
        events: n(m[3]),
        dropped: n(m[5]),
        droppedKernel: n(m[6]),
        droppedMemcpy: n(m[7]),
        droppedMemset: n(m[8]),
        droppedRuntime: n(m[9]),
      };
      const fields = { resolver: m[4] };
      if (m[4] === 'EMPTY')
        return {
          severity: 'error',
          message: 'processTrace had no linked-activity resolver: device time cannot be attributed to ops.',
          counts,
          fields,
        };
      if (counts.candidates > 0 && counts.linked === 0)
        return {
          severity: 'error',
          message: `0 of ${counts.candidates} link candidates matched a CPU op: the ids handed to getLinkedActivity are the vendor correlation ids, not torch's External ids.`,
          counts,
          fields,
        };
      if (counts.candidates === 0 && counts.events > 0)
        return {
          severity: 'warning',
          message:
            'No event carried a torch correlation id: EXTERNAL_CORRELATION is not armed or push/pop does not reach the vendor library.',
          counts,
          fields,
        };
      return info(
        `Linked ${counts.linked}/${counts.candidates} candidates to CPU ops; ${counts.dropped} of ${counts.events} events dropped outside the window.`,
        counts,
        fields,
      );
    },
  },

  // ---- the product's own agent (native/agent): its lines reuse the catalogue's ids with its own wording
  {
    code: 'A4',
    component: 'agent',
    pattern: rx(
      F,
      `session stop: copied kernel=${U} memcpy=${U} memset=${U} runtime=${U} driver=${U} external=${U} records, dropped ${U}`,
    ),
    parse: (m) => {
      const counts = {
        kernel: n(m[1]),
        memcpy: n(m[2]),
        memset: n(m[3]),
        runtime: n(m[4]),
        driver: n(m[5]),
        external: n(m[6]),
        recordsDropped: n(m[7]),
      };
      const drained = counts.kernel + counts.memcpy + counts.memset + counts.runtime + counts.driver;
      const all = { ...counts, eventsDrained: drained };
      if (drained === 0)
        return {
          severity: 'warning',
          message: 'The agent copied no records at session stop: the vendor library delivered nothing.',
          counts: all,
        };
      return {
        severity: counts.recordsDropped > 0 ? 'warning' : 'info',
        message: `The agent copied ${drained} records${counts.external ? ` and ${counts.external} external correlations` : ''}; ${counts.recordsDropped} dropped.`,
        counts: all,
      };
    },
  },
  {
    code: 'A12',
    component: 'agent',
    ungated: true,
    multiline: true,
    pattern: rx(F, `the capture holds ${U} device records but no runtime records: (.*)`, false),
    parse: (m) => ({
      severity: 'error',
      message: `${m[1]} device records but no runtime records: device activity cannot be linked to the ops that launched it (runtime activity not enabled at start).`,
      counts: { device: n(m[1]) },
    }),
  },

  // ---- CUPTI tracer (cupti_device_tracer.cc: CUDA, MetaX MCPTI, PPU)
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
      const critical =
        (counts.RUNTIME ?? 0) !== 0 ||
        (counts.EXTERNAL_CORRELATION ?? 0) !== 0 ||
        (counts.CALLBACKS ?? 0) !== 0;
      const any = Object.values(counts).some((v) => v !== 0);
      return {
        severity: critical ? 'error' : any ? 'warning' : 'info',
        message: critical
          ? 'Session setup failed for CALLBACKS, RUNTIME or EXTERNAL_CORRELATION: no runtime events or no device-time attribution.'
          : any
            ? 'An activity kind could not be enabled at session start.'
            : 'All activity kinds enabled at session start.',
        counts,
        fields,
      };
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
    parse: () => ({
      severity: 'debug',
      message: 'Activity buffer requested.',
      counts: { buffersRequested: 1 },
    }),
  },
  {
    code: 'C14',
    component: 'cupti',
    pattern: rx(F, `CUPTI bufferCompleted callback invoked, validSize=${U}`),
    parse: (m) =>
      m[1] === '0'
        ? {
            severity: 'warning',
            message: 'An activity buffer completed empty.',
            counts: { buffersCompleted: 1, validSize: 0 },
          }
        : {
            severity: 'debug',
            message: 'Activity buffer completed.',
            counts: { buffersCompleted: 1, validSize: n(m[1]) },
          },
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

  // ---- CUPTI shim (cupti_shim.h)
  {
    code: 'S1',
    component: 'cupti-shim',
    ungated: true,
    pattern: rx(SHIM, '(FLAGOS_TRACER_LIBRARY|FLAGOS_CUPTI_LIBRARY)=(.*?) could not be loaded: (.*)', false),
    parse: (m) => ({
      severity: 'warning',
      message: `The library override ${m[1]} could not be loaded; the shim fell back to its normal search.`,
      fields: {
        variable: m[1],
        path: m[2],
        error: m[3],
        vintage: m[1] === 'FLAGOS_CUPTI_LIBRARY' ? 'A' : 'B',
      },
    }),
  },
  {
    code: 'S2',
    component: 'cupti-shim',
    pattern: rx(SHIM, `bound cuptiActivityRegisterCallbacks -> (.*) \\(CUPTI API version ${U}\\)`),
    parse: (m) =>
      info(
        `Bound ${m[1]} (API version ${m[2]}).`,
        { apiVersion: n(m[2]) },
        { library: m[1], apiVersion: m[2] },
      ),
  },
  {
    code: 'S3',
    component: 'cupti-shim',
    pattern: rx(SHIM, 'cuptiActivityRegisterCallbacks NOT resolved'),
    parse: () => ({
      severity: 'warning',
      message: 'A library opened but lacks cuptiActivityRegisterCallbacks: tracer unavailable.',
    }),
  },

  // ---- MSPTI (Ascend)
  {
    code: 'M1',
    component: 'mspti',
    pattern: rx(F, 'libmspti is unavailable'),
    parse: () => ({
      severity: 'error',
      message: 'libmspti could not be loaded or lacks a required symbol: session aborted.',
    }),
  },
  {
    code: 'M2',
    component: 'mspti',
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
    code: 'M3',
    component: 'mspti',
    pattern: rx(F, `msptiActivityRegisterCallbacks failed: ${R}`),
    parse: (m) => ({
      severity: 'error',
      message: 'MSPTI buffer callback registration failed: session aborted.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    code: 'M4',
    component: 'mspti',
    pattern: rx(F, `msptiActivityEnable\\(${U}\\) returned ${R}`),
    parse: (m) => {
      const kind = MSPTI_KINDS[m[1]] ?? `kind ${m[1]}`;
      const tolerated = m[1] === '11';
      return {
        severity: tolerated ? 'warning' : 'error',
        message: tolerated
          ? `msptiActivityEnable(${kind}) failed; tolerated (absent in some CANN releases).`
          : `msptiActivityEnable(${kind}) failed: the session is aborted without a further line (no 'MSPTI session started').`,
        counts: { kind: n(m[1]), result: n(m[2]), [kind]: n(m[2]) },
        fields: { kind },
      };
    },
  },
  {
    code: 'M5',
    component: 'mspti',
    pattern: rx(F, 'MSPTI memcpy activity unavailable'),
    parse: () => ({
      severity: 'warning',
      message:
        'MSPTI memcpy activity refused: libmspti.so was probably not LD_PRELOADed at process start. No gpu_memcpy records.',
      counts: { MEMCPY: 1 },
    }),
  },
  {
    code: 'M6',
    component: 'mspti',
    pattern: rx(F, 'MSPTI memset activity unavailable'),
    parse: () => ({
      severity: 'warning',
      message: 'MSPTI memset activity refused (needs the process-start preload). No gpu_memset records.',
      counts: { MEMSET: 1 },
    }),
  },
  {
    code: 'M0',
    component: 'mspti',
    pattern: rx(F, `bound msptiActivityRegisterCallbacks -> (.*) \\(MSPTI version ${U}\\)`),
    parse: (m) =>
      info(
        `Bound ${m[1]} (MSPTI version ${m[2]}).`,
        { apiVersion: n(m[2]) },
        { library: m[1], apiVersion: m[2] },
      ),
  },
  {
    code: 'M9',
    component: 'mspti',
    pattern: rx(F, 'MSPTI activity setup results: (.*)', false),
    parse: (m) => {
      const counts = keyValues(m[1]);
      const critical =
        (counts.API ?? 0) !== 0 || (counts.EXTERNAL_CORRELATION ?? 0) !== 0 || (counts.CALLBACKS ?? 0) !== 0;
      const any = Object.values(counts).some((v) => v !== 0);
      return {
        severity: critical ? 'error' : any ? 'warning' : 'info',
        message: critical
          ? 'Session setup failed for CALLBACKS, API or EXTERNAL_CORRELATION: no API events or no device-time attribution.'
          : any
            ? 'An MSPTI activity kind could not be enabled (MEMCPY/MEMSET need libmspti.so preloaded at process start).'
            : 'All MSPTI activity kinds enabled at session start.',
        counts,
      };
    },
  },
  {
    code: 'M13',
    component: 'mspti',
    pattern: rx(F, 'MSPTI bufferRequested callback invoked'),
    parse: () => ({
      severity: 'debug',
      message: 'Activity buffer requested.',
      counts: { buffersRequested: 1 },
    }),
  },
  {
    code: 'M14',
    component: 'mspti',
    pattern: rx(F, `MSPTI bufferCompleted callback invoked, validSize=${U}`),
    parse: (m) =>
      m[1] === '0'
        ? {
            severity: 'warning',
            message: 'An activity buffer completed empty.',
            counts: { buffersCompleted: 1, validSize: 0 },
          }
        : {
            severity: 'debug',
            message: 'Activity buffer completed.',
            counts: { buffersCompleted: 1, validSize: n(m[1]) },
          },
  },
  {
    code: 'M15',
    component: 'mspti',
    ungated: true,
    pattern: rx(F, `msptiActivityFlushAll returned ${R}: (.*)`, false),
    parse: (m) => ({
      severity: 'warning',
      message: 'The final MSPTI flush failed: the last activity records may be missing.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    code: 'M16',
    component: 'mspti',
    ungated: true,
    multiline: true,
    pattern: rx(F, 'MSPTI activity records failed the layout self-check \\((.*)\\)\\.'),
    parse: (m) => ({
      severity: 'error',
      message: `MSPTI record layout does not match the bound library (${m[1]}): affected records are dropped. Point FLAGOS_TRACER_LIBRARY at the libmspti.so of the running CANN.`,
      fields: { reason: m[1] },
    }),
  },
  {
    code: 'M17',
    component: 'mspti',
    ungated: true,
    pattern: rx(
      F,
      `MSPTI buffer hit the per-buffer record bound \\(${U}\\) for buffer size ${U} bytes(.*)`,
      false,
    ),
    parse: (m) => ({
      severity: 'warning',
      message:
        'An MSPTI buffer hit the per-buffer record cap: the tail of that buffer is missing from the capture.',
      counts: { recordBound: n(m[1]), bufferBytes: n(m[2]) },
    }),
  },
  {
    code: 'M18',
    component: 'mspti',
    ungated: true,
    pattern: rx(F, `MSPTI activity buffer allocation failed \\(${U} bytes\\)(.*)`, false),
    parse: (m) => ({
      severity: 'warning',
      message:
        'Host allocation of an MSPTI activity buffer failed: records are dropped while memory is short.',
      counts: { bufferBytes: n(m[1]) },
    }),
  },
  {
    code: 'M7',
    component: 'mspti',
    pattern: rx(F, 'MSPTI session started'),
    parse: () => info('MSPTI session started.'),
  },
  {
    code: 'M8',
    component: 'mspti',
    pattern: rx(F, 'MSPTI session stopped'),
    parse: () => info('MSPTI session stopped.'),
  },

  // ---- MUPTI (MUSA)
  {
    code: 'U1',
    component: 'mupti',
    pattern: rx(F, `muptiActivityRegisterCallbacks failed: ${R}`),
    parse: (m) => ({
      severity: 'error',
      message: 'MUPTI buffer callback registration failed: session aborted.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    code: 'U2',
    component: 'mupti',
    pattern: rx(F, `muptiActivityEnable\\(([^)]*)\\) failed: ${R}`),
    parse: (m) => ({
      severity: 'warning',
      message: `muptiActivityEnable(${m[1]}) failed: that record family will be missing.`,
      counts: { result: n(m[2]), [m[1]]: n(m[2]) },
      fields: { kind: m[1] },
    }),
  },
  {
    code: 'U3',
    component: 'mupti',
    pattern: rx(F, 'MUPTI session started'),
    parse: () => info('MUPTI session started.'),
  },
  {
    code: 'U4',
    component: 'mupti',
    pattern: rx(F, `MUPTI session stopped with ${U} events`),
    parse: (m) => info(`MUPTI session stopped with ${m[1]} records kept.`, { eventsKept: n(m[1]) }),
  },

  // ---- TOPSPTI (GCU)
  {
    code: 'T1',
    component: 'topspti',
    pattern: rx(F, 'topsptiActivityRegisterCallbacks failed'),
    parse: () => ({
      severity: 'error',
      message: 'TOPSPTI buffer callback registration failed: session aborted.',
    }),
  },
  {
    code: 'T2',
    component: 'topspti',
    pattern: rx(F, 'topsptiActivityEnable\\(([^)]*)\\) failed'),
    parse: (m) => ({
      severity: 'warning',
      message: `topsptiActivityEnable(${m[1]}) failed: that record family will be missing.`,
      counts: { [m[1]]: 1 },
      fields: { kind: m[1] },
    }),
  },
  {
    code: 'T3',
    component: 'topspti',
    pattern: rx(F, 'TOPSPTI session started'),
    parse: () => info('TOPSPTI session started.'),
  },
  {
    code: 'T4',
    component: 'topspti',
    pattern: rx(F, `TOPSPTI session stopped with ${U} events`),
    parse: (m) => info(`TOPSPTI session stopped with ${m[1]} records kept.`, { eventsKept: n(m[1]) }),
  },

  // ---- ROCtracer (DCU)
  {
    code: 'R1',
    component: 'roctracer',
    pattern: rx(F, 'RoctracerDeviceTracer initialized'),
    parse: () => info('ROCtracer tracer constructed.'),
  },
  {
    code: 'R2',
    component: 'roctracer',
    pattern: rx(F, 'RoctracerDeviceTracer::start\\(\\)'),
    parse: () => info('ROCtracer session start.'),
  },
  {
    code: 'R3',
    component: 'roctracer',
    pattern: rx(F, `Clock sync: host_base=${U} gpu_base=${U}`),
    parse: (m) => ({
      severity: m[2] === '0' ? 'warning' : 'info',
      message:
        m[2] === '0'
          ? 'roctracer_get_timestamp failed (gpu_base 0): device times cannot be converted.'
          : 'Clock sync (single offset, no drift correction).',
      fields: { hostBase: m[1], gpuBase: m[2] },
    }),
  },
  ...(
    [
      ['R4', 'roctracer_set_properties', 'warning'],
      ['R5', 'roctracer_enable_domain_callback', 'error'],
      ['R7', 'roctracer_enable_domain_activity_expl\\(HIP_OPS\\)', 'error'],
    ] as const
  ).map(([code, call, bad]): Rule => ({
    code,
    component: 'roctracer',
    pattern: rx(F, `${call}: ${R}`),
    parse: (m) => ({
      severity: resultSeverity(n(m[1]), bad),
      message:
        n(m[1]) === 0
          ? `${call.replace(/\\/g, '')} succeeded.`
          : code === 'R5'
            ? 'HIP API callbacks could not be enabled: no runtime events and no torch-id association.'
            : code === 'R7'
              ? 'HIP_OPS activity could not be enabled: no kernels or copies.'
              : 'roctracer_set_properties failed.',
      counts: { result: n(m[1]) },
    }),
  })),
  {
    code: 'R6',
    component: 'roctracer',
    pattern: rx(F, `roctracer_open_pool_expl: ${R} pool=(\\S+)`),
    parse: (m) => {
      const nullPool = m[2] === '0' || /^0x0+$/.test(m[2]);
      return {
        severity: n(m[1]) !== 0 || nullPool ? 'error' : 'info',
        message: nullPool
          ? 'The activity pool is null: no device activity will arrive.'
          : 'Activity pool opened.',
        counts: { result: n(m[1]) },
        fields: { pool: m[2] },
      };
    },
  },
  {
    code: 'R8',
    component: 'roctracer',
    pattern: rx(F, 'ROCtracer started'),
    parse: () => info('ROCtracer session started.'),
  },
  {
    code: 'R9',
    component: 'roctracer',
    pattern: rx(F, `pushCorrelation\\(${R}\\), stack depth=${U}`),
    parse: (m) => ({
      severity: 'debug',
      message: 'Torch correlation id pushed.',
      counts: { id: n(m[1]), depth: n(m[2]) },
    }),
  },
  {
    code: 'R10',
    component: 'roctracer',
    pattern: rx(F, `popCorrelation\\(\\) popped ${R}, stack depth=${U}`),
    parse: (m) => ({
      severity: 'debug',
      message: 'Torch correlation id popped.',
      counts: { id: n(m[1]), depth: n(m[2]) },
    }),
  },
  {
    code: 'R11',
    component: 'roctracer',
    pattern: rx(F, 'activity_callback ENTRY: begin=(\\S+) end=(\\S+)'),
    parse: (m) => ({
      severity: 'debug',
      message: 'Activity buffer delivered.',
      counts: { buffersCompleted: 1 },
      fields: { begin: m[1], end: m[2] },
    }),
  },
  {
    code: 'R12',
    component: 'roctracer',
    pattern: rx(F, 'activity_callback: max events reached, dropping'),
    parse: () => ({
      severity: 'warning',
      message: 'Event cap reached: the rest of this delivery is lost.',
      counts: { recordsDropped: 1 },
    }),
  },
  {
    code: 'R13',
    component: 'roctracer',
    pattern: rx(F, `async record: domain=${R} kind=0x([0-9a-fA-F]+) op=0x([0-9a-fA-F]+) corr=${R}`),
    parse: (m) => ({
      severity: 'debug',
      message: 'Activity record.',
      counts: { domain: n(m[1]), kind: parseInt(m[2], 16), op: parseInt(m[3], 16), correlation: n(m[4]) },
    }),
  },
  {
    code: 'R14',
    component: 'roctracer',
    pattern: rx(F, `  -> classified as kind=${U}`),
    parse: (m) => ({
      severity: 'debug',
      message: `Record classified as ${kindName(m[1])}.`,
      counts: { kind: n(m[1]) },
    }),
  },
  {
    code: 'R15',
    component: 'roctracer',
    pattern: rx(F, `  -> GPU ts: begin=${U} end=${U} duration=${U} ns`),
    parse: (m) => {
      // A wrapped (end < begin) duration shows as an unsigned value near 2^64.
      const wrapped = BigInt(m[3]) > 3_600_000_000_000n;
      return {
        severity: wrapped ? 'warning' : 'debug',
        message: wrapped ? 'Record with end before begin (duration wrapped).' : 'Record GPU timestamps.',
        fields: { begin: m[1], end: m[2], duration: m[3] },
      };
    },
  },
  {
    code: 'R16',
    component: 'roctracer',
    pattern: rx(F, `  -> Host ts: start=${U} end=${U} duration=${U} ns`),
    parse: (m) => ({
      severity: 'debug',
      message: 'Record host timestamps.',
      fields: { start: m[1], end: m[2], duration: m[3] },
    }),
  },
  {
    code: 'R17',
    component: 'roctracer',
    pattern: rx(F, `  -> pushed device event, total=${U}`),
    parse: (m) => ({ severity: 'debug', message: 'Device event kept.', counts: { total: n(m[1]) } }),
  },
  {
    code: 'R18',
    component: 'roctracer',
    pattern: rx(F, 'HIP symbols resolved=(yes|no)'),
    parse: (m) =>
      m[1] === 'yes'
        ? info(
            "HIP symbols resolved: the kernels' blocks per SM, registers and occupancy args are fixed placeholders, not measurements.",
          )
        : info('HIP symbols not resolved: occupancy-style kernel args are omitted.'),
  },
  {
    code: 'R19',
    component: 'roctracer',
    pattern: rx(F, 'RoctracerDeviceTracer::stop\\(\\)'),
    parse: () => info('ROCtracer session stop (no device synchronise: late activity can be missed).'),
  },
  {
    code: 'R20',
    component: 'roctracer',
    pattern: rx(F, `ROCtracer stopped, events collected: ${U}`),
    parse: (m) => info(`ROCtracer stopped with ${m[1]} events collected.`, { eventsCollected: n(m[1]) }),
  },
  {
    code: 'R21',
    component: 'roctracer',
    pattern: rx(F, `drain\\(\\) events by kind: kernel=${U} memcpy=${U} memset=${U} runtime=${U} total=${U}`),
    parse: (m) =>
      info('Drained events by kind.', {
        kernel: n(m[1]),
        memcpy: n(m[2]),
        memset: n(m[3]),
        runtime: n(m[4]),
        total: n(m[5]),
      }),
  },
  {
    code: 'R22',
    component: 'roctracer',
    pattern: rx(F, 'drain\\(\\) first 10 kinds:(.*)', false),
    parse: (m) => ({
      severity: 'debug',
      message: 'Kinds of the first drained events.',
      fields: { kinds: m[1].trim() },
    }),
  },
  {
    code: 'R23',
    component: 'roctracer',
    pattern: rx(F, 'drain\\(\\) last 10 kinds:(.*)', false),
    parse: (m) => ({
      severity: 'debug',
      message: 'Kinds of the last drained events.',
      fields: { kinds: m[1].trim() },
    }),
  },

  // ---- ROCtracer through the capture agent (libflagprof_agent.so)
  {
    code: 'R24',
    component: 'roctracer',
    pattern: rx(F, `bound roctracer_enable_domain_activity_expl -> (.*) \\(ROCtracer version ${U}\\)`),
    parse: (m) =>
      info(
        `Bound ${m[1]} (ROCtracer version ${m[2]}).`,
        { apiVersion: n(m[2]) },
        { library: m[1], apiVersion: m[2] },
      ),
  },
  {
    code: 'R25',
    component: 'roctracer',
    pattern: rx(F, 'libroctracer64 is unavailable'),
    parse: () => ({
      severity: 'error',
      message: 'libroctracer64 could not be loaded or lacks a required symbol: session aborted.',
    }),
  },
  {
    code: 'R26',
    component: 'roctracer',
    pattern: rx(F, `roctracer_open_pool_expl failed: ${R}`),
    parse: (m) => ({
      severity: 'error',
      message: 'The ROCtracer activity pool could not be opened: session aborted.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    code: 'R27',
    component: 'roctracer',
    pattern: rx(F, `roctracer_enable_domain_activity_expl\\(${U}\\) returned ${R}`),
    parse: (m) => {
      const domain = ROC_DOMAINS[m[1]] ?? `domain ${m[1]}`;
      const tolerated = domain === 'EXT_API';
      return {
        severity: tolerated ? 'warning' : 'error',
        message: tolerated
          ? 'ROCtracer external-correlation records are unavailable: device time is linked through HIP calls only.'
          : `roctracer_enable_domain_activity_expl(${domain}) failed: no ${domain === 'HIP_OPS' ? 'device' : 'HIP API'} records.`,
        counts: { domain: n(m[1]), result: n(m[2]), [domain]: n(m[2]) },
        fields: { domain },
      };
    },
  },
  {
    code: 'R28',
    component: 'roctracer',
    pattern: rx(F, `ROCtracer clock sample result=${R} vendor=${U} realtime=${U}`),
    parse: (m) => ({
      severity: resultSeverity(n(m[1])),
      message:
        n(m[1]) === 0
          ? 'HSA clock sampled against CLOCK_REALTIME (a calibration pair).'
          : 'roctracer_get_timestamp failed: device times are placed through the capture header pair only.',
      counts: { result: n(m[1]), vendorNs: n(m[2]), realtimeNs: n(m[3]) },
    }),
  },
  {
    code: 'R31',
    component: 'roctracer',
    pattern: rx(F, 'ROCtracer activity setup results: (.*)', false),
    parse: (m) => {
      const counts = keyValues(m[1]);
      const critical = (counts.POOL ?? 0) !== 0 || (counts.HIP_OPS ?? 0) !== 0 || (counts.HIP_API ?? 0) !== 0;
      const any = Object.values(counts).some((v) => v !== 0);
      return {
        severity: critical ? 'error' : any ? 'warning' : 'info',
        message: critical
          ? 'Session setup failed for the pool, HIP_OPS or HIP_API: no device events or no device-time attribution.'
          : any
            ? 'A ROCtracer domain could not be enabled (EXT_API: torch ids are not attached).'
            : 'All ROCtracer domains enabled at session start.',
        counts,
      };
    },
  },
  {
    code: 'R32',
    component: 'roctracer',
    pattern: rx(F, `ROCtracer buffer callback invoked, validSize=${U}`),
    parse: (m) => ({
      severity: 'debug',
      message: 'ROCtracer pool buffer delivered.',
      counts: { buffersCompleted: 1, validSize: n(m[1]) },
    }),
  },
  {
    code: 'R33',
    component: 'roctracer',
    ungated: true,
    pattern: rx(F, `roctracer_flush_activity_expl returned ${R}: (.*)`, false),
    parse: (m) => ({
      severity: 'warning',
      message: 'The final ROCtracer flush failed: the last activity records may be missing.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    code: 'R34',
    component: 'roctracer',
    ungated: true,
    multiline: true,
    pattern: rx(F, 'ROCtracer activity records failed the layout self-check \\((.*)\\)\\.'),
    parse: (m) => ({
      severity: 'error',
      message: `ROCtracer record layout does not match the bound library (${m[1]}): affected records are dropped. Point FLAGOS_TRACER_LIBRARY at the libroctracer64.so of the running ROCm.`,
      fields: { reason: m[1] },
    }),
  },
  {
    code: 'R35',
    component: 'roctracer',
    ungated: true,
    pattern: rx(F, `ROCtracer buffer hit the per-buffer record bound \\(${U}\\) for ${U} bytes(.*)`, false),
    parse: (m) => ({
      severity: 'warning',
      message:
        'A ROCtracer buffer hit the per-buffer record cap: the tail of that buffer is missing from the capture.',
      counts: { recordBound: n(m[1]), bufferBytes: n(m[2]) },
    }),
  },
  {
    code: 'R36',
    component: 'roctracer',
    ungated: true,
    pattern: rx(F, `ROCtracer activity buffer allocation failed \\(${U} bytes\\)(.*)`, false),
    parse: (m) => ({
      severity: 'warning',
      message:
        'Host allocation while copying ROCtracer records failed: records are dropped while memory is short.',
      counts: { bufferBytes: n(m[1]) },
    }),
  },
  {
    code: 'R29',
    component: 'roctracer',
    pattern: rx(F, 'ROCtracer session started'),
    parse: () => info('ROCtracer session started.'),
  },
  {
    code: 'R30',
    component: 'roctracer',
    pattern: rx(F, 'ROCtracer session stopped'),
    parse: () => info('ROCtracer session stopped.'),
  },
  // ---- env helper and Python
  {
    code: 'E1',
    component: 'env',
    ungated: true,
    pattern: rx(F, 'FLAGOS_TRACE: "(.*)" is not a boolean; using the default'),
    parse: (m) => ({
      severity: 'warning',
      message: `FLAGOS_TRACE="${m[1]}" is not a boolean, so tracing is off. Use 1/true/on/yes or 0/false/off/no.`,
      fields: { value: m[1] },
    }),
  },
  {
    code: 'P1',
    component: 'env',
    ungated: true,
    pattern: rx(F, 'not a torch_fl variable; ignored \\(([A-Z0-9_]+)=(.*)\\)'),
    parse: (m) => ({
      severity: 'warning',
      message: `${m[1]} is not a torch_fl variable and was ignored (a typo?).`,
      fields: { name: m[1], value: m[2] },
    }),
  },
];

/** activity_domain_t numbers the agent's ROCtracer lines name. */
const ROC_DOMAINS: Record<string, string> = { '2': 'HIP_OPS', '3': 'HIP_API', '5': 'EXT_API' };

const MSPTI_KINDS: Record<string, string> = {
  '2': 'KERNEL',
  '3': 'API',
  '5': 'MEMORY',
  '6': 'MEMSET',
  '7': 'MEMCPY',
  '8': 'EXTERNAL_CORRELATION',
  '10': 'ACL_API',
  '11': 'NODE_API',
  '12': 'RUNTIME_API',
};

/** Continuation of a multi-line warning: '[flagos]' and three spaces, but not a ROCtracer '  -> ' sub-line. */
const CONTINUATION = /^\[flagos\] {3}(?!-> )/;
const OTHER_TORCH_FL = /^\[flagos(?:[ -][a-z0-9_-]+)?\]/;

function makeDiagnostic(rule: Rule, m: RegExpExecArray, raw: string, line: number): Diagnostic {
  const parsed = rule.parse(m);
  return {
    component: rule.component,
    severity: parsed.severity,
    code: rule.code,
    message: parsed.message,
    counts: parsed.counts ?? {},
    fields: parsed.fields ?? {},
    raw,
    line,
    ungated: rule.ungated ?? false,
  };
}

/** Parses one line (no continuation handling). Unknown lines come back with component 'unknown' or 'torch_fl'. */
export function parseLine(raw: string, line = 1): Diagnostic {
  const text = raw.replace(/\r$/, '');
  // Lines may carry a prefix of their own (a timestamp, another thread's half-written output): match from '[flagos'.
  const at = text.indexOf('[flagos');
  if (at >= 0) {
    const body = text.slice(at).trimEnd();
    for (const rule of RULES) {
      const m = rule.pattern.exec(body);
      if (m) return makeDiagnostic(rule, m, text, line);
    }
    if (OTHER_TORCH_FL.test(body)) {
      return {
        component: 'torch_fl',
        severity: /\bfail(ed|ure)?\b|\berror\b/i.test(body) ? 'warning' : 'info',
        code: '',
        message: 'torch_fl output not from the profiler.',
        counts: {},
        fields: {},
        raw: text,
        line,
        ungated: false,
      };
    }
  }
  return {
    component: 'unknown',
    severity: 'info',
    code: '',
    message: 'Unrecognised line (kept as printed).',
    counts: {},
    fields: {},
    raw: text,
    line,
    ungated: false,
  };
}

function addContinuation(previous: Diagnostic, raw: string): void {
  previous.raw += `\n${raw}`;
  if (previous.code === 'C16') {
    const m = /bound CUPTI: (.*) \(API version (\d+)\)/.exec(raw);
    if (m) {
      previous.fields.library = m[1];
      previous.fields.apiVersion = m[2];
    }
    if (raw.includes('FLAGOS_CUPTI_LIBRARY')) previous.fields.vintage = 'A';
    else if (raw.includes('FLAGOS_TRACER_LIBRARY')) previous.fields.vintage = 'B';
  }
}

/** Parses a whole stderr log. Continuation lines join the warning they continue; empty lines are skipped. */
export function parseTraceLog(text: string, firstLine = 1): Diagnostic[] {
  const out: Diagnostic[] = [];
  let open: Diagnostic | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].replace(/\r$/, '');
    if (raw.trim() === '') continue;
    if (open && CONTINUATION.test(raw.slice(Math.max(0, raw.indexOf('[flagos'))))) {
      addContinuation(open, raw);
      continue;
    }
    const d = parseLine(raw, firstLine + i);
    out.push(d);
    open = RULES.find((r) => r.code === d.code)?.multiline ? d : undefined;
  }
  return out;
}

function asSeverity(value: unknown): Severity {
  const s = String(value ?? '').toLowerCase();
  if ((SEVERITIES as readonly string[]).includes(s)) return s as Severity;
  if (s === 'warn') return 'warning';
  if (s === 'fatal' || s === 'err') return 'error';
  if (s === 'trace') return 'debug';
  return 'info';
}

function asComponent(value: unknown): Component {
  const s = String(value ?? '').toLowerCase();
  if ((COMPONENTS as readonly string[]).includes(s)) return s as Component;
  // The agent names vendors by their API; keep them in the catalogue's components.
  const alias: Record<string, Component> = {
    kineto: 'adaptor',
    shim: 'cupti-shim',
    mcpti: 'cupti',
    rocprofiler: 'roctracer',
    env_helper: 'env',
  };
  return alias[s] ?? 'agent';
}

/** A structured frame of the native agent: {component, severity, message, counts}. */
export function fromFrame(frame: DiagnosticFrame, line = 1): Diagnostic {
  const counts: Record<string, number> = {};
  for (const [k, v] of Object.entries(frame.counts ?? {}))
    if (typeof v === 'number' && Number.isFinite(v)) counts[k] = v;
  const severity = asSeverity(frame.severity);
  const message = String(frame.message ?? '');
  return {
    component: asComponent(frame.component),
    severity,
    code: '',
    message,
    counts,
    fields: { source: 'frame', component: String(frame.component ?? '') },
    raw: JSON.stringify(frame),
    line,
    ungated: severity === 'error',
  };
}

function isFrame(value: unknown): value is DiagnosticFrame {
  return (
    !!value &&
    typeof value === 'object' &&
    typeof (value as DiagnosticFrame).message === 'string' &&
    'component' in (value as object)
  );
}

/** The text of a captured stderr line in a JSON line: {line}, {text} or {raw}. */
function capturedLine(value: unknown): string | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const o = value as Record<string, unknown>;
  for (const key of ['line', 'text', 'raw']) if (typeof o[key] === 'string') return o[key] as string;
  return undefined;
}

/**
 * Parses a diagnostics log of any of the shapes the product meets: plain stderr text, diagnostics.jsonl with
 * captured lines ({"line": "..."}) or structured frames ({component, severity, message, counts}), or a mix.
 */
export function parseDiagnostics(text: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const lines = text.split('\n');
  let pendingText: string[] = [];
  let pendingStart = 1;
  const flush = (): void => {
    if (pendingText.length) out.push(...parseTraceLog(pendingText.join('\n'), pendingStart));
    pendingText = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i];
    const trimmed = raw.trim();
    let value: unknown;
    if (trimmed.startsWith('{')) {
      try {
        value = JSON.parse(trimmed);
      } catch {
        value = undefined;
      }
    }
    if (value !== undefined && isFrame(value)) {
      flush();
      out.push(fromFrame(value, i + 1));
      continue;
    }
    const captured = value !== undefined ? capturedLine(value) : undefined;
    const asText = captured ?? raw;
    if (!pendingText.length) pendingStart = i + 1;
    // Keep line numbers aligned with the file: a JSON line holding several lines is rare and gets its first.
    if (pendingText.length && pendingStart + pendingText.length !== i + 1) {
      flush();
      pendingStart = i + 1;
    }
    pendingText.push(asText.replace(/\n+$/, ''));
  }
  flush();
  return out;
}

/** Accepts already-parsed input too: frames as objects, or Diagnostics. */
export function normalizeDiagnostics(
  input: readonly (Diagnostic | DiagnosticFrame | string)[],
): Diagnostic[] {
  const out: Diagnostic[] = [];
  input.forEach((item, i) => {
    if (typeof item === 'string') out.push(...parseTraceLog(item, i + 1));
    else if ('raw' in item && 'code' in item) out.push(item as Diagnostic);
    else out.push(fromFrame(item as DiagnosticFrame, i + 1));
  });
  return out;
}

const VENDOR_COMPONENTS = ['cupti', 'mspti', 'mupti', 'topspti', 'roctracer'];

/** Lifts the counts a bring-up engineer asks for first out of a parsed log. */
export function summarizeDiagnostics(diagnostics: readonly Diagnostic[]): DiagnosticsSummary {
  const s: DiagnosticsSummary = {
    tracer: '',
    vintage: '',
    library: '',
    apiVersion: '',
    registered: undefined,
    sessions: 0,
    eventsDrained: undefined,
    linked: undefined,
    candidates: undefined,
    resolver: '',
    inWindow: undefined,
    totalDevice: undefined,
    window: undefined,
    enableResults: {},
    buffersRequested: 0,
    buffersCompleted: 0,
    emptyBuffers: 0,
    recordsDropped: {},
    byComponent: {},
    bySeverity: { error: 0, warning: 0, info: 0, debug: 0 },
    total: diagnostics.length,
  };
  const drop = (reason: string, count: number): void => {
    if (count > 0) s.recordsDropped[reason] = (s.recordsDropped[reason] ?? 0) + count;
  };
  let droppedLines = 0;
  let droppedTotal: number | undefined;
  const tracerVotes: Record<string, number> = {};
  for (const d of diagnostics) {
    s.byComponent[d.component] = (s.byComponent[d.component] ?? 0) + 1;
    s.bySeverity[d.severity]++;
    if (VENDOR_COMPONENTS.includes(d.component))
      tracerVotes[d.component] = (tracerVotes[d.component] ?? 0) + 1;
    if (d.component === 'cupti-shim') tracerVotes.cupti = (tracerVotes.cupti ?? 0) + 1;
    if (d.fields.vintage) s.vintage = d.fields.vintage;
    if (d.fields.library) s.library = d.fields.library;
    if (d.fields.apiVersion) s.apiVersion = d.fields.apiVersion;
    const c = d.counts;
    switch (d.code) {
      case 'A1':
        s.registered = true;
        break;
      case 'A2':
        s.registered = false;
        break;
      case 'A3':
        s.sessions++;
        break;
      case 'A4':
        s.eventsDrained = c.eventsDrained;
        if (c.recordsDropped) drop('agent', c.recordsDropped);
        break;
      case 'A6':
        s.window = [d.fields.windowStart, d.fields.windowEnd];
        break;
      case 'A11':
        s.inWindow = c.inWindow;
        s.totalDevice = c.total;
        break;
      case 'A14':
        droppedLines++;
        break;
      case 'A16':
        s.linked = c.linked;
        s.candidates = c.candidates;
        s.resolver = d.fields.resolver;
        droppedTotal = (droppedTotal ?? 0) + c.dropped;
        break;
      case 'C4':
      case 'C8':
      case 'M4':
      case 'U2':
        for (const [k, v] of Object.entries(c)) if (/^[A-Z_]+$/.test(k)) s.enableResults[k] = v;
        break;
      case 'M5':
      case 'M6':
      case 'T2':
        for (const k of Object.keys(c)) s.enableResults[k] = 1;
        break;
      case 'C13':
        s.buffersRequested++;
        break;
      case 'C14':
      case 'R11':
        s.buffersCompleted++;
        if (c.validSize === 0) s.emptyBuffers++;
        break;
      case 'C15':
        drop('no timing', 1);
        break;
      case 'C17':
        drop('buffer record bound', 1);
        break;
      case 'R12':
        drop('event cap', 1);
        break;
      case 'U4':
      case 'T4':
        s.sessions++;
        break;
      default:
        if (d.fields.source === 'frame') {
          // The agent's frames name their counts directly.
          if (c.eventsDrained !== undefined) s.eventsDrained = c.eventsDrained;
          if (c.buffersRequested !== undefined) s.buffersRequested += c.buffersRequested;
          if (c.buffersCompleted !== undefined) s.buffersCompleted += c.buffersCompleted;
          if (c.recordsDropped !== undefined) drop('agent', c.recordsDropped);
          if (c.linked !== undefined) s.linked = c.linked;
          if (c.candidates !== undefined) s.candidates = c.candidates;
          if (c.inWindow !== undefined) s.inWindow = c.inWindow;
          if (c.total !== undefined && c.inWindow !== undefined) s.totalDevice = c.total;
        }
    }
  }
  // A16's count covers every window drop; the per-event A14 lines only the device ones. Prefer the total.
  if (droppedTotal !== undefined) drop('outside window', droppedTotal);
  else drop('outside window', droppedLines);
  let best = 0;
  for (const [tracer, votes] of Object.entries(tracerVotes)) {
    if (votes > best) {
      best = votes;
      s.tracer = tracer;
    }
  }
  if (!s.vintage && diagnostics.some((d) => d.component === 'env' && d.code === 'E1')) s.vintage = 'B';
  return s;
}

/**
 * Findings that no single line states but two lines together do: the clock domain (first event against the
 * window) and an unbalanced correlation stack. Returned as extra diagnostics with component of the line that
 * carries the evidence.
 */
export function deriveFindings(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const window = [...diagnostics].reverse().find((d) => d.code === 'A6');
  const first = [...diagnostics].reverse().find((d) => d.code === 'A8' || d.code === 'A10');
  if (window && first) {
    const start = BigInt(first.fields.start);
    const lo = BigInt(window.fields.windowStart);
    const gap = start > lo ? start - lo : lo - start;
    if (gap > 100_000_000_000_000_000n) {
      out.push({
        component: 'adaptor',
        severity: 'error',
        code: 'F-clock',
        message: `Device timestamps are ${Number(gap / 1_000_000_000n).toExponential(2)} s away from the capture window: one side reads CLOCK_MONOTONIC/BOOTTIME, the other CLOCK_REALTIME (epoch ns). Convert vendor timestamps to epoch ns (affine fit of clock samples).`,
        counts: {},
        fields: { start: first.fields.start, windowStart: window.fields.windowStart, gapNs: gap.toString() },
        raw: `${first.raw}\n${window.raw}`,
        line: first.line,
        ungated: false,
      });
    }
  }
  const pushes = diagnostics.filter((d) => d.code === 'R9');
  if (pushes.length >= 20) {
    const firstDepth = pushes[0].counts.depth;
    const lastDepth = pushes[pushes.length - 1].counts.depth;
    if (lastDepth - firstDepth >= 10) {
      out.push({
        component: 'roctracer',
        severity: 'error',
        code: 'F-stack',
        message: `The correlation stack grew from depth ${firstDepth} to ${lastDepth}: push and pop are unbalanced, so launches carry the External id of a later op.`,
        counts: { firstDepth, lastDepth },
        fields: {},
        raw: pushes[pushes.length - 1].raw,
        line: pushes[pushes.length - 1].line,
        ungated: false,
      });
    }
  }
  return out;
}

/** The catalogue codes this parser knows, for tests and documentation. */
export const KNOWN_CODES: readonly string[] = RULES.map((r) => r.code);

/**
 * The log as a person reads it: diagnostics.jsonl lines shown as the text they captured (frames as
 * "[component] severity: message"), one output line per input line so line numbers still point into the file.
 */
export function displayLog(text: string): string {
  return text
    .split('\n')
    .map((raw) => {
      const trimmed = raw.trim();
      if (!trimmed.startsWith('{')) return raw;
      let value: unknown;
      try {
        value = JSON.parse(trimmed);
      } catch {
        return raw;
      }
      if (isFrame(value)) return `[${String(value.component)}] ${String(value.severity)}: ${value.message}`;
      return capturedLine(value)?.replace(/\n/g, ' ') ?? raw;
    })
    .join('\n');
}
