/**
 * The lines several vendors' tracers print in the same words, one rule per message template: the library that
 * would not load, the binding, setup results, buffers, the final flush, the layout self-check, sessions. Each
 * table row is one vendor's catalogue line (its code, and what that line means where vendors differ); a vendor
 * whose tracer prints a template is one row in it. Lines whose wording differs in substance stay in the vendor's
 * own file.
 */
import { VENDORS } from '../../shared/vendors';
import type { MatchedLine, Rule, VendorLine } from './rule';
import { F, R, U, n, rx, info, keyValues, wordValues, setupSeverity, template } from './rule';

const label = (line: MatchedLine<VendorLine>): string => VENDORS[line.vendor].label;

/** msptiActivityKind numbers the enable lines print. */
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

/** activity_domain_t numbers the agent's ROCtracer lines name. */
const ROC_DOMAINS: Record<string, string> = { '2': 'HIP_OPS', '3': 'HIP_API', '5': 'EXT_API' };

interface EnableLine extends VendorLine {
  /** What the number in parentheses is, and the names of its values. */
  key: 'kind' | 'domain';
  names: Record<string, string>;
  /** The value whose failure the session survives. */
  tolerated: string;
  message(name: string, tolerated: boolean): string;
}

interface ClockLine extends VendorLine {
  ok: string;
  failed: string;
}

/** A line whose meaning differs between vendors only in what it names. */
interface NamedLine extends VendorLine {
  what: string;
}

interface SetupLine extends VendorLine {
  /** The kinds without which the capture is not worth having. */
  essential: readonly string[];
  messages: Record<'error' | 'warning' | 'info', string>;
}

interface LayoutLine extends VendorLine {
  /** What does not match, and where FLAGOS_TRACER_LIBRARY should point instead. */
  subject: string;
  fix: string;
}

const CUPTI_LAYOUT = {
  word: 'CUPTI',
  code: 'C16',
  subject: 'Activity record layout',
  fix: 'a matching library',
};

