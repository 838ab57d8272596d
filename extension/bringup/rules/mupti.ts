/** The MUPTI tracer (Moore Threads MUSA): callbacks, activity enables, sessions. */
import type { Rule } from './rule';
import { F, R, U, n, rx, info } from './rule';

export const MUPTI_RULES: readonly Rule[] = [
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
];
