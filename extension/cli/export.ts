/** `flagprof export SESSION|TRACE --out FILE.json[.gz]`: the run as one standard Kineto trace (capture/export.ts). */
import path from 'node:path';
import { checkExportTarget, exportOpened } from '../capture/export';
import { openProfile, type ProfileSource } from '../capture/open';
import { UserError, displayPath } from '../import/errors';
import { formatBytes, formatCount } from '../shared/format';
import { terminalText } from '../shared/text';
import type { CliCommand } from './commands';
import { parseCommandArgs } from './errors';

const USAGE = 'usage: flagprof export SESSION|TRACE --out FILE.json[.gz] [--rank N]';

/** What `flagprof export --help` prints. */
export const EXPORT_HELP = `${USAGE}

Writes everything the run holds — the trace's events, the device activity an agent-mode session keeps in
capture.fpc, launch flows, and each op's call site (file:line:column) — as one Kineto trace that Perfetto, the
TensorBoard profiler plugin, HTA and Chrome DevTools' Performance panel open. Gzipped when FILE ends in .gz.
Nothing is left behind when it fails. TRACE is a Kineto trace (.json or .json.gz), a pipe, a FIFO or - (stdin);
SESSION a folder written by flagprof profile.

options:
  -o, --out FILE   where to write the trace (.json or .json.gz)
  --rank N         distributedInfo.rank, which HTA reads (default: the trace's own, else 0)
  -h, --help       this help
`;

export const exportCommand: CliCommand = {
  synopsis: 'export SESSION|TRACE --out FILE.json[.gz]   the run as one Kineto trace for other viewers',
  async run(argv) {
    const parsed = parseCommandArgs(
      argv,
      { out: { type: 'string', short: 'o' }, rank: { type: 'string' } },
      USAGE,
    );
    const [target, ...extra] = parsed.positionals;
    const out = parsed.values.out;
    if (!target || extra.length > 0 || !out) throw new UserError(USAGE);
    const rank = parseRank(parsed.values.rank);
    checkExportTarget(out);
    const opened = await openProfile(target === '-' ? '/dev/stdin' : target);
    refuseOwnFiles(opened.source, out);
    for (const warning of opened.profile.warnings)
      process.stderr.write(`flagprof: warning: ${terminalText(target)}: ${terminalText(warning.message)}\n`);
    const written = await exportOpened(opened, out, { rank });
    process.stdout.write(
      `flagprof: wrote ${terminalText(out)} (${formatBytes(written.bytes)}): ` +
        `${formatCount(written.events)} events, ${formatCount(written.deviceEvents)} device events, ` +
        `${formatCount(written.flowPairs)} flows (${formatCount(written.flowEvents)} flow events)\n`,
    );
    return 0;
  },
};

function parseRank(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const rank = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(rank))
    throw new UserError(`--rank: expected a non-negative integer, got '${terminalText(text)}'`);
  return rank;
}

/** The files a session is made of: writing over one would break the session. */
const SESSION_FILE =
  /^(trace\.json(\.gz)?|session\.json|sites(\.\d+)?\.json|diagnostics\.jsonl|capture\.fpc)$/;

function refuseOwnFiles(source: ProfileSource, out: string): void {
  if (source.kind !== 'session') return;
  const target = path.resolve(out);
  const inFolder =
    path.dirname(target) === path.resolve(source.folder) && SESSION_FILE.test(path.basename(target));
  if (
    inFolder ||
    [source.tracePath, source.capturePath].some((file) => file && path.resolve(file) === target)
  )
    throw new UserError(`${displayPath(out)}: is one of the session's own files; export to another name`);
}
