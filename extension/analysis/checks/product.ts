/** Checks the product adds to upstream's: the file parses as JSON, one clock domain, device events reach an op. */
import { SliceKind, isDeviceKind } from '../../model/profile';
import type { CheckContext, CheckMeta } from './context';
import { fail, pass, skip } from './context';
import type { CheckResult } from './types';
import { round3 } from './view';

const BARE_METADATA_HINT =
  'kineto writes metadata values raw ("key": <value>): one bare identifier (N/A, a kernel or memory-kind name) makes the whole file invalid JSON. Emit a value raw only when its text is a JSON literal (number, true/false/null, quoted string) and quote everything else (addMetadataQuoted; torch_fl profiler.md §3.4).';

/** The importer's warnings about bare (unquoted) values, as it words them. */
export function bareMetadataWarnings(warnings: readonly { message: string }[]): string[] {
  return warnings
    .map((w) => w.message)
    .filter((m) => /bare|unquoted|not (valid )?JSON|invalid JSON|N\/A|non-JSON/i.test(m));
}

/** X1: the file parses as JSON; the importer's recoveries from bare metadata values say it did not. */
export function traceIsValidJson(ctx: CheckContext, m: CheckMeta): CheckResult {
  const bare = bareMetadataWarnings(ctx.profile.warnings);
  if (bare.length)
    return fail(
      m,
      `not valid JSON: ${bare.length} unquoted metadata value(s); the importer recovered`,
      { bareValues: bare.length },
      [],
      bare.slice(0, 10),
      BARE_METADATA_HINT,
    );
  return pass(m, 'the file parses as JSON', { warnings: ctx.profile.warnings.length });
}

/** X1 for a trace the importer rejected: what the error says, with the §3.4 diagnosis when it fits. */
export function importFailure(m: CheckMeta, path: string, message: string): CheckResult {
  const bareValue = /expected|unexpected|invalid|token|value/i.test(message);
  return fail(
    m,
    `the trace could not be read: ${message}`,
    {},
    [],
    [path],
    bareValue
      ? `If the offset points at a bare value such as "key": N/A: ${BARE_METADATA_HINT}`
      : 'The file is not a Chrome trace the importer can read.',
  );
}

/** X2: CPU and device events lie on one timeline, not a year or more apart (two clock domains). */
export function cpuAndDeviceShareAClock(ctx: CheckContext, m: CheckMeta): CheckResult {
  const s = ctx.profile.slices;
  let cpuMin = Infinity;
  let cpuMax = -Infinity;
  let devMin = Infinity;
  let devMax = -Infinity;
  let device = 0;
  for (let i = 0; i < s.length; i++) {
    const k = s.kind[i];
    if (k === SliceKind.CpuOp || k === SliceKind.Runtime) {
      cpuMin = Math.min(cpuMin, s.start[i]);
      cpuMax = Math.max(cpuMax, s.start[i] + s.dur[i]);
    } else if (isDeviceKind(k)) {
      device++;
      devMin = Math.min(devMin, s.start[i]);
      devMax = Math.max(devMax, s.start[i] + s.dur[i]);
    }
  }
  if (device === 0 || cpuMin === Infinity)
    return skip(m, device === 0 ? 'no device events' : 'no CPU events to compare with');
  const gap = Math.max(cpuMin - devMax, devMin - cpuMax, 0);
  const counts = { deviceEvents: device, gapNs: gap };
  // A year apart cannot be scheduling: it is two clocks (MONOTONIC/BOOTTIME ~ uptime, REALTIME ~ 1.78e18 ns).
  if (gap > 3.15e16)
    return fail(
      m,
      `CPU and device events are ${gap.toExponential(2)} ns apart`,
      counts,
      [],
      [
        `CPU span starts at ${round3(cpuMin / 1e9)} s, device span at ${round3(devMin / 1e9)} s (profile-relative)`,
      ],
      "Device timestamps are in another clock domain: MONOTONIC or BOOTTIME against kineto's REALTIME epoch ns (~1.78e18 ns apart). Map vendor timestamps to CLOCK_REALTIME (sample both clocks at start and stop, affine fit).",
    );
  return pass(m, 'device events overlap the CPU timeline', counts);
}

/** X3: at least half the device events reach a CPU op, by External id or by enclosure. */
export function deviceEventsReachAnOp(ctx: CheckContext, m: CheckMeta): CheckResult {
  const d = ctx.analysis.deviceEvents;
  if (d.total === 0) return skip(m, 'no device events');
  const counts = {
    deviceEvents: d.total,
    linkedToRuntime: d.linkedToRuntime,
    linkedToOp: d.linkedToOp,
    byExternalId: d.byProvenance.external_id,
    byEnclosure: d.byProvenance.enclosure,
    unlinked: d.byProvenance.none,
  };
  const details = [
    `External ids trusted: ${ctx.analysis.externalIdTrusted ? 'yes' : 'no'} (${ctx.analysis.trustReason})`,
  ];
  const share = d.linkedToOp / d.total;
  if (share < 0.5) {
    const r = fail(
      m,
      `only ${d.linkedToOp} of ${d.total} device events reach a CPU op`,
      counts,
      [],
      details,
      d.linkedToRuntime < d.total / 2
        ? 'Device events do not share a correlation id with a runtime event: put the vendor correlation id on both the runtime and the device record.'
        : 'Runtime calls are not tied to CPU ops: the External id (torch id) is missing and no CPU op encloses the runtime call on its thread.',
    );
    r.required = false;
    return r;
  }
  return pass(
    m,
    `${d.linkedToOp} of ${d.total} device events reach a CPU op (${d.byProvenance.external_id} by External id, ${d.byProvenance.enclosure} by enclosure)`,
    counts,
    [],
    details,
  );
}
