import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { BaselineError, deriveBaseline } from '../analysis/checks';
import { displayPath } from '../import/errors';
import { importTrace } from '../import/kineto';
import type { CliCommand } from './commands';
import { UserError } from '../import/errors';
import { parseCommandArgs } from './errors';

const USAGE = 'usage: flagprof baseline TRACE... --out FILE';

export const baselineCommand: CliCommand = {
  synopsis:
    'baseline TRACE... --out FILE   derive a structural baseline (categories, args keys) from traces you trust',
  async run(argv) {
    const parsed = parseCommandArgs(argv, { out: { type: 'string' } }, USAGE);
    const traces = parsed.positionals;
    const out = parsed.values.out;
    if (traces.length === 0 || !out) throw new UserError(USAGE);
    const sources = [];
    // Traces as written, never a session's merged profile: a baseline records what a tracer writes.
    for (const trace of traces)
      sources.push({ name: path.basename(trace), profile: await importTrace(trace) });
    let baseline;
    try {
      baseline = deriveBaseline(
        sources,
        `flagprof baseline ${typeof PRODUCT_VERSION === 'string' ? PRODUCT_VERSION : 'dev'} from ${sources.length} trace(s)`,
      );
    } catch (error) {
      if (error instanceof BaselineError) throw new UserError(error.message);
      throw error;
    }
    try {
      writeFileSync(out, `${JSON.stringify(baseline, null, 2)}\n`);
    } catch (error) {
      throw new UserError(
        `${displayPath(out)}: cannot write (${(error as NodeJS.ErrnoException).code ?? error})`,
      );
    }
    process.stderr.write(
      `flagprof: wrote ${displayPath(out)}: ${baseline.categories.length} categories, kernel ${baseline.kernel_arg_keys.length} / memcpy ${baseline.gpu_memcpy_arg_keys.length} / memset ${baseline.gpu_memset_arg_keys.length} / runtime ${baseline.runtime_arg_keys.length} keys\n`,
    );
    return 0;
  },
};

declare const PRODUCT_VERSION: string;
