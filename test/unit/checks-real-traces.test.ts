/**
 * The checks on real third-party traces (../shared/traces): stock torch profiles from CUDA, ROCm, Ascend and
 * older eras. None of them is a torch_fl trace, so the expected results are those of stock torch, each explained.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CheckReport } from '../../extension/analysis/checks';
import { deriveBaseline } from '../../extension/analysis/checks';
import { checkTrace } from '../../extension/bringup/load';
import { importTrace } from '../../extension/import/kineto';

const traces = path.resolve(__dirname, '../../../shared/traces');
const cache = new Map<string, Promise<CheckReport>>();
function report(name: string): Promise<CheckReport> {
  let r = cache.get(name);
  if (!r) cache.set(name, (r = checkTrace(path.join(traces, name))));
  return r;
}
async function status(name: string): Promise<Record<string, string>> {
  const r = await report(name);
  return Object.fromEntries(
    r.results.map((x) => [x.id, `${x.status}${x.status === 'fail' && !x.required ? '*' : ''}`]),
  );
}

describe('real traces', () => {
  it('hta_a100_simple_add: stock torch-cuda passes everything required; its dangling flow halves are its own', async () => {
    const r = await report('hta_a100_simple_add.trace.json.gz');
    expect(r.platform).toBe('cuda');
    expect(r.totals.requiredFailed).toBe(0);
    const p2 = r.results.find((x) => x.id === 'P2')!;
    expect(p2).toMatchObject({ status: 'info', required: false });
    expect(p2.counts).toMatchObject({
      startOnly: 16,
      finishOnly: 176,
      finishOnlyOnRuntime: 176,
      paired: 139,
    });
    expect(p2.byDesign).toMatch(/torch-cuda leaves finish-only halves/);
    expect((await status('hta_a100_simple_add.trace.json.gz')).P4).toBe('skip'); // no aten::mm in that workload
  });

  it('hta_v100_ns_resolution: a full torch-cuda training trace passes every required check, device time included', async () => {
    const s = await status('hta_v100_ns_resolution_rank0.pt.trace.json.gz');
    expect(s).toMatchObject({
      P1: 'pass',
      P2: 'info',
      P3: 'pass',
      P4: 'pass',
      P5: 'pass',
      P6: 'pass',
      P7: 'pass',
      K6: 'pass',
      X3: 'pass',
    });
    expect((await report('hta_v100_ns_resolution_rank0.pt.trace.json.gz')).totals.requiredFailed).toBe(0);
  });

  it('hta_gp100: External id equals the correlation id on device events, so aten::mm cannot be checked by it', async () => {
    const r = await report('hta_gp100_gpu_user_annotation.trace.json.gz');
    const p4 = r.results.find((x) => x.id === 'P4')!;
    expect(p4.status).toBe('fail');
    expect(p4.details.join('\n')).toMatch(/External ids equal the event's own correlation id/);
    // No memset in that workload, which is not the parity workload: not held against the trace.
    expect(r.results.find((x) => x.id === 'P1')!.summary).toBe(
      '5 of 6 baseline categories present; gpu_memset not required',
    );
    expect(r.results.find((x) => x.id === 'K8')!.status).toBe('skip');
  });

  it('tracelens_mi300x8_resnet: ROCm leaves composable-kernel names mangled and has no cbid (by design)', async () => {
    const r = await report('tracelens_mi300x8_resnet_act_ckpt_rank0.trace.json.gz');
    expect(r.platform).toBe('rocm');
    const p5 = r.results.find((x) => x.id === 'P5')!;
    expect(p5.status).toBe('fail');
    expect(p5.counts).toMatchObject({ kernels: 2995, mangled: 108 });
    expect(p5.examples[0].name).toMatch(/^_ZN2ck16tensor_operation/);
    const p6 = r.results.find((x) => x.id === 'P6')!;
    expect(p6).toMatchObject({ status: 'info', summary: 'cuda_runtime events carry no "cbid" arg' });
  });

  it('tracelens_b200x8_eager: no Trace span, so there is no capture window', async () => {
    const s = await status('tracelens_b200x8_eager.trace.json.gz');
    expect(s).toMatchObject({ P7: 'fail', K10: 'fail', K1: 'fail', P4: 'pass', P5: 'pass', P6: 'pass' });
  });

  it('hta_cpu_only_gloo: a CPU-only trace has no device categories', async () => {
    const r = await report('hta_cpu_only_gloo_rank34.pt.trace.json.gz');
    expect(r.results.find((x) => x.id === 'P1')!.summary).toMatch(/^missing kernel, a runtime category/);
    expect((await status('hta_cpu_only_gloo_rank34.pt.trace.json.gz')).X2).toBe('skip');
  });

  it('kineto_tbplugin_gpu_metrics_input (2021): old category names read as today\'s; the 1:1 "async" flows pair', async () => {
    const r = await report('kineto_tbplugin_gpu_metrics_input.json');
    const p2 = r.results.find((x) => x.id === 'P2')!;
    expect(p2.status).toBe('pass');
    expect(p2.details.join('\n')).toMatch(/older category "async"/);
    expect(r.results.find((x) => x.id === 'P1')!.status).toBe('pass');
  });

  it('the shipped baseline is what `flagprof baseline` derives from four real torch-cuda traces', async () => {
    const names = [
      'hta_a100_simple_add.trace.json.gz',
      'hta_v100_ns_resolution_rank0.pt.trace.json.gz',
      'tracelens_h100_bert_small.trace.json.gz',
      'tracelens_b200x8_eager.trace.json.gz',
    ];
    const sources = [];
    for (const name of names) sources.push({ name, profile: await importTrace(path.join(traces, name)) });
    const derived = deriveBaseline(sources, 'test');
    const shipped = JSON.parse(
      readFileSync(
        path.resolve(__dirname, '../../extension/analysis/checks/torch-cuda-baseline.json'),
        'utf8',
      ),
    );
    expect({ ...derived, generated_by: shipped.generated_by }).toEqual(shipped);
  });
});
