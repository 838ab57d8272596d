/**
 * The generic kineto plugin (flagos_kineto_profiler.cc): registration with kineto, sessions, and processTrace with
 * its capture-window filter and the linkage of device events to CPU ops.
 */
import type { Rule } from './rule';
import { F, R, U, n, rx, info, kindName } from './rule';

export const ADAPTOR_RULES: readonly Rule[] = [
  {
    lines: [{ code: 'A1', component: 'adaptor' }],
    pattern: rx(F, 'FlagosKinetoProfiler registered with kineto'),
    parse: () => info('Device profiler plugin registered with kineto.'),
  },
  {
    lines: [{ code: 'A2', component: 'adaptor' }],
    pattern: rx(F, 'no device tracer available, FlagosKinetoProfiler not registered'),
    parse: () => ({
      severity: 'warning',
      message:
        'No device tracer available: profiles will hold CPU events only (look for the shim lines, or a build without the vendor SDK).',
    }),
  },
  {
    lines: [{ code: 'A3', component: 'adaptor' }],
    pattern: rx(F, `FlagosKinetoProfiler::configure called with ${U} activity types`),
    parse: (m) =>
      info(`kineto asked the plugin for a session (${m[1]} activity types).`, { activityTypes: n(m[1]) }),
  },
  {
    lines: [{ code: 'A4', component: 'adaptor' }],
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
    lines: [{ code: 'A5', component: 'adaptor' }],
    pattern: rx(F, `processTrace\\(1-arg\\) called with ${U} events`),
    parse: (m) => ({
      severity: 'error',
      message:
        'kineto used the one-argument processTrace: no window filtering, no CPU-op linkage (device time stays 0), no flow arrows. Override the four-argument form.',
      counts: { events: n(m[1]) },
    }),
  },
  {
    lines: [{ code: 'A6', component: 'adaptor' }],
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
    lines: [{ code: 'A7', component: 'adaptor' }],
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
    lines: [{ code: 'A8', component: 'adaptor' }],
    pattern: rx(F, `First event: kind=${U} start=${U} end=${U}`),
    parse: (m) => info(`First event (${kindName(m[1])}).`, { kind: n(m[1]) }, { start: m[2], end: m[3] }),
  },
  {
    lines: [{ code: 'A9', component: 'adaptor' }],
    pattern: rx(F, `Last event: kind=${U} start=${U} end=${U}`),
    parse: (m) => info(`Last event (${kindName(m[1])}).`, { kind: n(m[1]) }, { start: m[2], end: m[3] }),
  },
  {
    lines: [{ code: 'A10', component: 'adaptor' }],
    pattern: rx(F, `Device event #${U}: kind=${U} start=${U} end=${U} window=\\[${R},${R}\\]`),
    parse: (m) =>
      info(
        `Device event #${m[1]} (${kindName(m[2])}) against the window.`,
        { index: n(m[1]), kind: n(m[2]) },
        { start: m[3], end: m[4], windowStart: m[5], windowEnd: m[6] },
      ),
  },
  {
    lines: [{ code: 'A11', component: 'adaptor' }],
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
    lines: [{ code: 'A12', component: 'adaptor' }],
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
    lines: [{ code: 'A13', component: 'adaptor' }],
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
    lines: [{ code: 'A14', component: 'adaptor' }],
    pattern: rx(F, `Dropped device event: kind=${U} start=${U} end=${U} \\(window=\\[${R},${R}\\]\\)`),
    parse: (m) => ({
      severity: 'debug',
      message: `A ${kindName(m[1])} event outside the capture window was dropped.`,
      counts: { kind: n(m[1]) },
      fields: { start: m[2], end: m[3], windowStart: m[4], windowEnd: m[5] },
    }),
  },
  {
    lines: [{ code: 'A15', component: 'adaptor' }],
    pattern: rx(F, `toActivity: kind=${U} -> activityType=${U} name=(.*)`, false),
    parse: (m) => ({
      severity: 'debug',
      message: `${kindName(m[1])} event converted to kineto activity type ${m[2]}.`,
      counts: { kind: n(m[1]), activityType: n(m[2]) },
      fields: { name: m[3] },
    }),
  },
  {
    lines: [{ code: 'A16', component: 'adaptor' }],
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
];
