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
