import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  deriveFindings,
  displayLog,
  KNOWN_CODES,
  normalizeDiagnostics,
  parseDiagnostics,
  parseLine,
  parseTraceLog,
  summarizeDiagnostics,
} from '../../extension/bringup/diagnostics';
import { RULES } from '../../extension/bringup/rules';
import { ACTIVITY_RULES } from '../../extension/bringup/rules/activity';
import { ADAPTOR_RULES } from '../../extension/bringup/rules/adaptor';
import { AGENT_RULES } from '../../extension/bringup/rules/agent';
import { CUPTI_RULES } from '../../extension/bringup/rules/cupti';
import { CUPTI_SHIM_RULES } from '../../extension/bringup/rules/cupti-shim';
import { ENV_RULES } from '../../extension/bringup/rules/env';
import { MSPTI_RULES } from '../../extension/bringup/rules/mspti';
import { ROCTRACER_RULES } from '../../extension/bringup/rules/roctracer';
import { COMPONENTS } from '../../extension/bringup/types';
import { VENDOR_COMPONENTS } from '../../extension/shared/vendors';

const fixtures = path.resolve(__dirname, '../fixtures/bringup');
const catalog = readFileSync(path.join(fixtures, 'catalog-lines.txt'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => {
    const [code, component, ...rest] = l.split('\t');
    return { code, component, line: rest.join('\t') };
  });

describe('FLAGOS_TRACE line catalogue', () => {
  it('has a sample for every catalogued code', () => {
    expect(new Set(catalog.map((c) => c.code))).toEqual(new Set(KNOWN_CODES));
  });

  it.each(catalog)('$code parses into component $component', ({ code, component, line }) => {
    const d = parseLine(line);
    expect(d.code).toBe(code);
    expect(d.component).toBe(component);
    expect(d.raw).toBe(line);
    expect(d.message.length).toBeGreaterThan(0);
  });

  it('lifts the counts out', () => {
    const byCode = Object.fromEntries(
      catalog.filter((c) => c.component !== 'agent').map((c) => [c.code, parseLine(c.line)]),
    );
    expect(byCode.A4.counts.eventsDrained).toBe(258);
    expect(byCode.A11.counts).toEqual({ inWindow: 13, total: 13 });
    expect(byCode.A16.counts).toMatchObject({ linked: 24, candidates: 24, events: 258, dropped: 0 });
    expect(byCode.A16.fields.resolver).toBe('present');
    expect(byCode.C4.counts).toEqual({ CONCURRENT_KERNEL: 0, KERNEL: 0, MEMCPY: 0, MEMSET: 0 });
    expect(byCode.C8.counts.EXTERNAL_CORRELATION).toBe(0);
    expect(byCode.C14.counts).toEqual({ buffersCompleted: 1, validSize: 41216 });
    expect(byCode.A6.fields).toEqual({
      windowStart: '1785000000000000000',
      windowEnd: '1785000000157000000',
    });
    expect(byCode.S2.fields).toMatchObject({
      library: '/usr/local/cuda/lib64/libcupti.so.12',
      apiVersion: '24',
    });
    expect(byCode.S1.fields.path).toBe('/opt/my cupti/libcupti.so');
    expect(byCode.A15.fields.name).toContain('bitonicSortKVInPlace<float, long, 2');
    expect(byCode.M4.fields.kind).toBe('RUNTIME_API');
    expect(byCode.U2.counts.EXTERNAL_CORRELATION).toBe(3);
  });

  it("reads the product agent's own wording of A4 and A12", () => {
    const a4 = parseLine(
      '[flagos] session stop: copied kernel=12 memcpy=1 memset=1 runtime=15 driver=0 external=5 records, dropped 2',
    );
    expect(a4).toMatchObject({ component: 'agent', code: 'A4', severity: 'warning' });
    expect(a4.counts).toMatchObject({ eventsDrained: 29, recordsDropped: 2, external: 5 });
    expect(summarizeDiagnostics([a4])).toMatchObject({ eventsDrained: 29, recordsDropped: { agent: 2 } });
    const a12 = parseTraceLog(
      '[flagos] the capture holds 14 device records but no runtime records: device activity cannot be linked to the ops that launched it.\n[flagos]   Device time per op will read 0; the device timeline itself is unaffected.',
    );
    expect(a12).toHaveLength(1);
    expect(a12[0]).toMatchObject({ component: 'agent', code: 'A12', severity: 'error', ungated: true });
  });

  it('marks the two never-gated warnings as errors', () => {
    const a12 = parseLine('[flagos] kineto called processTrace with an EMPTY getLinkedActivity callback.');
    const c16 = parseLine(
      '[flagos] CUPTI activity records failed the layout self-check (external correlation kind unexpected).',
    );
    for (const d of [a12, c16]) {
      expect(d.severity).toBe('error');
      expect(d.ungated).toBe(true);
    }
  });

  it('grades results by what they mean', () => {
    expect(parseLine('[flagos] Found 0/40 device events in window').severity).toBe('error');
    expect(parseLine('[flagos] session stop: drained 0 device events').severity).toBe('warning');
    expect(parseLine('[flagos] ActivityRegisterCallbacks result: 1').severity).toBe('error');
    expect(
      parseLine('[flagos] init ActivityEnable CONCURRENT_KERNEL=1 KERNEL=0 MEMCPY=0 MEMSET=0 (x)').severity,
    ).toBe('info');
    expect(
      parseLine('[flagos] init ActivityEnable CONCURRENT_KERNEL=1 KERNEL=1 MEMCPY=0 MEMSET=0 (x)').severity,
    ).toBe('error');
    expect(
      parseLine(
        '[flagos] processTrace(4-arg) linked 0/24 link candidates (of 50 events, resolver=present), dropped 0 outside window (kernel=0 memcpy=0 memset=0 runtime=0)',
      ).message,
    ).toMatch(/vendor correlation ids/);
    expect(parseLine('[flagos] msptiActivityEnable(11) returned 1').severity).toBe('warning');
  });

  it('recognises the older wording of the per-buffer cap and the library override', () => {
    const c17 = parseLine(
      '[flagos] processBuffer exceeded max record count (100000) for buffer size 8388608 bytes; possible ActivityGetNextRecord infinite loop',
    );
    expect(c17.code).toBe('C17');
    expect(c17.fields.vintage).toBe('A');
    const s1 = parseLine('[flagos-cupti-shim] FLAGOS_CUPTI_LIBRARY=/x.so could not be loaded: nope');
    expect(s1.code).toBe('S1');
    expect(s1.fields.vintage).toBe('A');
  });

  it('keeps unknown lines and other torch_fl output', () => {
    expect(parseLine('hello from the user script')).toMatchObject({ component: 'unknown', code: '' });
    expect(parseLine('[flagos dispatch] mm -> flaggems')).toMatchObject({ component: 'torch_fl' });
    expect(parseLine('[flagos] cudaMalloc(1024) failed: out of memory')).toMatchObject({
      component: 'torch_fl',
      severity: 'warning',
    });
  });

  it('matches lines that carry a prefix of their own', () => {
    expect(parseLine('2026-11-30 06:00:01 [flagos] MSPTI session started').code).toBe('M7');
  });
});

/** Lines the fixture has no sample of: the agent's wording of S1. */
const samples = [
  ...catalog,
  {
    code: 'S1',
    component: 'agent',
    line: '[flagos] FLAGOS_TRACER_LIBRARY=/opt/x/libcupti.so could not be loaded: /opt/x/libcupti.so: cannot open shared object file',
  },
];

describe('the rules', () => {
  const lines = RULES.flatMap((rule) => rule.lines.map((line) => ({ rule, ...line })));

  it('each name a known component, and no code appears twice within a component', () => {
    const ids = lines.map((l) => `${l.component}/${l.code}`);
    for (const line of lines) {
      expect(COMPONENTS).toContain(line.component);
      expect(line.code).toMatch(/^[A-Z]\d+$/);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('stand in the file of their component, or in the shared templates when several vendors print them', () => {
    const byFile = {
      adaptor: ADAPTOR_RULES,
      agent: AGENT_RULES,
      cupti: CUPTI_RULES,
      'cupti-shim': CUPTI_SHIM_RULES,
      mspti: MSPTI_RULES,
      roctracer: ROCTRACER_RULES,
      env: ENV_RULES,
    };
    for (const [component, rules] of Object.entries(byFile)) {
      expect(rules.length).toBeGreaterThan(0);
      // S1 is the shim's line and the agent's.
      for (const rule of rules) expect(rule.lines[0].component).toBe(component);
    }
    for (const rule of ACTIVITY_RULES) {
      expect(new Set(rule.lines.map((l) => l.component)).size).toBeGreaterThan(1);
      for (const line of rule.lines) expect(VENDOR_COMPONENTS).toContain(line.component);
    }
    // The templates stand after every vendor's own lines (first match wins).
    expect([...Object.values(byFile).slice(0, -1), ACTIVITY_RULES, ENV_RULES].flat()).toEqual(RULES);
  });

  it.each(lines.map((line) => ({ ...line, id: `${line.component}/${line.code}` })))(
    '$id reads its catalogue sample and says what it means',
    ({ rule, code, component }) => {
      const sample = samples.find((c) => c.code === code && c.component === component);
      expect(sample).toBeDefined();
      const m = rule.pattern.exec(sample!.line.slice(sample!.line.indexOf('[flagos')).trimEnd());
      expect(m).not.toBeNull();
      const parsed = rule.parse(m!);
      expect(parsed.line ?? rule.lines[0]).toEqual({ code, component });
      expect(parsed.message.trim().length).toBeGreaterThan(0);
    },
  );
});

describe('parseTraceLog on a CUPTI session', () => {
  const text = readFileSync(path.join(fixtures, 'cupti-session.log'), 'utf8');
  const diags = parseTraceLog(text);

  it('joins the continuation lines of the empty-resolver warning', () => {
    const a12 = diags.filter((d) => d.code === 'A12');
    expect(a12).toHaveLength(1);
    expect(a12[0].raw.split('\n')).toHaveLength(5);
    expect(a12[0].line).toBe(24);
  });

  it('keeps every non-empty line: none dropped', () => {
    const nonEmpty = text.split('\n').filter((l) => l.trim()).length;
    const covered = diags.reduce((sum, d) => sum + d.raw.split('\n').length, 0);
    expect(covered).toBe(nonEmpty);
    expect(diags.filter((d) => d.component === 'unknown').map((d) => d.raw)).toEqual([
      'Traceback (most recent call last):',
      '  File "parity.py", line 3, in <module>',
    ]);
  });

  it('summarises the session', () => {
    const s = summarizeDiagnostics(diags);
    expect(s).toMatchObject({
      tracer: 'cupti',
      library: '/usr/local/cuda-12.8/extras/CUPTI/lib64/libcupti.so.12',
      apiVersion: '24',
      registered: true,
      sessions: 1,
      eventsDrained: 52,
      linked: 0,
      candidates: 24,
      resolver: 'EMPTY',
      inWindow: 13,
      totalDevice: 13,
      window: ['1785000000000000000', '1785000000157000000'],
      buffersRequested: 1,
      buffersCompleted: 1,
    });
    expect(s.enableResults).toMatchObject({ RUNTIME: 0, EXTERNAL_CORRELATION: 0, MEMSET: 0 });
    expect(s.bySeverity.error).toBe(2);
  });
});

describe('structured frames and diagnostics.jsonl', () => {
  it('accepts frames, captured lines and plain text in one file', () => {
    const jsonl = [
      JSON.stringify({
        component: 'agent',
        severity: 'warn',
        message: 'records dropped',
        counts: { recordsDropped: 7 },
      }),
      JSON.stringify({ stream: 'stderr', line: '[flagos] MUPTI session started' }),
      '[flagos] MUPTI session stopped with 9 events',
      JSON.stringify({ component: 'cupti', severity: 'error', message: 'layout mismatch', counts: {} }),
      '{not json',
    ].join('\n');
    const diags = parseDiagnostics(jsonl);
    expect(diags.map((d) => [d.component, d.severity, d.code])).toEqual([
      ['agent', 'warning', ''],
      ['mupti', 'info', 'U3'],
      ['mupti', 'info', 'U4'],
      ['cupti', 'error', ''],
      ['unknown', 'info', ''],
    ]);
    expect(diags[0].counts.recordsDropped).toBe(7);
    expect(diags[2].line).toBe(3);
    expect(summarizeDiagnostics(diags).recordsDropped).toEqual({ agent: 7 });
  });

  it('shows a JSON-lines log as the text it captured, line for line', () => {
    const jsonl = [
      JSON.stringify({ ts: 1, line: '[flagos] MSPTI session started' }),
      JSON.stringify({ component: 'agent', severity: 'error', message: 'layout mismatch' }),
      'plain text',
    ].join('\n');
    expect(displayLog(jsonl).split('\n')).toEqual([
      '[flagos] MSPTI session started',
      '[agent] error: layout mismatch',
      'plain text',
    ]);
  });

  it('normalises already-decoded frames', () => {
    const diags = normalizeDiagnostics([
      { component: 'mspti', severity: 'info', message: 'session started', counts: { n: 1 } },
    ]);
    expect(diags[0]).toMatchObject({ component: 'mspti', message: 'session started', counts: { n: 1 } });
  });
});

describe('derived findings', () => {
  it('flags a MONOTONIC against REALTIME clock mismatch', () => {
    const diags = parseTraceLog(
      [
        '[flagos] processTrace(4-arg) called with 2 events, window=[1785000000000000000,1785000000157000000]',
        '[flagos] First event: kind=0 start=5123456789 end=5123459789',
      ].join('\n'),
    );
    const findings = deriveFindings(diags);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ code: 'F-clock', severity: 'error' });
    expect(findings[0].message).toMatch(/MONOTONIC/);
  });

  it('stays quiet when the clocks agree', () => {
    const text = readFileSync(path.join(fixtures, 'cupti-session.log'), 'utf8');
    expect(deriveFindings(parseTraceLog(text))).toEqual([]);
  });
});
