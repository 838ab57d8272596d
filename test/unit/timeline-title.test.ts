/** A timeline tab's title: the session's script and local start time, else the trace's file name. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timelineTitle } from '../../extension/timeline/title';

describe('timelineTitle', () => {
  const tz = process.env.TZ;
  beforeAll(() => {
    process.env.TZ = 'Asia/Shanghai';
  });
  afterAll(() => {
    if (tz === undefined) delete process.env.TZ;
    else process.env.TZ = tz;
  });

  it("names a session's run by its script and the local time it started", () => {
    // As the agent writes session.json: the script absolute, startedAt in UTC.
    const session = { script: '/home/user/proj/examples/gpt/train.py', startedAt: '2026-12-02T10:02:41Z' };
    expect(timelineTitle('/home/user/proj/.flagprof/20261202-180241-123-train', session)).toBe(
      'train.py · 18:02',
    );
    expect(timelineTitle('run', { script: 'C:\\work\\model.py', startedAt: '2026-12-02T00:05:00Z' })).toBe(
      'model.py · 08:05',
    );
  });

  it("falls back to the trace's file name without a session, or with one missing or garbled fields", () => {
    expect(timelineTitle('/traces/bert.pt.trace.json.gz')).toBe('bert.pt.trace.json.gz');
    expect(timelineTitle('/runs/a/trace.json.gz', { script: 'train.py' })).toBe('trace.json.gz');
    expect(timelineTitle('/runs/a', { script: 'train.py', startedAt: 'yesterday' })).toBe('a');
    expect(timelineTitle('/runs/a', { script: 42, startedAt: '2026-12-02T10:02:41Z' })).toBe('a');
  });
});
