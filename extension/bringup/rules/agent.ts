/**
 * The product's own capture agent (native/agent): its lines reuse the catalogue's ids (A4, A12) in its own wording,
 * so they stand after the plugin's and match only the agent's text.
 */
import type { Rule } from './rule';
import { F, U, n, rx } from './rule';

export const AGENT_RULES: readonly Rule[] = [
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
];
