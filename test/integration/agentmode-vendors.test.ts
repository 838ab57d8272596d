/**
 * Agent mode end to end for every vendor activity API, on a machine without their hardware: one table row per
 * vendor (its fake library, its workload, its knobs, what its traces call things), and the assertions every vendor's
 * capture must pass run for each row. Each workload is a real Python + torch CPU run whose record_function ranges
 * launch work through the vendor's FAKE library (test/fake-<vendor>), captured by libflagprof_agent.so, decoded by
 * the addon, merged into the Kineto CPU trace, analysed and checked. What only one vendor does stays in its own
 * agentmode-<vendor>.test.ts.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runChecks } from '../../extension/analysis/checks';
import type { Analysis } from '../../extension/analysis/types';
import { loadAddon, type DecodedCapture } from '../../extension/import/addon';
import { Profile, SliceKind } from '../../extension/model/profile';
import type { CaptureVendorKey } from '../../extension/shared/vendors';
import {
  deviceSlices,
  expectFlowsPaired,
  expectMergedInsideWindow,
  expectRecordedLinesKnown,
  openAgentSession,
  runAgentWorkload,
  type WorkloadRun,
} from '../helpers/capture';
import {
  PYTHON,
  ROOT,
  ensureFakeCupti,
  ensureFakeMcpti,
  ensureFakeMspti,
  ensureFakeMupti,
  ensureFakeRocprofiler,
  ensureFakeRoctracer,
  ensureFakeTopspti,
  ensureNativeBuilt,
} from '../helpers/native';

/** What one vendor's fake run is expected to give. Names are as the vendor's own Kineto traces show them. */
interface VendorCase {
  vendor: CaptureVendorKey;
  library: () => string;
  /** The file name of the fake, as the capture records the bound library. */
  libraryFile: RegExp;
  workload: string;
  /** The API version the fake reports (undefined where it comes from an installed vendor header). */
  apiVersion?: number;
  /** The fake's knob that drops every Nth device record, where it has one. */
  dropKnob?: string;
  /** The platform row of the capability table the session is judged by, and the reason the trace gives. */
  platform: { platform: string; reason: RegExp };
  deviceTrack: { processName: string; name: string };
  runtimeCategory: string;
  /** The op whose range launched a device event of this name (undefined: no such name is expected). */
  opOf: (name: string) => string | undefined;
  /** A kernel name the fake hands over that no demangler reads (kept as is). */
  undemangled?: (name: string) => boolean;
  /** Device events (kernels, copies, fills) and kernels the plain run records inside the window. */
  devices: number;
  kernels: number;
  /** Device events and runtime calls merged into the trace. */
  merged: number;
  /** A kernel the vendor left unnamed ('kernel'), launched outside every range: its runtime call's name. */
  unnamedRuntime?: string;
  /** Every runtime call name the plain run shows. */
  runtimes: string[];
  /** The label for an id the vendor does not name, with the id it keeps (none where the API has no ids). */
  generic?: { name: string; cbid: number };
  /** Whether runtime calls keep a vendor API id. */
  idsKept: boolean;
  metadata: {
    /** Device event name -> metadata it carries (partial); the first one's keys are exactly these. */
    kernels: [string, Record<string, unknown>][];
    kernelKeys: string[];
    memcpy: Record<string, unknown>;
    /** A fill's metadata; undefined where the API reports fills as kernels (rocprofiler-sdk). */
    memset: Record<string, unknown> | undefined;
    /** The keys of a runtime call's metadata. */
    apiKeys: string[];
  };
  pushed: {
    /** The runtime call that carries the pushed ids, the kernel it launches, and names that must carry none. */
    launch: string;
    kernel: string;
    unpushed: (name: string) => boolean;
  };
  /** What the platform row's capabilities decide: the status of the cbid (P6), memcpy (K7) and memset (K8) checks. */
  capabilityChecks: Record<string, 'pass' | 'info' | 'skip'>;
  /** FLAGOS_TRACE=on: lines on stderr, and codes recorded in the capture. */
  trace: { stderr: RegExp[]; codes: string[] };
}

const GEMM_CUTLASS =
  'void cutlass::Kernel<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(cutlass_80_simt_sgemm_128x128_8x4_nn_align1::Params)';
const RELU_FILL =
  'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)';
