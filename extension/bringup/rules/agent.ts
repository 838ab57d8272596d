/**
 * The product's own capture agent (native/agent): its lines reuse the catalogue's ids (A4, A12) in its own wording,
 * so they stand after the plugin's and match only the agent's text.
 */
import { CAPTURE_VENDOR_KEYS, VENDORS } from '../../shared/vendors';
import type { Rule } from './rule';
import { F, U, n, rx } from './rule';

/** The tracers the agent names in its lines: the activity APIs it captures. */
const TRACER = `(${CAPTURE_VENDOR_KEYS.map((key) => VENDORS[key].label).join('|')})`;

/**
 * The libraries the agent's load failure names: 'no <API> library could be loaded; tried <name> (<why>); ...'.
 * Undefined for any other failure.
 */
function librariesTried(reason: string): string[] | undefined {
  const m = /^no .+ could be loaded; tried (.*)$/.exec(reason);
  if (!m) return undefined;
  return m[1]
    .split(/(?<=\)); /)
    .map((entry) => /^(.*?) \(/.exec(entry)?.[1] ?? entry)
    .filter((name) => name.length > 0);
}

export const AGENT_RULES: readonly Rule[] = [
  {
    lines: [{ code: 'A4', component: 'agent' }],
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
    lines: [{ code: 'A12', component: 'agent' }],
    ungated: true,
    multiline: true,
    pattern: rx(F, `the capture holds ${U} device records but no runtime records: (.*)`, false),
    parse: (m) => ({
      severity: 'error',
      message: `${m[1]} device records but no runtime records: device activity cannot be linked to the ops that launched it (runtime activity not enabled at start).`,
      counts: { device: n(m[1]) },
    }),
  },
  {
    lines: [{ code: 'A20', component: 'agent' }],
    pattern: rx(F, `${TRACER} device tracer session start`),
    parse: (m) => ({
      severity: 'info',
      message: `The ${m[1]} device tracer started a session.`,
      fields: { tracer: m[1] },
    }),
  },
  {
    lines: [{ code: 'A21', component: 'agent' }],
    pattern: rx(F, `${TRACER} device tracer drain: ${U} records, ${U} events, dropped ${U}`),
    parse: (m) => {
      const counts = { records: n(m[2]), eventsDrained: n(m[3]), recordsDropped: n(m[4]) };
      if (counts.eventsDrained === 0)
        return {
          severity: 'warning',
          message: `The ${m[1]} device tracer handed the Kineto adaptor no events: the vendor library delivered nothing in the session.`,
          counts,
          fields: { tracer: m[1] },
        };
      return {
        severity: counts.recordsDropped > 0 ? 'warning' : 'info',
        message: `The ${m[1]} device tracer handed the Kineto adaptor ${counts.eventsDrained} events from ${counts.records} records; ${counts.recordsDropped} dropped.`,
        counts,
        fields: { tracer: m[1] },
      };
    },
  },
  {
    lines: [{ code: 'A22', component: 'agent' }],
    ungated: true,
    pattern: rx(F, 'device tracer (start|drain) failed: (.*)'),
    parse: (m) => {
      // A load failure lists what was tried; the summary reads the names back from '; '.
      const tried = librariesTried(m[2]);
      return {
        severity: 'error',
        message: `The device tracer's ${m[1]} failed: ${m[2]}. The profile has no device activity for this session.`,
        fields: { step: m[1], reason: m[2], ...(tried ? { tried: tried.join('; ') } : {}) },
      };
    },
  },
  {
    lines: [{ code: 'A23', component: 'agent' }],
    ungated: true,
    pattern: rx(
      F,
      '(\\S+) buffer: skipped (\\d+) bytes that were not a record \\(8 at a time\\) and resynchronised on the next record; (.*)',
    ),
    parse: (m) => ({
      severity: 'warning',
      message: `The ${m[1]} buffer walk met ${m[2]} bytes that were no record of a known kind and skipped them, resuming at the next record: the vendor's records around them were kept. Several per run point at a record layout this build does not know.`,
      counts: { skippedBytes: n(m[2]) },
      fields: { tracer: m[1] },
    }),
  },
  {
    lines: [{ code: 'A25', component: 'agent' }],
    ungated: true,
    pattern: rx(F, '(\\S+) delivered no API callbacks during the session: (.*)'),
    parse: (m) => ({
      severity: 'warning',
      message: `${m[1]} called no API-enter callback during the session, so no torch id reached the device work: kernels, copies and fills are recorded, but belong to their ops by time alone (no External ids). A release without runtime callbacks, or a subscription another tool holds.`,
      fields: { tracer: m[1] },
    }),
  },
  {
    lines: [{ code: 'A26', component: 'agent' }],
    pattern: rx(
      F,
      '(\\S+) has no external-correlation API: torch ids are taken at API enter \\((\\w+)Subscribe=(-?\\d+), EnableDomain\\(RUNTIME\\)=(-?\\d+)\\)',
    ),
    parse: (m) => {
      const ok = m[3] === '0' && m[4] === '0';
      return {
        severity: ok ? 'info' : 'warning',
        message: ok
          ? `${m[1]} has no external-correlation API: the agent takes torch's id in its API-enter callback.`
          : `${m[1]}'s callback subscription failed (${m[2]}Subscribe=${m[3]}, EnableDomain=${m[4]}): device work is recorded without External ids.`,
        counts: { subscribe: n(m[3]), enableDomain: n(m[4]) },
        fields: { tracer: m[1] },
      };
    },
  },
  {
    lines: [{ code: 'A27', component: 'agent' }],
    pattern: rx(F, '(\\S+) device properties from (\\w+): (\\d+) of (\\d+) devices'),
    parse: (m) => {
      const all = m[3] === m[4];
      return {
        severity: all ? 'info' : 'warning',
        message: all
          ? `${m[1]} writes no device records: the agent read ${m[3]} device's properties from ${m[2]}, so kernels carry occupancy.`
          : `${m[2]} answered for ${m[3]} of ${m[4]} devices: kernels on the others carry no occupancy.`,
        counts: { devices: n(m[3]), deviceCount: n(m[4]) },
        fields: { tracer: m[1] },
      };
    },
  },
  {
    lines: [{ code: 'E2', component: 'agent' }],
    ungated: true,
    pattern: rx(F, 'FLAGOS_ACCELERATOR=(\\S+) is not an accelerator this agent knows \\((.*)\\)'),
    parse: (m) => ({
      severity: 'error',
      message: `FLAGOS_ACCELERATOR=${m[1]} is not a known accelerator (known: ${m[2]}), so no device tracer was chosen.`,
      fields: { accelerator: m[1], known: m[2] },
    }),
  },
  {
    lines: [{ code: 'E3', component: 'agent' }],
    pattern: rx(F, 'no activity-API tracer is built for FLAGOS_ACCELERATOR=(\\S+): (.*)'),
    parse: (m) => ({
      severity: 'warning',
      message: `FLAGOS_ACCELERATOR=${m[1]} has no activity-API tracer: device activity is not recorded; CPU profiling continues.`,
      fields: { accelerator: m[1] },
    }),
  },
];
