import { parseArgs, type ParseArgsConfig } from 'node:util';

/** An error the user caused (bad arguments, bad input): printed as one line, never with a stack. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/** node:util parseArgs with positionals, where a bad flag becomes a UserError that also shows the usage. */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: O,
  usage: string,
) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options });
  } catch (error) {
    throw new UserError(`${(error as Error).message}; ${usage}`);
  }
}
