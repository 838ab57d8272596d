/**
 * Attribution that must not depend on a trace's age: a communication kernel names the same op whichever linking
 * rule found it, and 2021 traces' own `Call stack` frames give exact source lines.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../extension/analysis/analyze';
import { LinkProvenance } from '../../extension/analysis/types';
import { parseCallStack } from '../../extension/import/callStack';
import { importTrace, importTraceBytes } from '../../extension/import/kineto';
import { isDeviceKind, isOpKind, type Profile } from '../../extension/model/profile';
import { ROOT, tracePath } from '../helpers/traces';

const COMMUNICATION = /nccl|rccl/i;

async function load(name: string): Promise<Profile> {
  return importTrace(path.join(ROOT, tracePath(name)));
}

/** Per NCCL/RCCL kernel: the name of the op it is linked to ('' for none), and how it was linked. */
function communicationLinks(profile: Profile) {
  const analysis = analyze(profile);
  const links: { op: string; how: number }[] = [];
  for (let i = 0; i < profile.slices.length; i++) {
    if (!isDeviceKind(profile.slices.kind[i]) || !COMMUNICATION.test(profile.nameOf(i))) continue;
    const op = analysis.opOf[i];
    links.push({ op: op < 0 ? '' : profile.nameOf(op), how: analysis.provenance[i] });
  }
  return { analysis, links };
}

describe('communication kernels name the innermost cpu_op, whichever rule links them', () => {
  // Traces whose External ids are trusted: the same kernels linked by both rules.
  for (const name of [
    'tracelens_b200x8_eager.trace.json.gz',
    'tracelens_mi300x8_resnet_act_ckpt_rank0.trace.json.gz',
  ]) {
    it(`${name}: by External id and by enclosure alike`, async () => {
      const byId = communicationLinks(await load(name));
      expect(byId.analysis.externalIdTrusted).toBe(true);
      const linked = byId.links.filter((l) => l.how === LinkProvenance.ExternalId);
      expect(linked.length).toBeGreaterThan(0);
      expect(new Set(linked.map((l) => l.op))).toEqual(new Set(['record_param_comms']));
      // Both rules now agree on every device event they can both resolve, communication included.
      const [, agreed, compared] = /agree on (\d+) of (\d+)/.exec(byId.analysis.trustReason)!;
      expect(agreed).toBe(compared);

      // The same trace without External ids, as older traces are read: enclosure alone.
      const stripped = await load(name);
      stripped.slices.externalId.fill(Number.NaN);
      const byEnclosure = communicationLinks(stripped);
      expect(byEnclosure.analysis.externalIdTrusted).toBe(false);
      expect(byEnclosure.links).toHaveLength(byId.links.length);
      byId.links.forEach((link, k) => {
        if (link.how !== LinkProvenance.ExternalId) return;
        expect(byEnclosure.links[k]).toEqual({ op: link.op, how: LinkProvenance.Enclosure });
      });
    });
  }

  // Traces linked by enclosure (their External ids cannot be checked): nccl:* annotations sit inside
  // record_param_comms, which is the op torch itself stamps on the launch.
  for (const name of [
    'hta_a100_rank3of8_trace_diff_control.trace.json.gz',
    'param_dlrm_v100x8/worker0_step_12.1694128201545.pt.trace.json.gz',
    'param_dlrm_v100x8/worker5_step_12.1694128201549.pt.trace.json.gz',
  ]) {
    it(`${path.basename(name)}: record_param_comms, not the nccl: annotation inside it`, async () => {
      const { analysis, links } = communicationLinks(await load(name));
      expect(analysis.externalIdTrusted).toBe(false);
      expect(links.length).toBeGreaterThan(0);
      for (const link of links)
        expect(link).toEqual({ op: 'record_param_comms', how: LinkProvenance.Enclosure });
      const comms = analysis.ops.find((o) => o.name === 'record_param_comms')!;
      expect(comms.deviceSelfNs).toBeGreaterThan(0);
      for (const o of analysis.ops) if (o.name.startsWith('nccl:')) expect(o.deviceSelfNs).toBe(0);
    });
  }

  it('a user_annotation owns the launch only when no cpu_op encloses it', () => {
    const events = [
      { ph: 'X', cat: 'user_annotation', name: 'outer', pid: 1, tid: 1, ts: 0, dur: 100 },
      { ph: 'X', cat: 'cpu_op', name: 'record_param_comms', pid: 1, tid: 1, ts: 10, dur: 30 },
      { ph: 'X', cat: 'user_annotation', name: 'nccl:all_reduce', pid: 1, tid: 1, ts: 12, dur: 20 },
      {
        ph: 'X',
        cat: 'cuda_runtime',
        name: 'cudaLaunchKernel',
        pid: 1,
        tid: 1,
        ts: 14,
        dur: 2,
        args: { correlation: 1 },
      },
      { ph: 'X', cat: 'user_annotation', name: 'annotated', pid: 1, tid: 1, ts: 50, dur: 20 },
      {
        ph: 'X',
        cat: 'cuda_runtime',
        name: 'cudaLaunchKernel',
        pid: 1,
        tid: 1,
        ts: 55,
        dur: 2,
        args: { correlation: 2 },
      },
      {
        ph: 'X',
        cat: 'kernel',
        name: 'ncclKernel_AllReduce',
        pid: 0,
        tid: 7,
        ts: 20,
        dur: 5,
        args: { correlation: 1 },
      },
      { ph: 'X', cat: 'kernel', name: 'fill', pid: 0, tid: 7, ts: 60, dur: 5, args: { correlation: 2 } },
    ];
    const profile = importTraceBytes(
      't.json',
      new TextEncoder().encode(JSON.stringify({ traceEvents: events })),
    );
    const analysis = analyze(profile);
    const opOfKernel = (name: string) => {
      for (let i = 0; i < profile.slices.length; i++)
        if (profile.nameOf(i) === name && isDeviceKind(profile.slices.kind[i]))
          return profile.nameOf(analysis.opOf[i]);
      return undefined;
    };
    expect(opOfKernel('ncclKernel_AllReduce')).toBe('record_param_comms');
    expect(opOfKernel('fill')).toBe('annotated');
  });
});

