import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UserError } from '../import/errors';

/** node:util parseArgs (with positionals unless told), where a bad flag becomes a UserError that also shows the usage. */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: O,
  usage: string,
  allowPositionals = true,
) {
  try {
    return parseArgs({ args: argv, allowPositionals, options });
  } catch (error) {
    throw new UserError(`${(error as Error).message}; ${usage}`);
  }
}
