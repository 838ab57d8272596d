import { SliceKind } from '../model/profile';

/** Device activity as torch names it since 2023: kernels, copies, fills. */
export const DEVICE_CATEGORIES = ['kernel', 'gpu_memcpy', 'gpu_memset'] as const;

/** Launch flows as kineto writes them: ac2g since 2023; older torch wrote async_cpu_to_gpu (2022) and async (2020-21). */
export const KINETO_LAUNCH_FLOW_CATEGORIES = ['ac2g', 'async_cpu_to_gpu', 'async'] as const;

/**
 * Every flow category that means "a launch on the host -> its execution on the device", lowercased: kineto's, and
 * torch_npu's (HostToDevice from the runtime call, async_npu from the op).
 */
export const LAUNCH_FLOW_CATEGORIES: ReadonlySet<string> = new Set<string>([
  ...KINETO_LAUNCH_FLOW_CATEGORIES,
  'hosttodevice',
  'async_npu',
]);

/**
 * Maps a trace category to what the slice is, across eras and vendors (see the Kineto format notes):
 * 2020-21 Operator/Runtime/Kernel/Memcpy/Memset; 2023+ cpu_op/cuda_runtime/kernel/gpu_memcpy...; plugins
 * privateuse1_*, xpu_*, mtia_*; ROCm reuses the cuda_* names.
 */
export function classifyCategory(category: string): SliceKind {
  const c = category.toLowerCase();
  switch (c) {
    case 'cpu_op':
    case 'operator':
    case 'cpu_instant_event':
      return c === 'cpu_instant_event' ? SliceKind.Other : SliceKind.CpuOp;
    case 'python_function':
    case 'python':
      return SliceKind.PythonFunction;
    case 'user_annotation':
      return SliceKind.UserAnnotation;
    case 'gpu_user_annotation':
      return SliceKind.GpuAnnotation;
    case 'kernel':
    case 'gpu_kernel':
    case 'mtia_ccp_events':
    case 'cuda_profiler_range':
      return SliceKind.Kernel;
    case 'gpu_memcpy':
    case 'memcpy':
      return SliceKind.Memcpy;
    case 'gpu_memset':
    case 'memset':
      return SliceKind.Memset;
    case 'cuda_sync':
      return SliceKind.Sync;
    case 'runtime':
      return SliceKind.Runtime;
  }
  if (c.endsWith('_runtime')) return SliceKind.Runtime;
  if (c.endsWith('_driver')) return SliceKind.Driver;
  return SliceKind.Other;
}
