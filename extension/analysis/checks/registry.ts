/**
 * Every check, in the order reports list them: the id users see (X1, P1..P7, K1..K12, X2, X3), upstream's test
 * name (parity: test_profiler_parity.py; contract: test_profiler_contract.py; product: the product's own), the
 * title, and the function that runs it.
 */
import type { CheckDefinition } from './context';
import {
  cpuOpsAndTraceExported,
  contractRuntimeCategory,
  kernelNamesDemangled,
  kernelsCarryDeviceAndStream,
  kernelsNamedWithDuration,
  matmulDeviceTimeMatchesLinkedEvents,
  memoryEventsWithBytes,
  runtimeEventsCarryExternalId,
  runtimeEventsNamedWithArgs,
  runtimeNamesNotPlaceholders,
} from './contract';
import {
  argKeysCoverBaseline,
  baselineCategoriesPresent,
  eventsInsideCaptureWindow,
  flowArrowsPaired,
  mmDeviceTimeMatchesLinkedEvents,
  runtimeNamesFromCbidTable,
  templatedKernelNamesDemangled,
} from './parity';
import { cpuAndDeviceShareAClock, deviceEventsReachAnOp, traceIsValidJson } from './product';

/** X1 also reports a trace the importer rejected, alone. */
export const TRACE_IS_JSON: CheckDefinition = {
  id: 'X1',
  name: 'trace_is_json',
  title: 'The trace is valid JSON',
  suite: 'product',
  run: traceIsValidJson,
  withoutDevice: true,
};

const PARITY: readonly CheckDefinition[] = [
  {
    id: 'P1',
    name: 'test_category_coverage',
    title: 'Category coverage',
    suite: 'parity',
    run: baselineCategoriesPresent,
  },
  {
    id: 'P2',
    name: 'test_flow_arrows_are_paired',
    title: 'Flow arrows are paired',
    suite: 'parity',
    run: (ctx, meta) => flowArrowsPaired(ctx, meta, ctx.runtimeCategory),
  },
  {
    id: 'P3',
    name: 'test_arg_key_supersets',
    title: 'Args keys are supersets of the baseline',
    suite: 'parity',
    run: argKeysCoverBaseline,
  },
  {
    id: 'P4',
    name: 'test_device_time_attribution',
    title: 'Device time attributed to aten::mm',
    suite: 'parity',
    run: mmDeviceTimeMatchesLinkedEvents,
  },
  {
    id: 'P5',
    name: 'test_kernel_names_are_demangled',
    title: 'Kernel names are demangled',
    suite: 'parity',
    run: templatedKernelNamesDemangled,
  },
  {
    id: 'P6',
    name: 'test_runtime_names_come_from_cbid',
    title: 'Runtime names come from the cbid table',
    suite: 'parity',
    run: runtimeNamesFromCbidTable,
  },
  {
    id: 'P7',
    name: 'test_capture_window_containment',
    title: 'Events stay in the capture window',
    suite: 'parity',
    // Parity helpers select events of any phase.
    run: (ctx, meta) => eventsInsideCaptureWindow(ctx, meta, false),
  },
];

const CONTRACT: readonly CheckDefinition[] = [
  {
    id: 'K1',
    name: 'test_profiler_cpu_api_and_trace_export',
    title: 'CPU ops and trace export',
    suite: 'contract',
    run: cpuOpsAndTraceExported,
    withoutDevice: true,
  },
  {
    id: 'K2',
    name: 'test_profiler_kernel_events',
    title: 'Kernel events',
    suite: 'contract',
    run: kernelsNamedWithDuration,
  },
  {
    id: 'K3',
    name: 'test_profiler_runtime_events',
    title: 'Runtime events',
    suite: 'contract',
    run: runtimeEventsNamedWithArgs,
  },
  {
    id: 'K4',
    name: 'test_profiler_kernel_device_metadata',
    title: 'Kernels carry device and stream',
    suite: 'contract',
    run: kernelsCarryDeviceAndStream,
  },
  {
    id: 'K5',
    name: 'test_profiler_flow_events_are_paired',
    title: 'Flow events are paired',
    suite: 'contract',
    run: (ctx, meta) => flowArrowsPaired(ctx, meta, contractRuntimeCategory(ctx)),
  },
  {
    id: 'K6',
    name: 'test_profiler_device_time_linkage',
    title: 'Device time linked to the matmul op',
    suite: 'contract',
    run: matmulDeviceTimeMatchesLinkedEvents,
  },
  {
    id: 'K7',
    name: 'test_profiler_memcpy_events',
    title: 'Memcpy events',
    suite: 'contract',
    run: (ctx, meta) => memoryEventsWithBytes(ctx, meta, 'gpu_memcpy'),
  },
  {
    id: 'K8',
    name: 'test_profiler_memset_events',
    title: 'Memset events',
    suite: 'contract',
    run: (ctx, meta) => memoryEventsWithBytes(ctx, meta, 'gpu_memset'),
  },
  {
    id: 'K9',
    name: 'test_profiler_device_arg_keys',
    title: 'Runtime events carry External id',
    suite: 'contract',
    run: runtimeEventsCarryExternalId,
  },
  {
    id: 'K10',
    name: 'test_profiler_capture_window_contains_device_events',
    title: 'Device events stay in the capture window',
    suite: 'contract',
    // Contract helpers keep complete events only.
    run: (ctx, meta) => eventsInsideCaptureWindow(ctx, meta, true),
  },
  {
    id: 'K11',
    name: 'test_profiler_kernel_names_are_demangled',
    title: 'Kernel names are demangled',
    suite: 'contract',
    run: kernelNamesDemangled,
  },
  {
    id: 'K12',
    name: 'test_profiler_runtime_names_are_not_all_fallback',
    title: 'Runtime names are not placeholders',
    suite: 'contract',
    run: runtimeNamesNotPlaceholders,
  },
];

export const CHECKS: readonly CheckDefinition[] = [
  TRACE_IS_JSON,
  ...PARITY,
  ...CONTRACT,
  {
    id: 'X2',
    name: 'one_clock_domain',
    title: 'CPU and device timestamps share a clock',
    suite: 'product',
    run: cpuAndDeviceShareAClock,
  },
  {
    id: 'X3',
    name: 'device_events_reach_an_op',
    title: 'Device events are attributed to a CPU op',
    suite: 'product',
    run: deviceEventsReachAnOp,
  },
];
