/** The FLAGOS_* variable readers (env helper and Python): values they could not use, names they do not know. */
import type { Rule } from './rule';
import { F, rx } from './rule';

export const ENV_RULES: readonly Rule[] = [
  {
    lines: [{ code: 'E1', component: 'env' }],
    ungated: true,
    pattern: rx(F, 'FLAGOS_TRACE: "(.*)" is not a boolean; using the default'),
    parse: (m) => ({
      severity: 'warning',
      message: `FLAGOS_TRACE="${m[1]}" is not a boolean, so tracing is off. Use 1/true/on/yes or 0/false/off/no.`,
      fields: { value: m[1] },
    }),
  },
  {
    lines: [{ code: 'P1', component: 'env' }],
    ungated: true,
    pattern: rx(F, 'not a torch_fl variable; ignored \\(([A-Z0-9_]+)=(.*)\\)'),
    parse: (m) => ({
      severity: 'warning',
      message: `${m[1]} is not a torch_fl variable and was ignored (a typo?).`,
      fields: { name: m[1], value: m[2] },
    }),
  },
];
