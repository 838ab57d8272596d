import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/**
 * Builds Kineto traces of the parity workload (5× matmul+relu, a 16-element sort, a memset, a device-to-host copy)
 * as a PrivateUse1 tracer would write them, correct by default; each option injects one bug a check guards against.
 * Shapes follow the real traces in ../shared/traces (torch 2.x object format, integer µs).
 */

export interface FixtureOptions {
  runtimeCategory?: 'privateuse1_runtime' | 'cuda_runtime';
  /** Flow halves keyed on the torch External id instead of the vendor correlation id. */
  flowsOnTorchId?: boolean;
  /** Device and runtime events lose their External id (linked-activity lookup keyed on the vendor id). */
  noExternalIdOnDevice?: boolean;
  /** Launches carry the External id of the next op (external-correlation stack not unwound). */
  externalIdOfNextOp?: boolean;
  /** Kernel events lack these args keys. */
  dropKernelKeys?: string[];
  mangledKernels?: boolean;
  /** Every runtime event named with the placeholder. */
  genericRuntimeNames?: boolean;
  noCbid?: boolean;
  /** Device events from before the session (no capture-window filter), in µs before the window. */
  leakBeforeWindowUs?: number;
  /** Device timestamps in another clock: shifted by this many µs. */
  deviceClockShiftUs?: number;
  /** Bare identifier as a metadata value ("queued": N/A), which makes the file invalid JSON. */
  bareMetadata?: boolean;
  noMemset?: boolean;
  noMemcpy?: boolean;
  noTraceSpan?: boolean;
  /** Kernels without args.device / args.stream. */
  noDeviceStream?: boolean;
  zeroDurationKernels?: boolean;
  zeroBytesMemcpy?: boolean;
  /** Finish-only halves on runtime calls that launch nothing (what stock torch-cuda writes). */
  launchlessFinishHalves?: number;
}

type Event = Record<string, unknown>;

const T0 = 1_785_000_000_000_000; // µs, epoch
const CPU_PID = 4242;
const CPU_TID = 4242;
const DEVICE_PID = 0;
const STREAM = 7;

