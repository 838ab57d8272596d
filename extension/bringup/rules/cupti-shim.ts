/** The CUPTI dlopen shim (cupti_shim.h): which library it bound, or why it could not. */
import type { Rule } from './rule';
import { SHIM, U, n, rx, info } from './rule';

export const CUPTI_SHIM_RULES: readonly Rule[] = [
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
];