export const ACTIVITY_RULES: readonly Rule[] = [
  template({
    lines: {
      mspti: { word: 'libmspti', code: 'M1' },
      roctracer: { word: 'libroctracer64', code: 'R25' },
      rocprofiler: { word: 'librocprofiler-sdk', code: 'Q13' },
    },
    pattern: (vendor) => rx(F, `${vendor} is unavailable`),
    parse: (_m, line) => ({
      severity: 'error',
      message: `${line.word} could not be loaded or lacks a required symbol: session aborted.`,
    }),
  }),
  template({
    lines: {
      mspti: { word: 'msptiActivityRegisterCallbacks', code: 'M0' },
      roctracer: { word: 'roctracer_enable_domain_activity_expl', code: 'R24' },
      rocprofiler: { word: 'rocprofiler_force_configure', code: 'Q0' },
    },
    pattern: (vendor, labels) => rx(F, `bound ${vendor} -> (.*) \\(${labels} version ${U}\\)`),
    parse: (m, line) =>
      info(
        `Bound ${m[2]} (${label(line)} version ${m[3]}).`,
        { apiVersion: n(m[3]) },
        { library: m[2], apiVersion: m[3] },
      ),
  }),
  template({
    lines: {
      mspti: { word: 'mspti', code: 'M3' },
      mupti: { word: 'mupti', code: 'U1' },
      // TOPSPTI prints no result.
      topspti: { word: 'topspti', code: 'T1' },
    },
    pattern: (vendor) => rx(F, `${vendor}ActivityRegisterCallbacks failed(?:: ${R})?`),
    parse: (m, line) => ({
      severity: 'error',
      message: `${label(line)} buffer callback registration failed: session aborted.`,
      counts: m[2] === undefined ? undefined : { result: n(m[2]) },
    }),
  }),
  template<EnableLine>({
    lines: {
      mspti: {
        word: 'msptiActivityEnable',
        code: 'M4',
        key: 'kind',
        names: MSPTI_KINDS,
        tolerated: '11',
        message: (kind, tolerated) =>
          tolerated
            ? `msptiActivityEnable(${kind}) failed; tolerated (absent in some CANN releases).`
            : `msptiActivityEnable(${kind}) failed: the session is aborted without a further line (no 'MSPTI session started').`,
      },
      roctracer: {
        word: 'roctracer_enable_domain_activity_expl',
        code: 'R27',
        key: 'domain',
        names: ROC_DOMAINS,
        tolerated: '5',
        message: (domain, tolerated) =>
          tolerated
            ? 'ROCtracer external-correlation records are unavailable: device time is linked through HIP calls only.'
            : `roctracer_enable_domain_activity_expl(${domain}) failed: no ${domain === 'HIP_OPS' ? 'device' : 'HIP API'} records.`,
      },
    },
    pattern: (vendor) => rx(F, `${vendor}\\(${U}\\) returned ${R}`),
    parse: (m, line) => {
      const name = line.names[m[2]] ?? `${line.key} ${m[2]}`;
      const tolerated = m[2] === line.tolerated;
      return {
        severity: tolerated ? 'warning' : 'error',
        message: line.message(name, tolerated),
        counts: { [line.key]: n(m[2]), result: n(m[3]), [name]: n(m[3]) },
        fields: { [line.key]: name },
      };
    },
  }),
  template({
    lines: {
      mupti: { word: 'mupti', code: 'U2' },
      // TOPSPTI prints no result: the failed kind counts once.
      topspti: { word: 'topspti', code: 'T2' },
    },
    pattern: (vendor) => rx(F, `${vendor}ActivityEnable\\(([^)]*)\\) failed(?:: ${R})?`),
    parse: (m, line) => ({
      severity: 'warning',
      message: `${line.word}ActivityEnable(${m[2]}) failed: that record family will be missing.`,
      counts: m[3] === undefined ? { [m[2]]: 1 } : { result: n(m[3]), [m[2]]: n(m[3]) },
      fields: { kind: m[2] },
    }),
  }),
  template<ClockLine>({
    lines: {
      // The CUPTI tracer's line names no vendor.
      cupti: {
        word: '',
        code: 'C6',
        ok: 'Clock sample (vendor against CLOCK_REALTIME).',
        failed:
          'Clock sample failed: timestamps stay in the vendor clock and most events will fall outside the window.',
      },
      roctracer: {
        word: 'ROCtracer ',
        code: 'R28',
        ok: 'HSA clock sampled against CLOCK_REALTIME (a calibration pair).',
        failed:
          'roctracer_get_timestamp failed: device times are placed through the capture header pair only.',
      },
      rocprofiler: {
        word: 'rocprofiler-sdk ',
        code: 'Q6',
        ok: 'rocprofiler-sdk clock (CLOCK_BOOTTIME) sampled against CLOCK_REALTIME (a calibration pair).',
        failed:
          'rocprofiler_get_timestamp failed: device times are placed through the capture header pair only.',
      },
    },
    pattern: (vendor) => rx(F, `${vendor}clock sample result=${R} vendor=${U} realtime=${U}`),
    parse: (m, line) => {
      // A zero vendor time is no sample: the agent takes no calibration pair from it.
      const ok = n(m[2]) === 0 && m[3] !== '0';
      return {
        severity: ok ? 'info' : 'warning',
        message: ok ? line.ok : line.failed,
        counts: { result: n(m[2]) },
        // Epoch ns as decimal text: beyond 2^53.
        fields: { vendor: m[3], realtime: m[4] },
      };
    },
  }),
  template<SetupLine>({
    lines: {
      // The CUPTI tracer's line names no vendor.
      cupti: {
        word: 'Activity',
        code: 'C8',
        essential: ['RUNTIME', 'EXTERNAL_CORRELATION', 'CALLBACKS'],
        messages: {
          error:
            'Session setup failed for CALLBACKS, RUNTIME or EXTERNAL_CORRELATION: no runtime events or no device-time attribution.',
          warning: 'An activity kind could not be enabled at session start.',
          info: 'All activity kinds enabled at session start.',
        },
      },
      mspti: {
        word: 'MSPTI activity',
        code: 'M9',
        essential: ['API', 'EXTERNAL_CORRELATION', 'CALLBACKS'],
        messages: {
          error:
            'Session setup failed for CALLBACKS, API or EXTERNAL_CORRELATION: no API events or no device-time attribution.',
          warning:
            'An MSPTI activity kind could not be enabled (MEMCPY/MEMSET need libmspti.so preloaded at process start).',
          info: 'All MSPTI activity kinds enabled at session start.',
        },
      },
      rocprofiler: {
        word: 'rocprofiler-sdk',
        code: 'Q4',
        essential: ['CONTEXT', 'BUFFER', 'KERNEL_DISPATCH', 'HIP_RUNTIME_API', 'START'],
        messages: {
          error:
            'Session setup failed for the context, the buffer, kernel dispatches, HIP API tracing or the start: no device events or no device-time attribution.',
          warning:
            'A rocprofiler-sdk service could not be configured (CODE_OBJECT: kernels unnamed; MEMORY_COPY: no copies).',
          info: 'Every rocprofiler-sdk service configured and the context started.',
        },
      },
      roctracer: {
        word: 'ROCtracer activity',
        code: 'R31',
        essential: ['POOL', 'HIP_OPS', 'HIP_API'],
        messages: {
          error:
            'Session setup failed for the pool, HIP_OPS or HIP_API: no device events or no device-time attribution.',
          warning: 'A ROCtracer domain could not be enabled (EXT_API: torch ids are not attached).',
          info: 'All ROCtracer domains enabled at session start.',
        },
      },
    },
    pattern: (vendor) => rx(F, `${vendor} setup results: (.*)`, false),
    parse: (m, line) => {
      const counts = keyValues(m[2]);
      const severity = setupSeverity(counts, line.essential);
      // A kind reported as a word ('KERNEL=skipped') was not enabled.
      return { severity, message: line.messages[severity], counts, fields: wordValues(m[2]) };
    },
  }),
  template({
    lines: {
      cupti: { word: 'CUPTI', code: 'C13' },
      mcpti: { word: 'MCPTI', code: 'C13' },
      mspti: { word: 'MSPTI', code: 'M13' },
    },
    pattern: (vendor) => rx(F, `${vendor} bufferRequested callback invoked`),
    parse: () => ({
      severity: 'debug',
      message: 'Activity buffer requested.',
      counts: { buffersRequested: 1 },
    }),
  }),
  template({
    lines: {
      cupti: { word: 'CUPTI', code: 'C14' },
      mcpti: { word: 'MCPTI', code: 'C14' },
      mspti: { word: 'MSPTI', code: 'M14' },
    },
    pattern: (vendor) => rx(F, `${vendor} bufferCompleted callback invoked, validSize=${U}`),
    // An empty buffer is worth a warning.
    parse: (m) =>
      m[2] === '0'
        ? {
            severity: 'warning',
            message: 'An activity buffer completed empty.',
            counts: { buffersCompleted: 1, validSize: 0 },
          }
        : {
            severity: 'debug',
            message: 'Activity buffer completed.',
            counts: { buffersCompleted: 1, validSize: n(m[2]) },
          },
  }),
  template({
    lines: {
      mspti: { word: 'msptiActivityFlushAll', code: 'M15' },
      roctracer: { word: 'roctracer_flush_activity_expl', code: 'R33' },
      rocprofiler: { word: 'rocprofiler_flush_buffer', code: 'Q5' },
    },
    ungated: true,
    pattern: (vendor) => rx(F, `${vendor} returned ${R}: (.*)`, false),
    parse: (m, line) => ({
      severity: 'warning',
      message: `The final ${label(line)} flush failed: the last activity records may be missing.`,
      counts: { result: n(m[2]) },
    }),
  }),
  template<LayoutLine>({
    lines: {
      cupti: CUPTI_LAYOUT,
      mcpti: { ...CUPTI_LAYOUT, word: 'MCPTI' },
      // The agent's CUPTI-family binding prints these two vendors' layout warnings: the CUPTI tracer's line.
      mupti: { ...CUPTI_LAYOUT, word: 'MUPTI', component: 'cupti' },
      topspti: { ...CUPTI_LAYOUT, word: 'TOPSPTI', component: 'cupti' },
      mspti: {
        word: 'MSPTI',
        code: 'M16',
        subject: 'MSPTI record layout',
        fix: 'the libmspti.so of the running CANN',
      },
      roctracer: {
        word: 'ROCtracer',
        code: 'R34',
        subject: 'ROCtracer record layout',
        fix: 'the libroctracer64.so of the running ROCm',
      },
      rocprofiler: {
        word: 'rocprofiler-sdk',
        code: 'Q8',
        subject: 'rocprofiler-sdk record layout',
        fix: 'the librocprofiler-sdk.so of the running ROCm',
      },
    },
    ungated: true,
    multiline: true,
    pattern: (vendor) => rx(F, `${vendor} activity records failed the layout self-check \\((.*)\\)\\.`),
    parse: (m, line) => ({
      severity: 'error',
      message: `${line.subject} does not match the bound library (${m[2]}): affected records are dropped. Point FLAGOS_TRACER_LIBRARY at ${line.fix}.`,
      fields: { reason: m[2] },
    }),
    // A continuation names the library bound ('bound CUPTI: <path> (API version 24)'); on the CUPTI tracer's
    // warning, the variable it advises tells the vintage.
    continuation: (fields, raw, line) => {
      const m = /bound \S+: (.*) \((?:[A-Za-z]+ )?version (\d+)\)/.exec(raw);
      if (m) {
        fields.library = m[1];
        fields.apiVersion = m[2];
      }
      if (line.id.component !== 'cupti') return;
      if (raw.includes('FLAGOS_CUPTI_LIBRARY')) fields.vintage = 'A';
      else if (raw.includes('FLAGOS_TRACER_LIBRARY')) fields.vintage = 'B';
    },
  }),
  template<NamedLine>({
    lines: {
      mspti: { word: 'MSPTI', code: 'M17', what: 'An MSPTI buffer' },
      roctracer: { word: 'ROCtracer', code: 'R35', what: 'A ROCtracer buffer' },
    },
    ungated: true,
    pattern: (vendor) =>
      rx(
        F,
        `${vendor} buffer hit the per-buffer record bound \\(${U}\\) for (?:buffer size )?${U} bytes(.*)`,
        false,
      ),
    parse: (m, line) => ({
      severity: 'warning',
      message: `${line.what} hit the per-buffer record cap: the tail of that buffer is missing from the capture.`,
      counts: { recordBound: n(m[2]), bufferBytes: n(m[3]) },
    }),
  }),
  template<NamedLine>({
    lines: {
      cupti: { word: 'CUPTI', code: 'C18', what: 'of an activity buffer' },
      mcpti: { word: 'MCPTI', code: 'C18', what: 'of an activity buffer' },
      mspti: { word: 'MSPTI', code: 'M18', what: 'of an MSPTI activity buffer' },
      roctracer: { word: 'ROCtracer', code: 'R36', what: 'while copying ROCtracer records' },
      rocprofiler: { word: 'rocprofiler-sdk', code: 'Q9', what: 'while copying rocprofiler-sdk records' },
    },
    ungated: true,
    pattern: (vendor) => rx(F, `${vendor} activity buffer allocation failed \\(${U} bytes\\)(.*)`, false),
    parse: (m, line) => ({
      severity: 'warning',
      message: `Host allocation ${line.what} failed: records are dropped while memory is short.`,
      counts: { bufferBytes: n(m[2]) },
    }),
  }),
  template({
    lines: {
      mspti: { word: 'MSPTI', code: 'M7' },
      mupti: { word: 'MUPTI', code: 'U3' },
      topspti: { word: 'TOPSPTI', code: 'T3' },
      roctracer: { word: 'ROCtracer', code: 'R29' },
      rocprofiler: { word: 'rocprofiler-sdk', code: 'Q2' },
    },
    pattern: (vendor) => rx(F, `${vendor} session started`),
    parse: (_m, line) => info(`${label(line)} session started.`),
  }),
  template({
    lines: {
      // MUPTI and TOPSPTI count the records they kept; MSPTI and ROCtracer leave that to A4.
      mspti: { word: 'MSPTI', code: 'M8' },
      mupti: { word: 'MUPTI', code: 'U4' },
      topspti: { word: 'TOPSPTI', code: 'T4' },
      roctracer: { word: 'ROCtracer', code: 'R30' },
      rocprofiler: { word: 'rocprofiler-sdk', code: 'Q3' },
    },
    pattern: (vendor) => rx(F, `${vendor} session stopped(?: with ${U} events)?`),
    parse: (m, line) =>
      m[2] === undefined
        ? info(`${label(line)} session stopped.`)
        : info(`${label(line)} session stopped with ${m[2]} records kept.`, { eventsKept: n(m[2]) }),
  }),
];