describe('2021 traces: the Call stack arg gives exact source lines', () => {
  const TRACE = 'kineto_tbplugin_2021_v100_resnet50_w0.pt.trace.json.gz';

  it('every op with a Call stack gets its user frames, library frames left out, chains shared', async () => {
    const profile = await load(TRACE);
    const sites = profile.sites!;
    expect(sites).toBeDefined();
    // 14,994 ops carry a Call stack (MANIFEST: "Call stack" arg), each with a frame of the user's script.
    expect(sites.size).toBe(14994);
    // Each site belongs to exactly one op (device events share their op's External id, and get no site).
    let opsWithSites = 0;
    for (let i = 0; i < profile.slices.length; i++)
      if (isOpKind(profile.slices.kind[i]) && sites.has(profile.slices.externalId[i])) opsWithSites++;
    expect(opsWithSites).toBe(sites.size);
    const chains = new Set(sites.values());
    // 91 distinct stacks, 8 distinct user lines: the ops share 8 frame arrays, not 14,994.
    expect(chains.size).toBe(8);
    for (const chain of chains) {
      expect(chain.length).toBeGreaterThan(0);
      for (const frame of chain) {
        expect(frame.kind).toBe('trace');
        expect(frame.file).not.toMatch(/site-packages|[\\/]lib[\\/]python|(^|[\\/])torch[\\/]/);
      }
    }
    // External id 2 is aten::empty under profiler.step(): "…profiler.py(312): step;resnet50_profiler_api.py(54): <module>".
    expect(sites.get(2)).toEqual([
      { file: 'resnet50_profiler_api.py', line: 54, function: '<module>', kind: 'trace' },
    ]);
    expect(new Set([...chains].map((c) => c[0].line))).toEqual(new Set([42, 44, 46, 47, 49, 50, 51, 54]));
    expect(profile.warnings.filter((w) => /Call stack/.test(w.message))).toEqual([]);

    const analysis = analyze(profile);
    expect(analysis.lines.length).toBeGreaterThan(0);
    expect(analysis.lines.every((l) => l.file === 'resnet50_profiler_api.py')).toBe(true);
    expect(analysis.lines.some((l) => l.line === 46)).toBe(true);
  });

  it('an empty Call stack (2022 traces write "" on every op) is no site and no warning', async () => {
    const profile = await load('hta_a100_rank3of8_trace_diff_control.trace.json.gz');
    expect(profile.sites).toBeUndefined();
    expect(profile.warnings.filter((w) => /Call stack/.test(w.message))).toEqual([]);
  });
});

