/**
 * flagprof — the product's pipeline without VS Code. Each subcommand lives in extension/cli/<name>.ts and returns
 * its exit code; bad input is one line on stderr and exit 2, never a stack trace.
 */
import { existsSync } from 'node:fs';
import { COMMANDS, HELP, fullHelp, usage } from './cli/commands';
import { UserError } from './import/errors';
import { splitProfileArgv } from './cli/profile';
import { displayPath, quote } from './import/errors';
import { visibleText } from './shared/text';

/** Past this, a line of an error message is cut in the middle. */
const MAX_LINE = 1000;

/** Commands whose positional words are input paths, with their options that take a value (a `-` after one is that value). */
const INPUT_COMMANDS: Record<string, readonly string[]> = {
  summary: ['--top'],
  check: ['--baseline', '--platform'],
  diagnostics: [],
  baseline: ['--out'],
  report: ['--out', '-o'],
  diff: ['--by', '--top'],
  export: ['--out', '-o', '--rank'],
};

/** The words that are flagprof's own: a script's arguments after `profile script.py`, or after `--`, are not. */
function ownWords(name: string, argv: string[]): string[] {
  if (name === 'profile') return splitProfileArgv(argv).own;
  const end = argv.indexOf('--');
  return end < 0 ? argv : argv.slice(0, end);
}

/**
 * `-` names stdin. Every input goes through a path (the commands stat it, and tell a session folder from a
 * trace), so `-` becomes /dev/stdin, which the importer reads as the stream it is.
 */
function stdinAsPath(name: string, argv: string[]): string[] {
  const valueOptions = INPUT_COMMANDS[name];
  if (!valueOptions || process.platform === 'win32' || !existsSync('/dev/stdin')) return argv;
  let own = true;
  return argv.map((word, i) => {
    if (word === '--') own = false;
    const isValue = i > 0 && valueOptions.includes(argv[i - 1]) && own;
    return word === '-' && !isValue ? '/dev/stdin' : word;
  });
}

async function main(argv: string[]): Promise<number> {
  // A reader that stops early (`flagprof summary t.json --json | head`) closes the pipe: that is the end, not an
  // error with a stack.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  const [name, ...rest] = argv;
  if (!name) {
    process.stderr.write(usage());
    return 2;
  }
  if (name === '-h' || name === '--help' || name === 'help') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic !== undefined && !HELP[topic]) {
      process.stderr.write(`flagprof: unknown command ${quote(topic)}\n${usage()}`);
      return 2;
    }
    process.stdout.write(topic ? HELP[topic] : fullHelp());
    return 0;
  }
  if (name === '--version' || name === '-V') {
    process.stdout.write(`${PRODUCT_VERSION}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`flagprof: unknown command ${quote(name)}\n${usage()}`);
    return 2;
  }
  if (ownWords(name, rest).some((word) => word === '--help' || word === '-h')) {
    process.stdout.write(HELP[name] ?? `usage: flagprof ${command.synopsis}\n`);
    return 0;
  }
  return command.run(stdinAsPath(name, rest));
}

/** Errors of the system, not of flagprof, that a user's paths cause: reported as bad input. */
const INPUT_ERRNO = new Set([
  'EACCES',
  'EPERM',
  'ENOENT',
  'ENOTDIR',
  'EISDIR',
  'EROFS',
  'ENOSPC',
  'EDQUOT',
  'EEXIST',
  'ENAMETOOLONG',
  'ELOOP',
  'ENXIO',
  'EFBIG',
  'EIO',
  'ETXTBSY',
]);

/** Every line short and free of control characters, whatever text the message quotes. */
function printable(message: string): string {
  return message
    .split('\n')
    .map((line) => {
      const cut =
        line.length <= MAX_LINE ? line : `${line.slice(0, MAX_LINE / 2)}…${line.slice(-MAX_LINE / 2)}`;
      return visibleText(cut, Number.POSITIVE_INFINITY);
    })
    .join('\n');
}

function userFacing(error: unknown): UserError | undefined {
  if (error instanceof UserError) return error;
  const system = error as NodeJS.ErrnoException;
  if (system && typeof system.code === 'string' && INPUT_ERRNO.has(system.code) && system.syscall) {
    const where = system.path ?? (system as { dest?: string }).dest;
    return new UserError(
      `${where ? `${displayPath(where)}: ` : ''}cannot ${system.syscall} (${system.code})`,
    );
  }
  // Input too large for this process, met before any limit of ours: still the input's fault, not a bug.
  if (
    error instanceof RangeError &&
    /Invalid string length|Array buffer allocation failed|Invalid typed array length/.test(error.message)
  ) {
    return new UserError(`the input is too large for the memory of this process (${error.message})`);
  }
  if ((error as NodeJS.ErrnoException)?.code === 'ERR_STRING_TOO_LONG') {
    return new UserError(`the input is too large for this process (${(error as Error).message})`);
  }
  return undefined;
}

declare const PRODUCT_VERSION: string;

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const user = userFacing(error);
    if (user) {
      process.stderr.write(`flagprof: ${printable(user.message)}\n`);
      process.exitCode = user.exitCode;
    } else {
      // A bug of ours: still one line for the user, the stack only when asked for.
      const text = error instanceof Error ? error.message : String(error);
      process.stderr.write(`flagprof: internal error: ${printable(text)}\n`);
      if (process.env.FLAGPROF_DEBUG) process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
      process.exitCode = 70;
    }
  },
);
