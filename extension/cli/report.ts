import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { analyze } from '../analysis/analyze';
import { openRun } from '../capture/merged';
import { memoryBudgetProblem } from '../timeline/budget';
import { encodeTimelineBuffer } from '../timeline/encode';
import { buildReportHtml, loadWebviewBundle } from '../timeline/report';
import { terminalText } from '../shared/text';
import type { CliCommand } from './commands';
import { UserError } from '../import/errors';
import { parseCommandArgs } from './errors';
import { formatBytes, formatCount } from '../shared/format';

const USAGE = 'usage: flagprof report TRACE|SESSION|FOLDER --out report.html';

export const reportCommand: CliCommand = {
  synopsis:
    'report TRACE|SESSION|FOLDER --out FILE.html   the timeline as one self-contained HTML file (every rank of a run)',
  async run(argv) {
    const parsed = parseCommandArgs(argv, { out: { type: 'string', short: 'o' } }, USAGE);
    const [target, ...extra] = parsed.positionals;
    const out = parsed.values.out;
    if (!target || extra.length > 0 || !out) throw new UserError(USAGE);
    let bundle;
    try {
      bundle = loadWebviewBundle();
    } catch (error) {
      throw new UserError((error as Error).message, 70);
    }
    // A trace, a session with its parts or a folder of rank traces; a missing target is reported by openRun.
    const problem = memoryBudgetProblem(target);
    if (problem) throw new UserError(problem);
    // A run of several processes (torchrun, a folder of rank traces) is one timeline, a track group per rank.
    const { profile } = await openRun(target);
    const analysis = analyze(profile);
    const title = path.basename(path.resolve(target));
    const payload = encodeTimelineBuffer(profile, analysis, { title, source: path.resolve(target) });
    const html = buildReportHtml(payload, title, bundle);
    try {
      writeFileSync(out, html);
    } catch (error) {
      throw new UserError(
        `${out}: cannot write the report (${(error as NodeJS.ErrnoException).code ?? error})`,
      );
    }
    process.stderr.write(
      `flagprof: wrote ${terminalText(out)} (${formatBytes(html.length)}, ${formatCount(profile.slices.length)} slices)\n`,
    );
    return 0;
  },
};
