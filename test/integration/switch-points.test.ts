/**
 * Where the agent may switch torch's profiler (end a segment, close the window): never inside one of torch's
 * RecordFunction scopes. Stopping the profiler there frees the events the scope's end then writes to, and the process
 * crashes later, anywhere (a torchrun rank with a DataLoader worker died of SIGSEGV that way in about one run in two
 * with short segments). The fixture asks the running window itself, from the script, real Python and torch.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/agent';
import { runCli, profilingSuite } from '../helpers/cli';
import { PYTHON, ROOT } from '../helpers/paths';

const SCRIPT = path.join(ROOT, 'test', 'fixtures', 'switch', 'switch_points.py');
const SCRATCH = tempDir('switch');
const TIMEOUT = 180_000;

profilingSuite(SCRATCH);

describe('the points where the profiling window switches the profiler', () => {
  it(
    'are the script own lines, never a record_function scope, a dataset item inside DataLoader, or a collection',
    async () => {
      const run = await runCli(
        [
          'profile',
          '--out',
          path.join(SCRATCH, 'session'),
          '--python',
          PYTHON,
          '--mode',
          'cpu',
          '--',
          SCRIPT,
        ],
        { timeoutMs: TIMEOUT },
      );
      expect(run.code, run.stderr).toBe(0);
      const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
      expect(line, run.stdout).toBeDefined();
      const answers = JSON.parse(line!) as Record<string, [boolean, string | null]>;
      expect(answers).toEqual({
        "the script's own line": [true, 'main'],
        // Inside a scope the switch waits for the script's line after it.
        "inside the script's record_function": [false, 'main'],
        'after the record_function': [true, 'main'],
        // The dataset's own code, called from torch's fetch inside __next__'s record_function: the loop's next line.
        'a dataset item loaded in this process': [false, 'main'],
        'a finalizer run by a garbage collection': [false, '__del__'],
      });
    },
    TIMEOUT,
  );
});
