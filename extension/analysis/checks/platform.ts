/**
 * Which row of the capability table a trace is judged by, read from the trace itself: what an agent-mode capture's
 * process said it runs on (FLAGOS_ACCELERATOR, PPU's SDK), the device names
 * (deviceProperties), the versions kineto stamps (roctracer, hip, cupti), the categories a plugin writes (mtia_*,
 * xpu_*), the runtime call names (aclrt*, hip*, cuda*), the communication backend (distributedInfo) and the
 * process names torch_npu writes ("Ascend Hardware", "CANN").
 */
import type { Profile } from '../../model/profile';
import { SliceKind } from '../../model/profile';
import { vendorRow } from '../../shared/vendors';
import { PLATFORM_CAPABILITIES } from './context';

export interface DetectedPlatform {
  platform: string;
  reason: string;
}

/** What a trace says about its hardware, gathered in one pass. */
interface Signals {
  devices: string;
  categories: Set<string>;
  /** Up to a few runtime call names per prefix family, enough to tell HIP from CUDA from ACL. */
  runtimeNames: string[];
  processes: string;
  backend: string;
}

const MAX_RUNTIME_NAMES = 200;

function deviceNames(md: Record<string, unknown>): string {
  const props = (md.deviceProperties ?? md.computeProperties) as unknown;
  if (!Array.isArray(props)) return '';
  return props.map((p) => String((p as { name?: unknown })?.name ?? '')).join(' ');
}

function signals(profile: Profile): Signals {
  const s = profile.slices;
  const categories = new Set<string>();
  const runtimeNames: string[] = [];
  const seenCat = new Set<number>();
  for (let i = 0; i < s.length; i++) {
    if (!seenCat.has(s.cat[i])) {
      seenCat.add(s.cat[i]);
      categories.add(profile.categoryOf(i).toLowerCase());
    }
    if (runtimeNames.length < MAX_RUNTIME_NAMES && s.kind[i] === SliceKind.Runtime)
      runtimeNames.push(profile.nameOf(i));
  }
  const dist = profile.metadata.distributedInfo as { backend?: unknown } | undefined;
  return {
    devices: deviceNames(profile.metadata),
    categories,
    runtimeNames,
    processes: [...new Set(profile.tracks.map((t) => t.processName))].join(' | '),
    backend: String(dist?.backend ?? '').toLowerCase(),
  };
}

function share(names: string[], pattern: RegExp): number {
  return names.length ? names.filter((n) => pattern.test(n)).length / names.length : 0;
}

const ASCEND_RUNTIME = /^(AscendCL@)?(aclrt|aclnn|acl[A-Z])/;
const HIP_RUNTIME = /^hip[A-Z]/;

/** The rules in order: the most specific evidence first; Hygon before AMD because both run a ROCm stack. */
const RULES: readonly ((x: Signals, md: Record<string, unknown>) => DetectedPlatform | undefined)[] = [
  (_x, md) => {
    // What the recorded process said it runs on (FLAGOS_ACCELERATOR, PPU's SDK): PPU's CUPTI records look NVIDIA's.
    const capture = md.capture as { platform?: unknown; platformReason?: unknown } | undefined;
    const platform = typeof capture?.platform === 'string' ? capture.platform : '';
    return platform in PLATFORM_CAPABILITIES
      ? { platform, reason: `the recorded process: ${String(capture?.platformReason ?? platform)}` }
      : undefined;
  },
  (x) => (/Hygon|\bDCU\b/i.test(x.devices) ? { platform: 'dcu', reason: `device ${x.devices}` } : undefined),
  (x, md) => {
    if (/AMD|Instinct|Radeon/i.test(x.devices)) return { platform: 'rocm', reason: `device ${x.devices}` };
    if (md.roctracer_version !== undefined || md.hip_runtime_version !== undefined)
      return { platform: 'rocm', reason: 'roctracer/HIP versions in the trace' };
    return undefined;
  },
  (x) => {
    if (/Ascend/i.test(x.devices)) return { platform: 'ascend', reason: `device ${x.devices}` };
    if (/Ascend Hardware|\bCANN\b/.test(x.processes))
      return { platform: 'ascend', reason: 'torch_npu processes ("Ascend Hardware", "CANN")' };
    if (share(x.runtimeNames, ASCEND_RUNTIME) > 0.5)
      return { platform: 'ascend', reason: 'runtime calls are AscendCL (acl*)' };
    if (x.backend === 'hccl') return { platform: 'ascend', reason: 'distributedInfo backend hccl' };
    if (/\bNPU\b/i.test(x.devices)) return { platform: 'ascend', reason: `device ${x.devices}` };
    return undefined;
  },
  (x) =>
    /MetaX|\bC5\d\d\b/i.test(x.devices) ? { platform: 'metax', reason: `device ${x.devices}` } : undefined,
  (x) => (/MTT|Moore/i.test(x.devices) ? { platform: 'musa', reason: `device ${x.devices}` } : undefined),
  (x) => (/Enflame|GCU/i.test(x.devices) ? { platform: 'gcu', reason: `device ${x.devices}` } : undefined),
  (x) =>
    [...x.categories].some((c) => c.startsWith('mtia_')) || /\bMTIA\b/i.test(x.devices)
      ? { platform: 'mtia', reason: 'MTIA categories (mtia_runtime, mtia_ccp_events)' }
      : undefined,
  (x) =>
    [...x.categories].some((c) => c.startsWith('xpu_')) || /Intel.*(Data Center GPU|Arc|Max)/i.test(x.devices)
      ? { platform: 'xpu', reason: x.devices ? `device ${x.devices}` : 'XPU categories (xpu_*)' }
      : undefined,
  (x, md) => {
    if (/NVIDIA|Tesla|Quadro|GeForce|RTX/i.test(x.devices))
      return { platform: 'cuda', reason: `device ${x.devices.split(' ').slice(0, 3).join(' ')}…` };
    if (md.cupti_version !== undefined || md.cuda_runtime_version !== undefined)
      return { platform: 'cuda', reason: 'CUPTI/CUDA versions in the trace' };
    if (share(x.runtimeNames, /^cuda[A-Z]/) > 0.5)
      return { platform: 'cuda', reason: 'runtime calls are CUDA (cuda*)' };
    return undefined;
  },
  (_x, md) => {
    // An agent-mode capture says whose activity API recorded it; an API that several vendors' devices share (CUPTI)
    // decides nothing by itself (VENDORS' capturePlatform).
    const vendor = vendorRow((md.capture as { vendor?: unknown } | undefined)?.vendor);
    return vendor?.capturePlatform
      ? { platform: vendor.capturePlatform, reason: `agent-mode capture recorded through ${vendor.label}` }
      : undefined;
  },
  // HIP calls alone, in a trace that says nothing else: Hygon's DTK is HIP too, but a stock trace is AMD's.
  (x) =>
    share(x.runtimeNames, HIP_RUNTIME) > 0.5
      ? { platform: 'rocm', reason: 'runtime calls are HIP (hip*)' }
      : undefined,
];

/** Which row of the capability table applies, and why. */
export function detectPlatform(profile: Profile, explicit?: string): DetectedPlatform {
  if (explicit) {
    const p = explicit.toLowerCase();
    return { platform: p in PLATFORM_CAPABILITIES ? p : 'other', reason: 'set by the user' };
  }
  const x = signals(profile);
  for (const rule of RULES) {
    const found = rule(x, profile.metadata);
    if (found) return found;
  }
  return { platform: 'other', reason: 'nothing in the trace names a known platform' };
}
