import { SliceKind } from '../model/profile';

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
