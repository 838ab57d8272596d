/** The TOPSPTI tracer (Enflame GCU): callbacks, activity enables, sessions. */
import type { Rule } from './rule';
import { F, U, n, rx, info } from './rule';

export const TOPSPTI_RULES: readonly Rule[] = [
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
];
