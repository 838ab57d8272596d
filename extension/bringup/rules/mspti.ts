/** The MSPTI tracer (Huawei Ascend): subscription, activity enables, buffers, flush and the layout self-check. */
import type { Rule } from './rule';
import { F, R, U, n, rx, info, keyValues, bufferRequested, bufferCompleted, setupSeverity } from './rule';

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

export const MSPTI_RULES: readonly Rule[] = [
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
      const severity = setupSeverity(counts, ['API', 'EXTERNAL_CORRELATION', 'CALLBACKS']);
      const message = {
        error:
          'Session setup failed for CALLBACKS, API or EXTERNAL_CORRELATION: no API events or no device-time attribution.',
        warning:
          'An MSPTI activity kind could not be enabled (MEMCPY/MEMSET need libmspti.so preloaded at process start).',
        info: 'All MSPTI activity kinds enabled at session start.',
      }[severity];
      return { severity, message, counts };
    },
  },
  {
    code: 'M13',
    component: 'mspti',
    pattern: rx(F, 'MSPTI bufferRequested callback invoked'),
    parse: bufferRequested,
  },
  {
    code: 'M14',
    component: 'mspti',
    pattern: rx(F, `MSPTI bufferCompleted callback invoked, validSize=${U}`),
    parse: bufferCompleted,
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
];
