/**
 * flagprof — the product's pipeline without VS Code. Each subcommand lives in extension/cli/<name>.ts and returns
 * its exit code; bad input is one line on stderr and exit 2, never a stack trace.
 */
import { COMMANDS, usage } from './cli/commands';
import { UserError } from './cli/errors';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '-h' || name === '--help' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-V') {
    process.stdout.write(`${PRODUCT_VERSION}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`flagprof: unknown command '${name}'\n${usage()}`);
    return 2;
  }
  return command.run(rest);
}

declare const PRODUCT_VERSION: string;

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UserError) {
      process.stderr.write(`flagprof: ${error.message}\n`);
      process.exitCode = error.exitCode;
    } else {
      // A bug of ours: still one line for the user, the stack only when asked for.
      const text = error instanceof Error ? error.message : String(error);
      process.stderr.write(`flagprof: internal error: ${text}\n`);
      if (process.env.FLAGPROF_DEBUG) process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
      process.exitCode = 70;
    }
  },
);
