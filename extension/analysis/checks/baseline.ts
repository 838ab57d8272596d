/**
 * The torch-cuda structural baseline: categories and args keys per category, never counts or durations.
 * The file format is upstream's profiler_cuda_baseline.json (so a vendor's existing file works as it is), plus
 * optional fields of our own (sources, per-category keys, workload-dependent categories).
 */
import { DEVICE_CATEGORIES } from '../../import/categories';
import type { Profile } from '../../model/profile';
import { SliceKind } from '../../model/profile';
import shipped from './torch-cuda-baseline.json';

export interface Baseline {
  /** Where it was loaded from (a path, or 'shipped'). */
  source: string;
  generatedBy: string;
  categories: string[];
  runtimeCatEquivalents: string[];
  /** Required args keys of kernel, gpu_memcpy, gpu_memset and the runtime category. */
  argKeys: { kernel: string[]; gpu_memcpy: string[]; gpu_memset: string[]; runtime: string[] };
  knownGap: Record<string, string>;
}

export class BaselineError extends Error {}

function stringList(value: unknown, key: string, source: string): string[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string'))
    throw new BaselineError(`${source}: not a profiler baseline: "${key}" must be a list of strings`);
  return value as string[];
}

/** Reads upstream's profiler_cuda_baseline.json or one written by `flagprof baseline`. */
export function parseBaseline(value: unknown, source: string): Baseline {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new BaselineError(`${source}: not a profiler baseline: expected a JSON object`);
  const o = value as Record<string, unknown>;
  const knownGap: Record<string, string> = {};
  if (o.categories_known_gap && typeof o.categories_known_gap === 'object')
    for (const [k, v] of Object.entries(o.categories_known_gap)) knownGap[k] = String(v);
  return {
    source,
    generatedBy: typeof o.generated_by === 'string' ? o.generated_by : '',
    categories: stringList(o.categories, 'categories', source),
    runtimeCatEquivalents:
      o.runtime_cat_equivalents === undefined
        ? ['cuda_runtime', 'privateuse1_runtime']
        : stringList(o.runtime_cat_equivalents, 'runtime_cat_equivalents', source),
    argKeys: {
      kernel: stringList(o.kernel_arg_keys, 'kernel_arg_keys', source),
      gpu_memcpy: stringList(o.gpu_memcpy_arg_keys, 'gpu_memcpy_arg_keys', source),
      gpu_memset: stringList(o.gpu_memset_arg_keys, 'gpu_memset_arg_keys', source),
      runtime: stringList(o.runtime_arg_keys, 'runtime_arg_keys', source),
    },
    knownGap,
  };
}

/** The baseline the product ships, derived by `flagprof baseline` from real torch-cuda traces. */
export function shippedBaseline(): Baseline {
  return parseBaseline(shipped, 'shipped torch-cuda baseline');
}

/**
 * Categories that depend on how the user profiled or what the workload does, not on the tracer: a tracer cannot be
 * blamed for their absence, so a derived baseline does not require them.
 */
export const WORKLOAD_DEPENDENT_CATEGORIES: Record<string, string> = {
  user_annotation: 'record_function ranges and ProfilerStep markers come from the workload',
  gpu_user_annotation:
    'device-side copies of user_annotation ranges; present only when the workload annotates',
  python_function: 'with_stack=True only',
  cpu_instant_event: 'profile_memory=True only',
  cuda_driver:
    'driver API calls appear when the workload launches through the driver (Triton, cuLaunchKernel)',
  cuda_sync: "only when the profiler's experimental config enables synchronization events",
  fwdbwd: 'forward/backward links exist only in training workloads',
};

export const KNOWN_GAP: Record<string, string> = {
  overhead:
    "CUPTI's self-reported profiling overhead ('Activity Buffer Request', 'Runtime Triggered Module Loading'): the cost of profiling itself, not the workload; torch_fl never enables that activity kind (torch_fl profiler.md §6.1).",
};

const RUNTIME_EQUIVALENTS = ['cuda_runtime', 'privateuse1_runtime'];

export interface BaselineSource {
  name: string;
  profile: Profile;
}

