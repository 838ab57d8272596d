/**
 * The vendors' activity APIs, one row each: everything the TypeScript side knows about a vendor (the capture
 * format's id, how messages and the bring-up header name it, how its Kineto traces name what a capture holds, the
 * platform rows it serves, the bring-up component that prints its lines). The native side has its own table
 * (native/vendors/vendors.h); the keys and capture ids are the same. Depends on nothing but the diagnostics' names.
 */
import type { Component } from './diagnostics';

/** How a vendor's own Kineto traces name a capture's contents: the device process, its streams, the categories. */
export interface KinetoNaming {
  /** The device process ("GPU 0"; Ascend traces say "NPU"). */
  device: string;
  /** A device process's stream tracks ("stream 7"). */
  stream: string;
  /** The runtime calls' category (a PrivateUse1 backend's Kineto plugin writes privateuse1_runtime). */
  runtime: string;
  driver: string;
}

export interface VendorRow {
  /**
   * The capture header's vendor id (native/tracer/fpc_format.h), never reused; undefined for an API whose
   * FLAGOS_TRACE lines are read but whose records no capture decoder reads.
   */
  fpcId: number | undefined;
  /** How messages name the API ('CUPTI'), and how the agent's lines name the tracer. */
  label: string;
  /** The bring-up header's tracer: the API and the accelerators it records. */
  tracer: string;
  /** The bring-up component whose lines this API's tracer prints (MCPTI goes through the CUPTI tracer). */
  component: Component;
  /** The file name its libraries start with: a bound library named so is this API's. */
  library: string;
  /** The runtime call name for an API id the vendor's table does not know. */
  genericRuntimeName: string;
  /** Naming of the events in a capture it recorded; undefined where no capture decoder reads its records. */
  naming: KinetoNaming | undefined;
  /** The platform rows (analysis/checks/context.ts) whose traces come through this API. */
  platforms: readonly string[];
  /**
   * The platform row a capture recorded through this API is judged by when nothing else in the trace names one;
   * undefined when several vendors' devices share the API, so that it tells nothing by itself.
   */
  capturePlatform: string | undefined;
  /** The catalogue line its tracer prints when none of its libraries loaded, where it has one. */
  unavailableCode: string | undefined;
  /**
   * The API whose platforms this one serves too, preferred where its library is present (native/vendors/vendors.h:
   * rocprofiler-sdk over ROCtracer).
   */
  supersedes?: string;
}

/** Kineto's CUDA names, which ROCm's and MetaX's traces keep too: process "GPU N", thread "stream N", cuda_runtime. */
const CUDA_NAMING: KinetoNaming = {
  device: 'GPU',
  stream: 'stream',
  runtime: 'cuda_runtime',
  driver: 'cuda_driver',
};

/**
 * MUSA and GCU reach torch through torch_fl's PrivateUse1 backend, whose Kineto adaptor writes its runtime calls
 * as privateuse1_runtime and its devices under Kineto's default process and thread names.
 */
const PRIVATEUSE1_NAMING: KinetoNaming = {
  device: 'GPU',
  stream: 'stream',
  runtime: 'privateuse1_runtime',
  driver: 'privateuse1_driver',
};

