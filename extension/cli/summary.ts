import type { CliCommand } from './commands';

export const summaryCommand: CliCommand = {
  synopsis: 'summary TRACE [--json]',
  async run() {
    return 2;
  },
};
