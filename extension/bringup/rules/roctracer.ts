/**
 * ROCtracer (AMD, Hygon DCU): the torch_fl tracer's lines (clock sync, pool, correlation push/pop, per-record
 * classification, drain), then the capture agent's (libflagprof_agent.so) ROCtracer binding.
 */
import type { Rule } from './rule';
import { F, R, U, n, rx, info, kindName, keyValues, resultSeverity, setupSeverity } from './rule';

/** activity_domain_t numbers the agent's ROCtracer lines name. */
const ROC_DOMAINS: Record<string, string> = { '2': 'HIP_OPS', '3': 'HIP_API', '5': 'EXT_API' };

export const ROCTRACER_RULES: readonly Rule[] = [
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
      const severity = setupSeverity(counts, ['POOL', 'HIP_OPS', 'HIP_API']);
      const message = {
        error:
          'Session setup failed for the pool, HIP_OPS or HIP_API: no device events or no device-time attribution.',
        warning: 'A ROCtracer domain could not be enabled (EXT_API: torch ids are not attached).',
        info: 'All ROCtracer domains enabled at session start.',
      }[severity];
      return { severity, message, counts };
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
];
