/**
 * The checks on real traces of every platform in ../shared/traces: which capability row a trace is judged by,
 * what differs from torch-cuda by design (status "info", never a failure), the 2021 category names, P6's
 * cudaLaunchKernel, grouped skip reasons, a JSON file that is no trace, and where a failure points.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CheckReport } from '../../extension/analysis/checks';
import { runChecks } from '../../extension/analysis/checks';
import { analyze } from '../../extension/analysis/analyze';
import { PLATFORM_CAPABILITIES } from '../../extension/analysis/checks/context';
import { detectPlatform } from '../../extension/analysis/checks/platform';
import { checkTrace } from '../../extension/bringup/load';
import { checkCommand } from '../../extension/cli/check';
import { importTrace } from '../../extension/import/kineto';
import { UserError } from '../../extension/import/errors';
import { Profile } from '../../extension/model/profile';
import {
  CAPTURE_VENDOR_KEYS,
  VENDOR_KEYS,
  VENDORS,
  vendorRow,
  type VendorKey,
  type VendorRow,
} from '../../extension/shared/vendors';
import { ROOT, TRACES } from '../helpers/paths';
import { rawTraceEvents } from '../helpers/traces';

const cache = new Map<string, Promise<CheckReport>>();
function report(name: string): Promise<CheckReport> {
  let r = cache.get(name);
  if (!r) cache.set(name, (r = checkTrace(path.join(TRACES, name))));
  return r;
}
const result = async (name: string, id: string) => (await report(name)).results.find((r) => r.id === id)!;

async function cli(args: string[]): Promise<{ code: number; out: string }> {
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((c: string) => (chunks.push(String(c)), true)) as typeof process.stdout.write;
  try {
    return { code: await checkCommand.run(args), out: chunks.join('') };
  } finally {
    process.stdout.write = write;
  }
}

const ASCEND = 'ascend_npu_trace_view.json';
const H100 = 'tracelens_h100_bert_small.trace.json.gz';
const MI300X = 'tracelens_mi300x_bert_small.trace.json.gz';
const Y2021 = 'kineto_tbplugin_2021_v100_resnet50_w0.pt.trace.json.gz';

describe('platform detection on real traces', () => {
  it.each([
    [ASCEND, 'ascend', /Ascend Hardware/],
    [MI300X, 'rocm', /AMD Instinct MI300X/],
    ['tracelens_mi210_gpu_only.trace.json.gz', 'rocm', /MI210/],
    ['hta_mi250_rocm6.2_minitoy.trace.json.gz', 'rocm', /AMD Radeon/],
    ['tracelens_mi300x_vllm_graph_capture_rank0.pt.trace.json.gz', 'rocm', /roctracer|HIP|AMD/],
    ['hta_mtia_inference_rank0.trace.json.gz', 'mtia', /MTIA/],
    [H100, 'cuda', /H100/],
    ['kineto_plugin_2020_resnet50_w0_array.pt.trace.json.gz', 'cuda', /CUDA/],
  ])('%s is judged by the %s row', async (name, platform, reason) => {
    const r = await report(name);
    expect(r.platform).toBe(platform);
    expect(r.platformReason).toMatch(reason);
  });

  it('the Ascend torch_npu trace: no required failure, its own format shown as by design, 274 of 276 device events reach an op', async () => {
    const r = await report(ASCEND);
    expect(r.totals.requiredFailed).toBe(0);
    expect(r.totals.fail).toBe(0);
    const x3 = r.results.find((x) => x.id === 'X3')!;
    expect(x3.status).toBe('pass');
    expect(x3.counts).toMatchObject({ deviceEvents: 276, linkedToOp: 274 });
    const p1 = r.results.find((x) => x.id === 'P1')!;
    expect(p1.status).toBe('info');
    expect(p1.byDesign).toMatch(/torch_npu's own trace/);
    expect(r.results.find((x) => x.id === 'K8')!.status).toBe('skip'); // the ascend row declares no memset
  });

  it('MI300X: ROCm writes "cid" for "cbid" and no occupancy fields, by design; nothing required fails', async () => {
    const r = await report(MI300X);
    expect(r.totals.requiredFailed).toBe(0);
    const p6 = await result(MI300X, 'P6');
    expect(p6).toMatchObject({ status: 'info', required: false });
    expect(p6.byDesign).toMatch(/"cid"/);
    const raw = rawTraceEvents(MI300X).filter((e) => e.cat === 'cuda_runtime');
    expect(raw.some((e) => (e.args as Record<string, unknown>)?.cid !== undefined)).toBe(true);
    expect(raw.some((e) => (e.args as Record<string, unknown>)?.cbid !== undefined)).toBe(false);
  });

  it('a roctracer trace with a genuine gap still fails: MI250 kernels without grid and block', async () => {
    const p3 = await result('hta_mi250_rocm6.2_minitoy.trace.json.gz', 'P3');
    expect(p3.status).toBe('fail');
    expect(p3.summary).toMatch(/kernel lacks block, grid/);
    expect(p3.summary).not.toMatch(/occupancy|cbid/);
  });
});

describe('torch-cuda behaviour by design', () => {
  it('H100: P2/K5 dangling halves on runtime calls are info, in the JSON too; no required failure', async () => {
    const r = await report(H100);
    expect(r.totals).toMatchObject({ requiredFailed: 0, fail: 0, info: 2 });
    const p2 = await result(H100, 'P2');
    expect(p2).toMatchObject({ status: 'info', required: false });
    expect(p2.counts).toMatchObject({ finishOnlyOnRuntime: 46, finishOnlyOnDevice: 0 });
    expect(p2.byDesign).toMatch(/torch-cuda leaves finish-only halves/);
    const { code, out } = await cli([path.join(TRACES, H100), '--json']);
    expect(code).toBe(0);
    const json = JSON.parse(out) as CheckReport;
    expect(json.results.find((x) => x.id === 'K5')!.status).toBe('info');
  });

  it('H100: P6 counts cudaLaunchKernel (cbid 211) as the real API it is', async () => {
    const runtime = rawTraceEvents(H100).filter((e) => e.cat === 'cuda_runtime' && e.ph === 'X');
    const launches = runtime.filter((e) => e.name === 'cudaLaunchKernel');
    expect(launches.length).toBeGreaterThan(0);
    expect(launches.every((e) => (e.args as { cbid?: number }).cbid === 211)).toBe(true);
    const p6 = await result(H100, 'P6');
    expect(p6.status).toBe('pass');
    expect(p6.counts.specificNames).toBe(runtime.filter((e) => e.name !== 'cudaRuntime').length);
    expect(p6.counts.generic).toBe(0);
  });
});

describe('2021 category names', () => {
  it('Operator/Runtime/Kernel/Memcpy/Memset are read as cpu_op/cuda_runtime/kernel/gpu_memcpy/gpu_memset', async () => {
    const raw = rawTraceEvents(Y2021);
    const count = (cat: string) => raw.filter((e) => e.cat === cat && e.ph === 'X').length;
    const r = await report(Y2021);
    expect(r.runtimeCategory).toBe('cuda_runtime');
    const p1 = r.results.find((x) => x.id === 'P1')!;
    expect(p1.status).toBe('pass');
    expect(p1.details.join('\n')).toMatch(/Operator → cpu_op/);
    const k1 = r.results.find((x) => x.id === 'K1')!;
    expect(k1.status).toBe('pass');
    expect(k1.counts.cpuOps).toBe(count('Operator'));
    expect(r.results.find((x) => x.id === 'K8')!.counts.events).toBe(count('Memset'));
    // What still fails is in the file: kernels recorded with no duration.
    const k2 = r.results.find((x) => x.id === 'K2')!;
    const zero = raw.filter((e) => e.cat === 'Kernel' && e.ph === 'X' && !(Number(e.dur) > 0)).length;
    expect(k2.counts.unnamedOrZeroDuration).toBe(zero);
    expect(r.totals.requiredFailed).toBe(zero > 0 ? 1 : 0);
  });
});

describe('report shape', () => {
  it('identical skip reasons are grouped, and the CLI prints each once', async () => {
    const r = await report(H100);
    const contract = r.skipGroups.find((g) => g.ids.length > 1)!;
    expect(contract.ids).toEqual(['K3', 'K9', 'K12']);
    const { out } = await cli([path.join(TRACES, H100)]);
    expect(out.split(contract.reason).length - 1).toBe(1);
    expect(out).toMatch(/K3 Runtime events +skipped for reason \(1\) below/);
    expect(out).toMatch(/2 differ by design/);
  });

  it('a valid JSON file that is not a trace is bad input: one line, exit 2, as summary and report say', async () => {
    const file = path.join(ROOT, 'package.json');
    await expect(checkTrace(file)).rejects.toThrow(UserError);
    const error = await checkCommand.run([file]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).exitCode).toBe(2);
    expect((error as UserError).message).toMatch(/package\.json: not a trace/);
    expect((error as UserError).message).not.toMatch(/\n/);
  });

  it('a failure names the call site of the op behind its first example when the profile has call sites', async () => {
    const name = 'tracelens_mi300x8_resnet_act_ckpt_rank0.trace.json.gz';
    const profile = await importTrace(path.join(TRACES, name));
    const analysis = analyze(profile);
    const before = runChecks(profile, analysis).results.find(
      (x) => x.status === 'fail' && x.examples.some((e) => e.externalId !== undefined),
    )!;
    expect(before.location).toBeUndefined();
    const example = before.examples.find((e) => e.externalId !== undefined)!;
    const ext = example.externalId!;
    const script = path.join(ROOT, 'examples/gpt/train.py');
    profile.sites = new Map([[ext, [{ file: script, line: 7, function: '<module>', column: 5 }]]]);
    const after = runChecks(profile, analysis).results.find((x) => x.id === before.id)!;
    expect(after.location).toMatchObject({ file: script, line: 7, column: 5, op: example.name });
  });
});

describe('the vendor table against the platform rows', () => {
  it('names only platform rows the checks know, each served by one vendor (and the one superseding it)', () => {
    const row = (key: VendorKey): VendorRow => VENDORS[key];
    const served = VENDOR_KEYS.filter((key) => !row(key).supersedes).flatMap((key) => VENDORS[key].platforms);
    for (const platform of served) expect(PLATFORM_CAPABILITIES).toHaveProperty(platform);
    expect(new Set(served).size).toBe(served.length);
    for (const key of VENDOR_KEYS.filter((k) => row(k).supersedes)) {
      const superseded = vendorRow(row(key).supersedes);
      expect(superseded, key).toBeDefined();
      expect(row(key).platforms).toEqual(superseded!.platforms);
    }
  });

  it.each(CAPTURE_VENDOR_KEYS)(
    'a capture recorded through %s is judged by its row when the trace names no device',
    (key) => {
      const vendor = VENDORS[key];
      const profile = new Profile('capture');
      profile.metadata.capture = { vendor: key };
      const detected = detectPlatform(profile);
      if (vendor.capturePlatform === undefined) {
        // An API several vendors' devices share decides nothing by itself.
        expect(vendor.platforms.length).toBeGreaterThan(1);
        expect(detected.platform).toBe('other');
      } else {
        expect(vendor.platforms).toContain(vendor.capturePlatform);
        expect(detected).toEqual({
          platform: vendor.capturePlatform,
          reason: `agent-mode capture recorded through ${vendor.label}`,
        });
      }
    },
  );

  it('a MetaX MCPTI capture is judged by the metax row; a name that is no vendor decides nothing', () => {
    const profile = new Profile('capture');
    profile.metadata.capture = { vendor: 'mcpti' };
    expect(detectPlatform(profile).platform).toBe('metax');
    profile.metadata.capture = { vendor: 'constructor' };
    expect(detectPlatform(profile).platform).toBe('other');
  });
});
