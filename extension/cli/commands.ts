/** The subcommand table: one line per command; each module owns its parsing (node:util parseArgs). */
import { summaryCommand } from './summary';

export interface CliCommand {
  /** One line for `flagprof --help`. */
  readonly synopsis: string;
  run(argv: string[]): Promise<number>;
}

export const COMMANDS: Record<string, CliCommand> = {
  summary: summaryCommand,
};

export function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  flagprof ${c.synopsis}`);
  return `usage:\n${lines.join('\n')}\n`;
}