export function parityTrace(o: FixtureOptions = {}): string {
  const runtimeCat = o.runtimeCategory ?? 'privateuse1_runtime';
  const events: Event[] = [
    { ph: 'M', name: 'process_name', pid: CPU_PID, tid: 0, args: { name: 'python3' } },
    { ph: 'M', name: 'process_name', pid: DEVICE_PID, tid: 0, args: { name: 'flagos 0' } },
    { ph: 'M', name: 'thread_name', pid: DEVICE_PID, tid: STREAM, args: { name: `stream ${STREAM}` } },
  ];
  if (!o.noTraceSpan)
    events.push({
      ph: 'X',
      cat: 'Trace',
      name: 'PyTorch Profiler (0)',
      pid: 'Spans',
      tid: 'PyTorch Profiler',
      ts: T0,
      dur: 200_000,
      args: { 'Op count': 0 },
    });
  let ext = 1;
  let corr = 100;
  let t = T0 + 1_000;
  const deviceShift = o.deviceClockShiftUs ?? 0;
  const launches: { ext: number; corr: number; runtime: Event; device: Event }[] = [];

  const cpuOp = (name: string, ts: number, dur: number, id: number): Event => ({
    ph: 'X',
    cat: 'cpu_op',
    name,
    pid: CPU_PID,
    tid: CPU_TID,
    ts,
    dur,
    args: { 'External id': id, 'Record function id': 0, 'Sequence number': id },
  });

  const launch = (
    opExt: number,
    api: string,
    cbid: number,
    ts: number,
    deviceCat: 'kernel' | 'gpu_memcpy' | 'gpu_memset',
    deviceName: string,
    deviceTs: number,
    deviceDur: number,
    extra: Record<string, unknown>,
  ): void => {
    const c = corr++;
    const runtimeArgs: Record<string, unknown> = { correlation: c };
    if (!o.noCbid) runtimeArgs.cbid = cbid;
    const runtime: Event = {
      ph: 'X',
      cat: runtimeCat,
      name: o.genericRuntimeNames ? 'cudaRuntime' : api,
      pid: CPU_PID,
      tid: CPU_TID,
      ts,
      dur: 4,
      args: runtimeArgs,
    };
    const deviceArgs: Record<string, unknown> = { ...extra, correlation: c };
    if (!o.noDeviceStream) {
      deviceArgs.device = 0;
      deviceArgs.stream = STREAM;
    }
    const device: Event = {
      ph: 'X',
      cat: deviceCat,
      name: deviceName,
      pid: DEVICE_PID,
      tid: STREAM,
      ts: deviceTs + deviceShift,
      dur: o.zeroDurationKernels && deviceCat === 'kernel' ? 0 : deviceDur,
      args: deviceArgs,
    };
    launches.push({ ext: opExt, corr: c, runtime, device });
  };

  const kernelArgs = (): Record<string, unknown> => {
    const a: Record<string, unknown> = {
      queued: 0,
      context: 1,
      'registers per thread': 128,
      'shared memory': 16384,
      'blocks per SM': 2.5,
      'warps per SM': 10,
      grid: [8, 16, 1],
      block: [256, 1, 1],
      'est. achieved occupancy %': 25,
    };
    for (const k of o.dropKernelKeys ?? []) delete a[k];
    return a;
  };

  const mmName = o.mangledKernels
    ? '_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastEvE'
    : 'void at::native::gemm_kernel<float, 128, 64>(float const*, float const*, float*)';
  const reluName =
    'void at::native::vectorized_elementwise_kernel<4, at::native::relu_functor<float>, at::detail::Array<char*, 2> >(int, at::native::relu_functor<float>, at::detail::Array<char*, 2>)';
  const opOrder: number[] = [];
  for (let k = 0; k < 5; k++) {
    const matmul = ext++;
    const mm = ext++;
    const relu = ext++;
    opOrder.push(mm, relu);
    events.push(
      cpuOp('aten::matmul', t, 60, matmul),
      cpuOp('aten::mm', t + 5, 40, mm),
      cpuOp('aten::relu', t + 70, 30, relu),
    );
    launch(mm, 'cudaLaunchKernel', 211, t + 10, 'kernel', mmName, t + 20, 500, kernelArgs());
    launch(relu, 'cudaLaunchKernel', 211, t + 80, 'kernel', reluName, t + 530, 50, kernelArgs());
    t += 1_000;
  }
  const sort = ext++;
  opOrder.push(sort);
  events.push(cpuOp('aten::sort', t, 40, sort));
  launch(
    sort,
    'cudaLaunchKernel',
    211,
    t + 10,
    'kernel',
    'void at::native::bitonicSortKVInPlace<float, long, 2, -1, at::native::GTOp<float, true>, int>(float*, long*, int)',
    t + 20,
    8,
    { ...kernelArgs(), block: [16, 1, 1] },
  );
  t += 200;
  if (!o.noMemset) {
    const zero = ext++;
    opOrder.push(zero);
    events.push(cpuOp('aten::zero_', t, 30, zero));
    launch(zero, 'cudaMemsetAsync', 51, t + 5, 'gpu_memset', 'Memset (Device)', t + 12, 2, {
      context: 1,
      bytes: 4096,
      'memory bandwidth (GB/s)': 2.048,
    });
    t += 200;
  }
  if (!o.noMemcpy) {
    const copy = ext++;
    opOrder.push(copy);
    events.push(cpuOp('aten::copy_', t, 40, copy));
    launch(copy, 'cudaMemcpyAsync', 41, t + 5, 'gpu_memcpy', 'Memcpy DtoH (Device -> Pageable)', t + 15, 3, {
      context: 1,
      bytes: o.zeroBytesMemcpy ? 0 : 4,
      'memory bandwidth (GB/s)': o.zeroBytesMemcpy ? 0 : 0.0013,
    });
    t += 200;
  }

  // External ids on the launch and the device event, as kineto writes them once linking worked.
  const nextOf = new Map<number, number>();
  opOrder.forEach((id, i) => nextOf.set(id, opOrder[i + 1] ?? id + 100));
  for (const { ext: id, corr: c, runtime, device } of launches) {
    const stamped = o.externalIdOfNextOp ? nextOf.get(id)! : id;
    if (!o.noExternalIdOnDevice) {
      (runtime.args as Record<string, unknown>)['External id'] = stamped;
      (device.args as Record<string, unknown>)['External id'] = stamped;
    }
    events.push(runtime, device);
    const flowId = o.flowsOnTorchId ? stamped : c;
    events.push({
      ph: 's',
      id: flowId,
      pid: CPU_PID,
      tid: CPU_TID,
      ts: runtime.ts,
      cat: 'ac2g',
      name: 'ac2g',
    });
    events.push({
      ph: 'f',
      id: o.flowsOnTorchId ? c : flowId,
      pid: DEVICE_PID,
      tid: STREAM,
      ts: device.ts,
      cat: 'ac2g',
      name: 'ac2g',
      bp: 'e',
    });
  }
  for (let k = 0; k < (o.launchlessFinishHalves ?? 0); k++) {
    const c = corr++;
    const ts = t + k * 20;
    events.push({
      ph: 'X',
      cat: runtimeCat,
      name: 'cudaDeviceGetAttribute',
      pid: CPU_PID,
      tid: CPU_TID,
      ts,
      dur: 2,
      args: { cbid: 200, correlation: c },
    });
    events.push({ ph: 'f', id: c, pid: CPU_PID, tid: CPU_TID, ts, cat: 'ac2g', name: 'ac2g', bp: 'e' });
  }
  if (o.leakBeforeWindowUs) {
    const c = corr++;
    const ts = T0 - o.leakBeforeWindowUs;
    events.push({
      ph: 'X',
      cat: 'kernel',
      name: reluName,
      pid: DEVICE_PID,
      tid: STREAM,
      ts,
      dur: 50,
      args: { ...kernelArgs(), device: 0, stream: STREAM, correlation: c },
    });
  }
  const doc = {
    schemaVersion: 1,
    deviceProperties: [{ id: 0, name: 'FlagOS Test Device', totalGlobalMem: 1 << 30 }],
    traceEvents: events,
    traceName: 'parity.pt.trace.json',
  };
  let text = JSON.stringify(doc);
  if (o.bareMetadata) text = text.replace('"queued":0', '"queued":N/A');
  return text;
}

/**
 * A capture session folder as extension/capture writes it: trace.json.gz, session.json and diagnostics.jsonl
 * ({"ts", "line"} per captured stderr line).
 */
export function writeSessionFolder(
  dir: string,
  options: FixtureOptions,
  logLines: string[],
  session: Record<string, unknown> = {},
): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'trace.json.gz'), gzipSync(parityTrace(options)));
  writeFileSync(
    path.join(dir, 'session.json'),
    JSON.stringify({
      version: 1,
      mode: {
        requested: 'auto',
        chosen: 'kineto',
        reason: 'torch has a PrivateUse1 backend (flagos) with a profiler plugin',
      },
      torch: { version: '2.13.0' },
      python: { version: '3.11.7' },
      exitCode: 0,
      ...session,
    }),
  );
  writeFileSync(
    path.join(dir, 'diagnostics.jsonl'),
    logLines.map((line, i) => JSON.stringify({ ts: 1_796_000_000_000 + i, line })).join('\n') + '\n',
  );
}
