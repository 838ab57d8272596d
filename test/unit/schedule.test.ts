/**
 * The --schedule parser of the launcher (extension/capture/launcher.ts): every text of
 * test/fixtures/schedule/cases.json, which the agent's own parser reads too (test/integration/schedule.test.ts), so
 * the command line, the editor setting and the agent accept the same schedules and word a refusal the same.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  agentArgs,
  parseStepSchedule,
  ScheduleError,
  stepScheduleText,
  type StepSchedule,
} from '../../extension/capture/launcher';
import { ROOT } from '../helpers/paths';

interface ScheduleCase {
  text: string;
  schedule?: StepSchedule;
  error?: string;
}
const { cases } = JSON.parse(
  readFileSync(path.join(ROOT, 'test', 'fixtures', 'schedule', 'cases.json'), 'utf8'),
) as { cases: ScheduleCase[] };

describe('parseStepSchedule', () => {
  it.each(cases.filter((c) => c.schedule).map((c) => [c.text, c.schedule] as const))(
    'reads %j',
    (text, schedule) => {
      expect(parseStepSchedule(text)).toEqual(schedule);
    },
  );

  it.each(cases.filter((c) => c.error !== undefined).map((c) => [c.text, c.error] as const))(
    'refuses %j in one line',
    (text, error) => {
      let thrown: unknown;
      try {
        parseStepSchedule(text);
      } catch (caught) {
        thrown = caught;
      }
      expect(thrown).toBeInstanceOf(ScheduleError);
      expect((thrown as Error).message).toBe(error);
      expect((thrown as Error).message).not.toContain('\n');
    },
  );

  it('writes a schedule the way it reads it back', () => {
    for (const { schedule } of cases.filter((c) => c.schedule)) {
      expect(parseStepSchedule(stepScheduleText(schedule!))).toEqual(schedule);
    }
    expect(stepScheduleText({ wait: 2, warmup: 1, active: 3, repeat: 0 })).toBe(
      'wait=2,warmup=1,active=3,repeat=0',
    );
  });

  it('passes the schedule to the agent before the script, and nothing when there is none', () => {
    const base = { python: 'python3', script: 'train.py', sessionDir: 'DIR', args: ['--lr', '1'] };
    const args = agentArgs({ ...base, schedule: { wait: 1, warmup: 0, active: 2, repeat: 3 } });
    const at = args.indexOf('--schedule');
    expect(args[at + 1]).toBe('wait=1,warmup=0,active=2,repeat=3');
    expect(at).toBeLessThan(args.indexOf('--'));
    expect(args.slice(args.indexOf('--'))).toEqual(['--', 'train.py', '--lr', '1']);
    expect(agentArgs(base)).not.toContain('--schedule');
  });
});