const SORT = 'void at::native::bitonicSortKVInPlace<float>(float*, int)';
const GEMM_HIP = 'Cijk_Ailk_Bljk_SB_MT64x64x16_MI32x32x2x1_SN_1LDSB0';
const GEMM_MC = 'mcblas_sgemm_128x128x8_nn_align1';
const GEMM_MU = 'mublas_sgemm_128x128x8_nn';
const GEMM_TOPS = 'topsblas_sgemm_128x128_nn';

/** The metadata of a CUPTI-layout kernel record: 13 fields with occupancy, 10 without (no device record). */
const CUPTI_KERNEL_KEYS = [
  'block',
  'context',
  'correlation',
  'device',
  'grid',
  'queued',
  'registers per thread',
];
const CUPTI_GEMM = {
  grid: [2, 2, 1],
  block: [256, 1, 1],
  'registers per thread': 128,
  'shared memory': 16384,
  device: 0,
  context: 1,
  stream: 7,
  queued: 0,
};

const fromTable = (table: Record<string, string>) => (name: string) => table[name];

/** The ops of the CUPTI workload's device events, for a clone with its own GEMM kernel. */
const cloneOps = (gemm: string) =>
  fromTable({
    [gemm]: 'aten::mm', // launched inside aten::mm (the workload's mm kernel)
    [SORT]: 'fake::sort',
    [RELU_FILL]: 'fake::relu',
    'Memset (Device)': 'fake::sort',
    'Memcpy DtoH (Device -> Pageable)': 'fake::to_cpu',
  });

/** A CUPTI clone's metadata: CUPTI's fields without occupancy (no device records). */
const cloneMetadata = (gemm: string) => ({
  kernels: [[gemm, CUPTI_GEMM]] as [string, Record<string, unknown>][],
  kernelKeys: [...CUPTI_KERNEL_KEYS, 'shared memory', 'stream'],
  memcpy: { bytes: 4096, device: 0, stream: 7 },
  memset: { bytes: 64, value: 0, device: 0, stream: 7 },
  apiKeys: ['cbid', 'correlation'],
});

