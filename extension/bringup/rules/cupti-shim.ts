/**
 * The CUPTI dlopen shim (cupti_shim.h): which library it bound, or why it could not. The library override's
 * failure is every vendor's in the capture agent, which prints it with its own prefix.
 */
import type { Rule } from './rule';
import { F, SHIM, U, n, rx, info } from './rule';

export const CUPTI_SHIM_RULES: readonly Rule[] = [
  {
    // The shim's line (torch_fl; vintage A names FLAGOS_CUPTI_LIBRARY), and the agent's: every vendor's override.
    lines: [
      { code: 'S1', component: 'cupti-shim' },
      { code: 'S1', component: 'agent' },
    ],
    ungated: true,
    pattern: new RegExp(
      `^(?:${SHIM}(FLAGOS_TRACER_LIBRARY|FLAGOS_CUPTI_LIBRARY)|${F}(FLAGOS_TRACER_LIBRARY))=(.*?) could not be loaded: (.*)`,
    ),
    parse: (m) => {
      const agent = m[2] !== undefined;
      const variable = m[1] ?? m[2];
      return {
        severity: 'warning',
        message: `The library override ${variable} could not be loaded; the ${agent ? 'agent' : 'shim'} fell back to its normal search.`,
        fields: {
          variable,
          path: m[3],
          error: m[4],
          // Vintages are torch_fl's: the agent's line has none.
          ...(agent ? {} : { vintage: variable === 'FLAGOS_CUPTI_LIBRARY' ? 'A' : 'B' }),
        },
        line: { code: 'S1', component: agent ? 'agent' : 'cupti-shim' },
      };
    },
  },
  {
    lines: [{ code: 'S2', component: 'cupti-shim' }],
    pattern: rx(
      SHIM,
      `bound (?:cupti|mcpti|mupti|topspti)ActivityRegisterCallbacks -> (.*) \\((?:CUPTI|MCPTI|MUPTI|TOPSPTI) API version ${U}\\)`,
    ),
    parse: (m) =>
      info(
        `Bound ${m[1]} (API version ${m[2]}).`,
        { apiVersion: n(m[2]) },
        { library: m[1], apiVersion: m[2] },
      ),
  },
  {
    lines: [{ code: 'S3', component: 'cupti-shim' }],
    pattern: rx(SHIM, 'cuptiActivityRegisterCallbacks NOT resolved'),
    parse: () => ({
      severity: 'warning',
      message: 'A library opened but lacks cuptiActivityRegisterCallbacks: tracer unavailable.',
    }),
  },
];