/** Keyed by the name the addon reports as a capture's vendor. */
export const VENDORS = {
  cupti: {
    fpcId: 1,
    label: 'CUPTI',
    tracer: 'CUPTI (CUDA / PPU)',
    component: 'cupti',
    library: 'libcupti',
    genericRuntimeName: 'cudaRuntime',
    naming: CUDA_NAMING,
    platforms: ['cuda', 'ppu'],
    capturePlatform: undefined,
    unavailableCode: 'C1',
  },
  mspti: {
    fpcId: 2,
    label: 'MSPTI',
    tracer: 'MSPTI (Ascend)',
    component: 'mspti',
    library: 'libmspti',
    genericRuntimeName: 'AscendRuntime',
    naming: { device: 'NPU', stream: 'Stream', runtime: 'privateuse1_runtime', driver: 'privateuse1_driver' },
    platforms: ['ascend'],
    capturePlatform: 'ascend',
    unavailableCode: 'M1',
  },
  roctracer: {
    fpcId: 3,
    label: 'ROCtracer',
    tracer: 'ROCtracer (DCU)',
    component: 'roctracer',
    library: 'libroctracer64',
    genericRuntimeName: 'Unknown',
    naming: CUDA_NAMING,
    platforms: ['dcu', 'rocm'],
    // This product's ROCtracer users are Hygon DCUs: without a device name a capture is judged by the DCU row.
    capturePlatform: 'dcu',
    unavailableCode: 'R25',
  },
  rocprofiler: {
    fpcId: 7,
    label: 'rocprofiler-sdk',
    tracer: 'rocprofiler-sdk (ROCm / DCU)',
    // The AMD tracer's component: its lines and ROCtracer's are one bring-up section.
    component: 'roctracer',
    library: 'librocprofiler-sdk',
    genericRuntimeName: 'hipRuntime',
    naming: CUDA_NAMING,
    platforms: ['dcu', 'rocm'],
    // ROCtracer's successor ships with ROCm 6.2 and later: AMD's stack, where Hygon's DTK keeps ROCtracer.
    capturePlatform: 'rocm',
    unavailableCode: 'Q13',
    supersedes: 'roctracer',
  },
  mcpti: {
    fpcId: 4,
    label: 'MCPTI',
    tracer: 'MCPTI (MetaX)',
    component: 'cupti',
    library: 'libmcpti',
    genericRuntimeName: 'mcRuntime',
    naming: CUDA_NAMING,
    platforms: ['metax'],
    capturePlatform: 'metax',
    unavailableCode: undefined,
  },
  mupti: {
    fpcId: 5,
    label: 'MUPTI',
    tracer: 'MUPTI (MUSA)',
    component: 'mupti',
    library: 'libmupti',
    genericRuntimeName: 'musaRuntime',
    naming: PRIVATEUSE1_NAMING,
    platforms: ['musa'],
    capturePlatform: 'musa',
    unavailableCode: undefined,
  },
  topspti: {
    fpcId: 6,
    label: 'TOPSPTI',
    tracer: 'TOPSPTI (GCU)',
    component: 'topspti',
    library: 'libtopspti',
    genericRuntimeName: 'topsRuntime',
    naming: PRIVATEUSE1_NAMING,
    platforms: ['gcu'],
    capturePlatform: 'gcu',
    unavailableCode: undefined,
  },
} as const satisfies Record<string, VendorRow>;

export type VendorKey = keyof typeof VENDORS;

/** The vendors a capture can be recorded through: those with a capture decoder. */
export type CaptureVendorKey = {
  [K in VendorKey]: (typeof VENDORS)[K]['fpcId'] extends number ? K : never;
}[VendorKey];

export const VENDOR_KEYS = Object.keys(VENDORS) as VendorKey[];

export const CAPTURE_VENDOR_KEYS = VENDOR_KEYS.filter(
  (key): key is CaptureVendorKey => VENDORS[key].fpcId !== undefined,
);

/** The row of a name from outside (a capture's vendor, a summary's tracer); undefined for any other text. */
export function vendorRow(key: unknown): VendorRow | undefined {
  return typeof key === 'string' && Object.hasOwn(VENDORS, key) ? VENDORS[key as VendorKey] : undefined;
}

/** The key of the API a label names ('MCPTI' -> 'mcpti'). */
export function vendorOfLabel(label: string): VendorKey | undefined {
  return VENDOR_KEYS.find((key) => VENDORS[key].label === label);
}

/** The bring-up components that print a vendor tracer's lines, in table order. */
export const VENDOR_COMPONENTS: readonly Component[] = [
  ...new Set(VENDOR_KEYS.map((key) => VENDORS[key].component)),
];