const CASES: VendorCase[] = [
  {
    vendor: 'cupti',
    library: ensureFakeCupti,
    libraryFile: /libcupti_fake\.so$/,
    workload: path.join(ROOT, 'test', 'fake-cupti', 'workload.py'),
    dropKnob: 'FAKE_CUPTI_DROP_EVERY',
    platform: { platform: 'cuda', reason: /CUDA/ },
    deviceTrack: { processName: 'GPU 0', name: 'stream 7' },
    runtimeCategory: 'cuda_runtime',
    opOf: fromTable({
      [GEMM_CUTLASS]: 'aten::mm',
      [SORT]: 'fake::sort',
      [RELU_FILL]: 'fake::relu',
      'Memset (Device)': 'fake::sort',
      'Memcpy DtoH (Device -> Pageable)': 'fake::to_cpu',
    }),
    devices: 5 + 5 + 1 + 1 + 1,
    kernels: 5 + 5 + 1,
    merged: 13 + 15,
    runtimes: [
      'cudaLaunchKernel',
      'cudaMemcpyAsync',
      'cudaMemsetAsync',
      'cudaDeviceSynchronize',
      'cudaRuntime',
    ],
    generic: { name: 'cudaRuntime', cbid: 100000 },
    idsKept: true,
    metadata: {
      kernels: [[GEMM_CUTLASS, CUPTI_GEMM]],
      // Occupancy from the device record the agent kept.
      kernelKeys: [
        ...CUPTI_KERNEL_KEYS,
        'shared memory',
        'stream',
        'blocks per SM',
        'warps per SM',
        'est. achieved occupancy %',
      ],
      memcpy: { bytes: 4096, device: 0, stream: 7 },
      memset: { bytes: 64, value: 0, device: 0, stream: 7 },
      apiKeys: ['cbid', 'correlation'],
    },
    pushed: { launch: 'cudaLaunchKernel', kernel: GEMM_CUTLASS, unpushed: (n) => n === RELU_FILL },
    trace: {
      stderr: [
        /\[flagos\] Registering CUPTI activity callbacks\.\.\./,
        /\[flagos\] Activity setup results: CALLBACKS=0, .*RUNTIME=0, EXTERNAL_CORRELATION=0/,
        /\[flagos-cupti-shim\] bound cuptiActivityRegisterCallbacks -> .*libcupti_fake\.so \(CUPTI API version \d+\)/,
      ],
      codes: ['S2', 'C2', 'C3', 'C4', 'C6', 'C7', 'C8', 'C10', 'C12', 'A4'],
    },
    capabilityChecks: { P6: 'pass', K7: 'pass', K8: 'pass' },
  },
  {
    vendor: 'mspti',
    library: ensureFakeMspti,
    libraryFile: /libmspti_fake\.so$/,
    workload: path.join(ROOT, 'test', 'fake-mspti', 'workload.py'),
    apiVersion: 260000,
    dropKnob: 'FAKE_MSPTI_DROP_EVERY',
    platform: { platform: 'ascend', reason: /AscendCL|MSPTI/ },
    deviceTrack: { processName: 'NPU 0', name: 'Stream 3' },
    runtimeCategory: 'privateuse1_runtime',
    opOf: fromTable({
      aclnnMatmul_MatMulCommon_MatMulV2: 'aten::mm',
      aclnnRelu_ReluAiVector_Relu: 'fake::relu',
      aclnnSort_SortAiCore_Sort: 'fake::sort',
      Memset: 'fake::sort',
      'Memcpy DtoH': 'fake::to_cpu',
    }),
    devices: 5 + 5 + 1 + 1 + 1 + 1,
    kernels: 5 + 5 + 1 + 1,
    merged: 14 + 15,
    unnamedRuntime: 'AscendRuntime', // the vendor left both names out
    runtimes: [
      'aclnnMatmul',
      'aclnnRelu',
      'aclnnSort',
      'aclrtMemsetAsync',
      'aclrtMemcpy',
      'aclrtSynchronizeStream',
      'AscendRuntime',
    ],
    idsKept: false, // MSPTI has no callback ids
    metadata: {
      kernels: [
        ['aclnnMatmul_MatMulCommon_MatMulV2', { device: 0, stream: 3, 'Task Type': 'KERNEL_AICORE' }],
        ['aclnnRelu_ReluAiVector_Relu', { 'Task Type': 'KERNEL_AIVEC' }],
      ],
      kernelKeys: ['device', 'stream', 'Task Type', 'correlation'],
      memcpy: { bytes: 4096, 'Copy Kind': 'DtoH', Async: false, stream: 3 },
      memset: { bytes: 64, value: 0, Async: true },
      apiKeys: ['Thread Id', 'correlation'],
    },
    pushed: {
      // The agent pops with a real address: with NULL, the fake (as CANN 9.0) pops nothing and ids pile up.
      launch: 'aclnnMatmul',
      kernel: 'aclnnMatmul_MatMulCommon_MatMulV2',
      unpushed: (n) => n === 'aclnnRelu' || n === 'aclnnRelu_ReluAiVector_Relu',
    },
    trace: {
      stderr: [
        /\[flagos\] bound msptiActivityRegisterCallbacks -> .*libmspti_fake\.so \(MSPTI version 260000\)/,
        /\[flagos\] MSPTI session started/,
        /\[flagos\] MSPTI activity setup results: CALLBACKS=0, .*API=0, EXTERNAL_CORRELATION=0, FLUSH=0$/m,
      ],
      codes: ['M0', 'M7', 'M8', 'M9', 'M13', 'M14', 'A4'],
    },
    // Ascend declares no callback ids and no memset; nothing pushed torch ids (K9).
    capabilityChecks: { P6: 'info', K7: 'pass', K8: 'skip', K9: 'skip' },
  },
  {
    vendor: 'roctracer',
    library: ensureFakeRoctracer,
    libraryFile: /libroctracer64_fake\.so$/,
    workload: path.join(ROOT, 'test', 'fake-roctracer', 'workload.py'),
    apiVersion: 401,
    platform: { platform: 'dcu', reason: /^agent-mode capture recorded through ROCtracer$/ },
    deviceTrack: { processName: 'GPU 0', name: 'stream 0' },
    runtimeCategory: 'cuda_runtime',
    undemangled: (name) => name.startsWith('_ZN2at6native29vectorized_elementwise_kernelILi4EZZZ'),
    opOf: (name) =>
      name.includes('vectorized_elementwise_kernel')
        ? 'fake::relu'
        : fromTable({
            [GEMM_HIP]: 'aten::mm',
            [SORT]: 'fake::sort',
            'Memset (Device)': 'fake::sort',
            'Memcpy DtoH (Device -> Host)': 'fake::to_cpu',
          })(name),
    devices: 5 + 5 + 1 + 1 + 1 + 1,
    kernels: 5 + 5 + 1 + 1,
    merged: 14 + 15,
    unnamedRuntime: 'hipLaunchKernel',
    runtimes: [
      'hipLaunchKernel',
      'hipExtModuleLaunchKernel',
      'hipMemsetAsync',
      'hipMemcpyAsync',
      'hipStreamSynchronize',
    ],
    idsKept: true, // the HIP API ids
    metadata: {
      kernels: [[GEMM_HIP, { device: 0, stream: 0, kind: 'Dispatch Kernel' }]],
      // grid and block from the HIP API callback of the launch (ROCtracer's activity records carry none)
      kernelKeys: ['device', 'stream', 'kind', 'grid', 'block', 'shared memory', 'correlation'],
      memcpy: { bytes: 4096, kind: 'DtoH', stream: 0 },
      memset: { bytes: 64, kind: 'Fill Buffer' },
      apiKeys: ['cbid', 'cid', 'correlation'],
    },
    pushed: {
      launch: 'hipExtModuleLaunchKernel',
      kernel: GEMM_HIP,
      unpushed: (n) => n === 'hipLaunchKernel' || n.includes('vectorized_elementwise_kernel'),
    },
    trace: {
      stderr: [
        /\[flagos\] bound roctracer_enable_domain_activity_expl -> .*libroctracer64_fake\.so \(ROCtracer version 401\)/,
        /\[flagos\] ROCtracer session started/,
        /\[flagos\] ROCtracer activity setup results: POOL=0, HIP_OPS=0, HIP_API=0, EXT_API=0, FLUSH=0$/m,
      ],
      codes: ['R24', 'R28', 'R29', 'R30', 'R31', 'R32', 'R39', 'A4'],
    },
    // The DCU row declares neither copies nor fills.
    capabilityChecks: { P6: 'pass', K7: 'skip', K8: 'skip' },
  },
  {
    vendor: 'mcpti',
    library: ensureFakeMcpti,
    libraryFile: /libmcpti_fake\.so$/,
    workload: path.join(ROOT, 'test', 'fake-mcpti', 'workload.py'),
    apiVersion: 18,
    dropKnob: 'FAKE_MCPTI_DROP_EVERY',
    platform: { platform: 'metax', reason: /^agent-mode capture recorded through MCPTI$/ },
    deviceTrack: { processName: 'GPU 0', name: 'stream 7' },
    runtimeCategory: 'cuda_runtime',
    opOf: fromTable({
      [GEMM_MC]: 'aten::mm',
      [SORT]: 'fake::sort',
      [RELU_FILL]: 'fake::relu',
      'Memset (Device)': 'fake::sort',
      'Memcpy DtoH (Device -> Pageable)': 'fake::to_cpu',
    }),
    devices: 5 + 5 + 1 + 1 + 1,
    kernels: 5 + 5 + 1,
    merged: 13 + 15,
    // MetaX's names from mcptiActivityGetApiName: CUDA's table would name 17 cudaGetDevice, 9 cudaSetupArgument.
    runtimes: ['mcLaunchKernel', 'mcMemcpyAsync', 'mcMemsetAsync', 'mcDeviceSynchronize', 'mcRuntime'],
    // 211 is cudaLaunchKernel in CUDA's table; MCPTI does not name it.
    generic: { name: 'mcRuntime', cbid: 211 },
    idsKept: true,
    metadata: {
      kernels: [[GEMM_MC, CUPTI_GEMM]],
      // MCPTI writes no device records: occupancy from the agent's, out of wcudaDeviceGetAttribute.
      kernelKeys: [
        ...CUPTI_KERNEL_KEYS,
        'shared memory',
        'stream',
        'blocks per SM',
        'warps per SM',
        'est. achieved occupancy %',
      ],
      memcpy: { bytes: 4096, device: 0, stream: 7 },
      memset: { bytes: 64, value: 0, device: 0, stream: 7 },
      apiKeys: ['cbid', 'correlation'],
    },
    pushed: { launch: 'mcLaunchKernel', kernel: GEMM_MC, unpushed: (n) => n === RELU_FILL },
    trace: {
      stderr: [
        /\[flagos[^\]]*\] bound mcptiActivityRegisterCallbacks -> .*libmcpti_fake\.so/,
        /\[flagos\] MCPTI device properties from wcudaDeviceGetAttribute: 1 of 1 devices/,
      ],
      codes: ['C3', 'C8', 'C12', 'A27', 'A4'],
    },
    capabilityChecks: { P6: 'pass', K7: 'pass', K8: 'pass' },
  },
  {
    vendor: 'rocprofiler',
    library: ensureFakeRocprofiler,
    libraryFile: /librocprofiler-sdk_fake\.so$/,
    workload: path.join(ROOT, 'test', 'fake-rocprofiler', 'workload.py'),
    apiVersion: 10000, // 1.0.0
    dropKnob: 'FAKE_ROCPROFILER_DROP_EVERY',
    platform: { platform: 'rocm', reason: /^agent-mode capture recorded through rocprofiler-sdk$/ },
    // Dispatches on their queue; a memory copy record names no queue.
    deviceTrack: {
      processName: 'GPU 0',
      name: expect.stringMatching(/^stream (40960|0)$/) as unknown as string,
    },
    runtimeCategory: 'cuda_runtime',
    undemangled: (name) => name.startsWith('_ZN2at6native29vectorized_elementwise_kernelILi4EZZZ'),
    opOf: (name) =>
      name.includes('vectorized_elementwise_kernel')
        ? 'fake::relu'
        : fromTable({
            [GEMM_HIP]: 'aten::mm',
            [SORT]: 'fake::sort',
            // rocprofiler-sdk reports a hipMemset as the runtime's fill kernel.
            __amd_rocclr_fillBufferAligned: 'fake::sort',
            'Memcpy DtoH (Device -> Host)': 'fake::to_cpu',
          })(name),
    devices: 5 + 5 + 1 + 1 + 1 + 1,
    kernels: 5 + 5 + 1 + 1 + 1,
    merged: 14 + 16,
    unnamedRuntime: 'hipLaunchKernel',
    runtimes: [
      'hipExtModuleLaunchKernel',
      'hipLaunchKernel',
      'hipMemsetAsync',
      'hipMemcpyAsync',
      'hipStreamSynchronize',
      'hipRuntime',
    ],
    generic: { name: 'hipRuntime', cbid: 999 },
    idsKept: true,
    metadata: {
      kernels: [[GEMM_HIP, { device: 0, stream: 40960, kind: 'Dispatch Kernel', block: [256, 1, 1] }]],
      kernelKeys: ['device', 'stream', 'kind', 'grid', 'block', 'correlation'],
      memcpy: { bytes: 4096, kind: 'DtoH' },
      memset: undefined,
      apiKeys: ['cbid', 'cid', 'correlation'],
    },
    pushed: {
      launch: 'hipExtModuleLaunchKernel',
      kernel: GEMM_HIP,
      unpushed: (n) => n === 'hipLaunchKernel' || n.includes('vectorized_elementwise_kernel'),
    },
    trace: {
      stderr: [
        /\[flagos\] bound rocprofiler_force_configure -> .*librocprofiler-sdk_fake\.so \(rocprofiler-sdk version 10000\)/,
        /\[flagos\] rocprofiler-sdk session started/,
        /\[flagos\] rocprofiler-sdk setup results: CONTEXT=0, BUFFER=0, CODE_OBJECT=0, KERNEL_DISPATCH=0, MEMORY_COPY=0, HIP_RUNTIME_API=0, START=0, FLUSH=0$/m,
      ],
      codes: ['Q0', 'Q1', 'Q2', 'Q3', 'Q4', 'Q6', 'Q7', 'A4'],
    },
    // The ROCm row declares no fills (a fill is a kernel here anyway); the HIP ids are kept under "cbid" too.
    capabilityChecks: { P6: 'pass', K7: 'pass', K8: 'skip' },
  },
  {
    vendor: 'mupti',
    library: ensureFakeMupti,
    libraryFile: /libmupti_fake\.so$/,
    workload: path.join(ROOT, 'test', 'fake-mupti', 'workload.py'),
    apiVersion: 12,
    dropKnob: 'FAKE_MUPTI_DROP_EVERY',
    platform: { platform: 'musa', reason: /^agent-mode capture recorded through MUPTI$/ },
    deviceTrack: { processName: 'GPU 0', name: 'stream 7' },
    runtimeCategory: 'privateuse1_runtime',
    opOf: cloneOps(GEMM_MU),
    devices: 5 + 5 + 1 + 1 + 1,
    kernels: 5 + 5 + 1,
    merged: 13 + 15,
    // MUSA's names from muptiGetCallbackName (CUDA's table would name 31 cudaGetDeviceCount).
    runtimes: [
      'musaLaunchKernel',
      'musaMemcpyAsync',
      'musaMemsetAsync',
      'musaDeviceSynchronize',
      'musaRuntime',
    ],
    generic: { name: 'musaRuntime', cbid: 999 },
    idsKept: true,
    metadata: cloneMetadata(GEMM_MU),
    pushed: { launch: 'musaLaunchKernel', kernel: GEMM_MU, unpushed: (n) => n === RELU_FILL },
    trace: {
      stderr: [
        /\[flagos[^\]]*\] bound muptiActivityRegisterCallbacks -> .*libmupti_fake\.so \(MUPTI API version 12\)/,
      ],
      codes: ['S2', 'C3', 'C6', 'C8', 'C12', 'A4'],
    },
    // The MUSA row declares no fills; MUPTI reports no occupancy (P3 by design); nothing pushed torch ids (K9).
    capabilityChecks: { P3: 'info', P6: 'pass', K7: 'pass', K8: 'skip', K9: 'skip' },
  },
  {
    vendor: 'topspti',
    library: ensureFakeTopspti,
    libraryFile: /libtopspti_fake\.so$/,
    workload: path.join(ROOT, 'test', 'fake-topspti', 'workload.py'),
    apiVersion: 1,
    dropKnob: 'FAKE_TOPSPTI_DROP_EVERY',
    platform: { platform: 'gcu', reason: /^agent-mode capture recorded through TOPSPTI$/ },
    deviceTrack: { processName: 'GPU 0', name: 'stream 7' },
    runtimeCategory: 'privateuse1_runtime',
    opOf: cloneOps(GEMM_TOPS),
    devices: 5 + 5 + 1 + 1 + 1,
    kernels: 5 + 5 + 1,
    merged: 13 + 15,
    runtimes: [
      'topsLaunchKernel',
      'topsMemcpyAsync',
      'topsMemsetAsync',
      'topsDeviceSynchronize',
      'topsRuntime',
    ],
    generic: { name: 'topsRuntime', cbid: 999 },
    idsKept: true,
    metadata: cloneMetadata(GEMM_TOPS),
    // No external-correlation API: the ids come from the agent's API-enter callback.
    pushed: { launch: 'topsLaunchKernel', kernel: GEMM_TOPS, unpushed: (n) => n === RELU_FILL },
    trace: {
      stderr: [
        /\[flagos[^\]]*\] bound topsptiActivityRegisterCallbacks -> .*libtopspti_fake\.so \(TOPSPTI API version 1\)/,
        /\[flagos\] TOPSPTI has no external-correlation API: torch ids are taken at API enter \(topsptiSubscribe=0, EnableDomain\(RUNTIME\)=0\)/,
      ],
      codes: ['S2', 'C3', 'C6', 'C8', 'C12', 'A26', 'A4'],
    },
    // The GCU row declares neither copies nor fills; TOPSPTI reports no occupancy; nothing pushed torch ids (K9).
    capabilityChecks: { P3: 'info', P6: 'pass', K7: 'skip', K8: 'skip', K9: 'skip' },
  },
];

