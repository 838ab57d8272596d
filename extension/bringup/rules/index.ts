/**
 * The FLAGOS_TRACE line catalogue, one file per component that prints the lines, and one (./activity.ts) for the
 * templates several vendors print in the same words. A line takes the first rule whose pattern matches, so the
 * order below is part of the catalogue: the agent's rewording of A4/A12 after the plugin's, and each vendor's
 * own lines before the shared templates.
 */
import { ACTIVITY_RULES } from './activity';
import { ADAPTOR_RULES } from './adaptor';
import { AGENT_RULES } from './agent';
import { CUPTI_RULES } from './cupti';
import { CUPTI_SHIM_RULES } from './cupti-shim';
import { ENV_RULES } from './env';
import { MSPTI_RULES } from './mspti';
import type { Rule } from './rule';
import { ROCTRACER_RULES } from './roctracer';

export type { LineId, Rule } from './rule';

export const RULES: readonly Rule[] = [
  ...ADAPTOR_RULES,
  ...AGENT_RULES,
  ...CUPTI_RULES,
  ...CUPTI_SHIM_RULES,
  ...MSPTI_RULES,
  ...ROCTRACER_RULES,
  ...ACTIVITY_RULES,
  ...ENV_RULES,
];
