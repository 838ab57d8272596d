/** The subcommand table: one line per command; each module owns its parsing (node:util parseArgs). */
import { summaryCommand } from './summary';
import { baselineCommand } from './baseline';
import { checkCommand } from './check';
import { diagnosticsCommand } from './diagnostics';
import { reportCommand } from './report';
import { profileCommand } from './profile';
import { decodeCommand } from './decode';

export interface CliCommand {
  /** One line for `flagprof --help`. */
  readonly synopsis: string;
  run(argv: string[]): Promise<number>;
}

export const COMMANDS: Record<string, CliCommand> = {
  summary: summaryCommand,
  check: checkCommand,
  diagnostics: diagnosticsCommand,
  baseline: baselineCommand,
  report: reportCommand,
  profile: profileCommand,
  decode: decodeCommand,
};

export function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  flagprof ${c.synopsis}`);
  return `usage:\n${lines.join('\n')}\n`;
}
