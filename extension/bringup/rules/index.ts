/**
 * The FLAGOS_TRACE line catalogue, one file per component that prints the lines. A line takes the first rule
 * whose pattern matches, so the order below is part of the catalogue: the agent's rewording of A4/A12 after the
 * plugin's, and each vendor's lines in the order its file lists them.
 */
import { ADAPTOR_RULES } from './adaptor';
import { AGENT_RULES } from './agent';
import { CUPTI_RULES } from './cupti';
import { CUPTI_SHIM_RULES } from './cupti-shim';
import { ENV_RULES } from './env';
import { MSPTI_RULES } from './mspti';
import { MUPTI_RULES } from './mupti';
import type { Rule } from './rule';
import { ROCTRACER_RULES } from './roctracer';
import { TOPSPTI_RULES } from './topspti';

export type { Rule } from './rule';

export const RULES: readonly Rule[] = [
  ...ADAPTOR_RULES,
  ...AGENT_RULES,
  ...CUPTI_RULES,
  ...CUPTI_SHIM_RULES,
  ...MSPTI_RULES,
  ...MUPTI_RULES,
  ...TOPSPTI_RULES,
  ...ROCTRACER_RULES,
  ...ENV_RULES,
];