const sorted = (keys: string[]) => [...keys].sort();

describe.each(CASES)('agent mode with the fake $vendor library', (row) => {
  let plain: WorkloadRun;
  let pushed: WorkloadRun;
  let profile: Profile;
  let analysis: Analysis;
  let capture: DecodedCapture;

  beforeAll(async () => {
    if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run scripts/setup-python.sh first`);
    ensureNativeBuilt();
    const library = row.library();
    plain = runAgentWorkload(row.workload, library, { FLAGOS_TRACE: '0' });
    pushed = runAgentWorkload(
      row.workload,
      library,
      { FLAGOS_TRACE: 'on', ...(row.dropKnob ? { [row.dropKnob]: '7' } : {}) },
      ['--push-correlation'],
    );
    for (const run of [plain, pushed]) expect(run.status, run.stderr).toBe(0);
    ({ profile, analysis, capture } = await openAgentSession(plain.dir));
  }, 300_000);

  it('says which API recorded the capture, and names the device tracks as its traces do', () => {
    expect(capture.vendor).toBe(row.vendor);
    expect(capture.library).toMatch(row.libraryFile);
    if (row.apiVersion !== undefined) expect(capture.apiVersion).toBe(row.apiVersion);
    expect(profile.metadata.capture).toMatchObject({ vendor: row.vendor });
    const devices = deviceSlices(profile);
    for (const d of devices)
      expect(profile.tracks[profile.slices.track[d]]).toMatchObject({ kind: 'device', ...row.deviceTrack });
    const runtimes = [...Array(profile.slices.length).keys()].filter(
      (i) => profile.slices.kind[i] === SliceKind.Runtime,
    );
    expect(runtimes.length).toBeGreaterThan(0);
    for (const r of runtimes) expect(profile.categoryOf(r)).toBe(row.runtimeCategory);
  });

  it('links each device event to the op whose range launched it, through its runtime call', () => {
    const devices = deviceSlices(profile);
    // The launch before start() is out of the window.
    expect(devices.length).toBe(row.devices);
    let unnamed = 0;
    for (const d of devices) {
      const name = profile.nameOf(d);
      if (!row.undemangled?.(name)) expect(name).not.toMatch(/^_Z/); // demangled
      const runtime = analysis.runtimeOf[d];
      expect(runtime, name).toBeGreaterThanOrEqual(0);
      expect(profile.slices.kind[runtime]).toBe(SliceKind.Runtime);
      expect(profile.slices.correlation[runtime]).toBe(profile.slices.correlation[d]);
      if (name === 'kernel' && row.unnamedRuntime) {
        unnamed++;
        expect(profile.nameOf(runtime)).toBe(row.unnamedRuntime);
        continue;
      }
      const expected = row.opOf(name);
      expect(expected, name).toBeDefined();
      const op = analysis.opOf[d];
      expect(op, name).toBeGreaterThanOrEqual(0);
      expect(profile.nameOf(op)).toBe(expected);
    }
    expect(unnamed).toBe(row.unnamedRuntime ? 1 : 0);
  });

  it('pairs every flow, keyed on the vendor correlation id', () => {
    expectFlowsPaired(profile, analysis);
  });

  it('keeps every merged event strictly inside the capture window', () => {
    expect(expectMergedInsideWindow(profile, capture, row.runtimeCategory)).toBe(row.merged);
    // The launch before start() was flushed at start() and never copied: nothing recorded fell outside.
    expect(capture.counts.kernel).toBe(row.kernels);
  });

  it('names the runtime calls as the vendor does, an id it does not name with the generic label', () => {
    const runtimes = new Set<string>();
    for (let i = 0; i < profile.slices.length; i++)
      if (profile.slices.kind[i] === SliceKind.Runtime) runtimes.add(profile.nameOf(i));
    expect(runtimes).toEqual(new Set(row.runtimes));
    if (row.generic) {
      const generic = [...Array(profile.slices.length).keys()].filter(
        (i) => profile.nameOf(i) === row.generic!.name,
      );
      expect(generic).toHaveLength(1);
      expect(profile.argsOf(generic[0]).cbid).toBe(row.generic.cbid);
    }
    expect([...capture.cbid].some((v) => v !== 0)).toBe(row.idsKept);
  });

  it('carries what the vendor provides as metadata, and nothing it does not', () => {
    const devices = deviceSlices(profile);
    const [[first]] = row.metadata.kernels;
    for (const [name, expected] of row.metadata.kernels) {
      const kernel = devices.find((d) => profile.nameOf(d) === name);
      expect(kernel, name).toBeDefined();
      const args = profile.argsOf(kernel!);
      expect(args).toMatchObject({ ...expected, correlation: profile.slices.correlation[kernel!] });
      if (name === first) expect(sorted(Object.keys(args))).toEqual(sorted(row.metadata.kernelKeys));
    }
    const memcpy = devices.find((d) => profile.slices.kind[d] === SliceKind.Memcpy)!;
    expect(profile.argsOf(memcpy)).toMatchObject(row.metadata.memcpy);
    const memset = devices.find((d) => profile.slices.kind[d] === SliceKind.Memset);
    if (row.metadata.memset) expect(profile.argsOf(memset!)).toMatchObject(row.metadata.memset);
    else expect(memset).toBeUndefined(); // the API reports fills as kernels
    const kernel = devices.find((d) => profile.nameOf(d) === first)!;
    expect(sorted(Object.keys(profile.argsOf(analysis.runtimeOf[kernel])))).toEqual(
      sorted(row.metadata.apiKeys),
    );
  });

  it('records pushed correlation ids as External ids (0 included) and counts dropped records', () => {
    const c = loadAddon().decodeCapture(path.join(pushed.dir, 'capture.fpc'), { args: true });
    expect(c.vendor).toBe(row.vendor);
    const launchIds = [...Array(c.length).keys()]
      .filter((i) => c.names[c.name[i]] === row.pushed.launch && !Number.isNaN(c.externalId[i]))
      .map((i) => c.externalId[i]);
    expect(launchIds).toEqual([0, 2, 4, 6, 8]);
    let kernels = 0;
    for (let i = 0; i < c.length; i++) {
      const name = c.names[c.name[i]];
      if (name === row.pushed.kernel) {
        kernels++;
        expect([0, 2, 4, 6, 8]).toContain(c.externalId[i]);
      }
      if (row.pushed.unpushed(name)) expect(c.externalId[i], name).toBeNaN();
    }
    expect(kernels).toBeGreaterThan(0);
    expect(c.counts.externalCorrelation).toBe(5);
    if (row.dropKnob) {
      expect(c.counts.dropped).toBeGreaterThan(0);
      expect(c.diagnostics.some((d) => d.code === 'dropped' && d.severity === 'warning')).toBe(true);
    } else {
      expect(c.counts.dropped).toBe(0);
    }
  });

  it('decodes the prefix of a capture cut short, as a killed process leaves it', () => {
    const bytes = readFileSync(path.join(plain.dir, 'capture.fpc'));
    // Cut inside the closing frame: every frame before it still decodes.
    const cut = path.join(plain.dir, 'cut.fpc');
    writeFileSync(cut, bytes.subarray(0, bytes.length - 5));
    const c = loadAddon().decodeCapture(cut);
    expect(c.vendor).toBe(row.vendor);
    expect(c.closed).toBe(false);
    expect(c.length).toBe(capture.length);
    expect(c.diagnostics.map((d) => d.code)).toEqual(expect.arrayContaining(['frame-length', 'no-end']));
    // Cut anywhere else: no error, never more than the full capture, and it says the capture is unfinished.
    for (const fraction of [0.3, 0.6, 0.9]) {
      writeFileSync(cut, bytes.subarray(0, Math.floor(bytes.length * fraction)));
      const part = loadAddon().decodeCapture(cut);
      expect(part.length).toBeLessThanOrEqual(capture.length);
      expect(part.closed).toBe(false);
      expect(part.diagnostics.map((d) => d.code)).toContain('no-end');
    }
  });

  it('prints and records its lines when FLAGOS_TRACE is on, all known to the bring-up view, and nothing when off', () => {
    for (const line of row.trace.stderr) expect(pushed.stderr).toMatch(line);
    const c = loadAddon().decodeCapture(path.join(pushed.dir, 'capture.fpc'));
    const codes = c.diagnostics.filter((d) => d.fromCapture).map((d) => d.code);
    expect(codes).toEqual(expect.arrayContaining(row.trace.codes));
    expectRecordedLinesKnown(c);
    expect(plain.stderr).not.toContain('[flagos');
    expect(capture.diagnostics.filter((d) => d.fromCapture)).toEqual([]);
  });

  it('is judged by its platform row: the checks its capabilities decide, and the ones every row passes', () => {
    const report = runChecks(profile, analysis, { captureMode: 'agent' });
    expect(report.platform).toBe(row.platform.platform);
    expect(report.platformReason).toMatch(row.platform.reason);
    const status = Object.fromEntries(report.results.map((r) => [r.id, r.status]));
    const summary = Object.fromEntries(report.results.map((r) => [r.id, r.summary]));
    for (const [id, expected] of Object.entries(row.capabilityChecks))
      expect(status[id], `${id}: ${summary[id]}`).toBe(expected);
    // Flows paired (P2, K5), events inside the window (P7, K10), kernels named and placed (K2, K4), the GEMM's
    // device time on aten::mm, which launched it (P4, K6).
    for (const id of ['P2', 'K5', 'P7', 'K10', 'K2', 'K4', 'P4', 'K6'])
      expect(status[id], `${id}: ${summary[id]}`).toBe('pass');
    // Every device event launched inside a range reaches its CPU op.
    const reached = row.devices - (row.unnamedRuntime ? 1 : 0);
    expect(summary.X3).toContain(`${reached} of ${row.devices} device events reach a CPU op`);
  });
});