describe('Call stack parsing', () => {
  const opWith = (ext: number, stack: unknown, ts = ext * 10) => ({
    ph: 'X',
    cat: 'cpu_op',
    name: `op${ext}`,
    pid: 1,
    tid: 1,
    ts,
    dur: 5,
    args: { 'External id': ext, 'Call stack': stack },
  });
  const bytesOf = (events: unknown[]) => new TextEncoder().encode(JSON.stringify({ traceEvents: events }));

  it('frames innermost first, file names with parentheses and escapes, a trailing separator', () => {
    expect(
      parseCallStack(
        '/usr/lib/python3.10/runpy.py(86): _run_code;my (copy)/train.py(12): step;C:\\work\\main.py(3): <module>;',
      ),
    ).toEqual([
      { file: 'my (copy)/train.py', line: 12, function: 'step', kind: 'trace' },
      { file: 'C:\\work\\main.py', line: 3, function: '<module>', kind: 'trace' },
    ]);
    expect(parseCallStack('')).toEqual([]);
    expect(parseCallStack('/x/site-packages/torch/nn/modules/module.py(1051): _call_impl')).toEqual([]);
    expect(parseCallStack('train.py(12): step;not a frame')).toBeUndefined();
  });

  it('malformed stacks are skipped with one counted warning; the others still give sites', () => {
    const profile = importTraceBytes(
      't.json',
      bytesOf([
        opWith(1, 'train.py(5): main'),
        opWith(2, 'garbage without a line'),
        opWith(3, 42),
        opWith(4, 'garbage without a line'),
        opWith(5, '/env/lib/python3.9/site-packages/torch/functional.py(9): f'),
        opWith(6, null),
      ]),
    );
    expect([...profile.sites!.keys()]).toEqual([1]);
    const warnings = profile.warnings.filter((w) => /Call stack/.test(w.message));
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toMatch(/^3 op\(s\) have a "Call stack".*garbage without a line/);
  });

  it('reads the same sites whatever the chunk boundaries, escapes decoded', () => {
    const events = [
      opWith(7, 'C:\\work\\train.py(5): main'),
      opWith(8, 'a.py(1): f;b.py(2): g'),
      opWith(9, 'a.py(1): f;b.py(2): g'),
      opWith(10, 'caf\u00e9.py(3): h'),
    ];
    const whole = importTraceBytes('t.json', bytesOf(events));
    expect(whole.sites!.get(7)).toEqual([
      { file: 'C:\\work\\train.py', line: 5, function: 'main', kind: 'trace' },
    ]);
    expect(whole.sites!.get(8)).toBe(whole.sites!.get(9)); // one array for one stack
    expect(whole.sites!.get(10)![0].file).toBe('caf\u00e9.py');
    for (const chunkSize of [1, 5, 64]) {
      const chunked = importTraceBytes('t.json', bytesOf(events), { chunkSize });
      expect([...chunked.sites!]).toEqual([...whole.sites!]);
    }
  });

  it('only ops with an External id get a site (runtime calls and ops without one do not)', () => {
    const profile = importTraceBytes(
      't.json',
      bytesOf([
        { ...opWith(1, 'a.py(1): f'), cat: 'cuda_runtime' },
        {
          ph: 'X',
          cat: 'cpu_op',
          name: 'no id',
          pid: 1,
          tid: 1,
          ts: 50,
          dur: 1,
          args: { 'Call stack': 'a.py(2): f' },
        },
        { ...opWith(3, 'a.py(3): f'), cat: 'user_annotation' },
      ]),
    );
    expect([...profile.sites!.keys()]).toEqual([3]);
  });
});