export interface DerivedBaseline {
  generated_by: string;
  note: string;
  sources: { name: string; devices: string[]; categories: string[] }[];
  categories: string[];
  categories_observed_in_torch_cuda: string[];
  categories_known_gap: Record<string, string>;
  categories_workload_dependent: Record<string, string>;
  runtime_cat_equivalents: string[];
  kernel_arg_keys: string[];
  gpu_memcpy_arg_keys: string[];
  gpu_memset_arg_keys: string[];
  runtime_arg_keys: string[];
}

/** Per category: the union of args keys over its complete events, and its event count. */
export function categoryArgKeys(profile: Profile): Map<string, Set<string>> {
  const keys = new Map<string, Set<string>>();
  const s = profile.slices;
  for (let i = 0; i < s.length; i++) {
    if (s.kind[i] === SliceKind.Instant) continue;
    const cat = profile.categoryOf(i);
    if (!cat) continue;
    let set = keys.get(cat);
    if (!set) keys.set(cat, (set = new Set()));
    if (s.args[i] >= 0) for (const k of Object.keys(profile.argsOf(i))) set.add(k);
  }
  return keys;
}

function deviceNames(profile: Profile): string[] {
  const props = profile.metadata.deviceProperties ?? profile.metadata.computeProperties;
  if (!Array.isArray(props)) return [];
  return [...new Set(props.map((p) => String((p as { name?: unknown })?.name ?? '')).filter(Boolean))];
}

/**
 * Derives a baseline from traces the user trusts. A category is required when any source has it (the trusted
 * workloads exercise it), minus the known gap and the workload-dependent categories; a key is required when every
 * source that has the category carries it (so one trace's extra fields do not become requirements).
 */
export function deriveBaseline(sources: BaselineSource[], generatedBy: string): DerivedBaseline {
  if (sources.length === 0) throw new BaselineError('no trace to derive a baseline from');
  const observed = new Set<string>();
  const perSource = sources.map(({ name, profile }) => {
    const keys = categoryArgKeys(profile);
    for (const cat of keys.keys()) observed.add(cat);
    return { name, profile, keys };
  });
  const required = [...observed]
    .filter((c) => !(c in KNOWN_GAP) && !(c in WORKLOAD_DEPENDENT_CATEGORIES))
    .sort();
  const intersect = (cat: string | ((k: Map<string, Set<string>>) => Set<string> | undefined)): string[] => {
    let acc: Set<string> | undefined;
    for (const { keys } of perSource) {
      const set = typeof cat === 'string' ? keys.get(cat) : cat(keys);
      if (!set) continue;
      acc = acc ? new Set([...acc].filter((k) => set.has(k))) : new Set(set);
    }
    return acc ? [...acc].sort() : [];
  };
  for (const cat of DEVICE_CATEGORIES)
    if (!perSource.some((p) => p.keys.has(cat)))
      throw new BaselineError(
        `no source trace has "${cat}" events: a baseline needs kernel, gpu_memcpy and gpu_memset`,
      );
  const runtimeOf = (keys: Map<string, Set<string>>): Set<string> | undefined =>
    RUNTIME_EQUIVALENTS.map((c) => keys.get(c)).find((k) => k !== undefined);
  if (!perSource.some((p) => runtimeOf(p.keys)))
    throw new BaselineError('no source trace has runtime events (cuda_runtime or privateuse1_runtime)');
  const gapSeen = Object.fromEntries(Object.entries(KNOWN_GAP).filter(([c]) => observed.has(c)));
  const workloadSeen = Object.fromEntries(
    Object.entries(WORKLOAD_DEPENDENT_CATEGORIES).filter(([c]) => observed.has(c)),
  );
  return {
    generated_by: generatedBy,
    note: 'Structure only: categories and args keys per category, no counts and no durations. Regenerate with `flagprof baseline TRACE... --out FILE` from traces you trust.',
    sources: perSource.map(({ name, profile, keys }) => ({
      name,
      devices: deviceNames(profile),
      categories: [...keys.keys()].sort(),
    })),
    categories: required,
    categories_observed_in_torch_cuda: [...observed].sort(),
    categories_known_gap: gapSeen,
    categories_workload_dependent: workloadSeen,
    runtime_cat_equivalents: RUNTIME_EQUIVALENTS,
    kernel_arg_keys: intersect('kernel'),
    gpu_memcpy_arg_keys: intersect('gpu_memcpy'),
    gpu_memset_arg_keys: intersect('gpu_memset'),
    runtime_arg_keys: intersect(runtimeOf),
  };
}
