/**
 * The adaptor semantics of seed 000 §1.3 and §2, applied to any profile:
 *  - flows pair by (category, id) — the vendor correlation id;
 *  - device event -> runtime call by args.correlation (vendor id) -> launching op by External id (torch id) when
 *    the trace's External ids are trustworthy, otherwise by enclosure (torch's own rule: the innermost cpu_op
 *    around the runtime call on its thread; a user_annotation only where no cpu_op encloses it). Each link records
 *    its provenance.
 *  - per op, kernel and source line: the time tables the views and the CLI show.
 */
import { LAUNCH_FLOW_CATEGORIES } from '../import/categories';
import { IdIndex } from '../model/idIndex';
import { FlowPhase, Profile, SliceKind, isDeviceKind, isLaunchKind, isOpKind } from '../model/profile';
import { LinkProvenance, type Analysis, type FlowStats, type KernelStat, type OpStat } from './types';
import { attributeLines } from './lines';

/** Share of comparable device events on which both linking rules must agree for External ids to be trusted. */
const TRUST_AGREEMENT = 0.9;

export function analyze(profile: Profile): Analysis {
  const { slices } = profile;
  const n = slices.length;
  const flows = pairFlows(profile);

  const runtimeOf = new Int32Array(n).fill(-1);
  const opOf = new Int32Array(n).fill(-1);
  const provenance = new Uint8Array(n);
  const opParent = new Int32Array(n).fill(-1);

  // Ops by External id (torch's numbering covers cpu_op and user_annotation) and runtime calls by correlation.
  const opByExternalId = new IdIndex(n);
  const runtimeByCorrelation = new IdIndex(n);
  for (let i = 0; i < n; i++) {
    const kind = slices.kind[i];
    if (isOpKind(kind)) {
      const ext = slices.externalId[i];
      if (!Number.isNaN(ext)) {
        const prior = opByExternalId.get(ext);
        // A cpu_op wins over a user_annotation with the same id (the op is what launched).
        if (prior < 0 || (slices.kind[prior] !== SliceKind.CpuOp && kind === SliceKind.CpuOp)) {
          opByExternalId.set(ext, i);
        }
      }
      opParent[i] = enclosingOpOf(profile, i);
    } else if (isLaunchKind(kind)) {
      const corr = slices.correlation[i];
      if (!Number.isNaN(corr)) runtimeByCorrelation.setIfAbsent(corr, i);
    }
  }

  // Launch flows give the link where a trace has no correlation args (Ascend torch_npu). By slice: -1 for none.
  const flowSourceOf = new Int32Array(n).fill(-1);
  const launchCategory = new Map<number, boolean>();
  for (const pair of flows.pairs) {
    if (pair.from < 0 || pair.to < 0) continue;
    let launch = launchCategory.get(pair.cat);
    if (launch === undefined) {
      launch = LAUNCH_FLOW_CATEGORIES.has(profile.strings.get(pair.cat).toLowerCase());
      launchCategory.set(pair.cat, launch);
    }
    if (!launch) continue;
    const existing = flowSourceOf[pair.to];
    // Prefer an op as the source (async_npu) over a runtime call (HostToDevice): it names the launching op.
    if (existing < 0 || (!isOpKind(slices.kind[existing]) && isOpKind(slices.kind[pair.from]))) {
      flowSourceOf[pair.to] = pair.from;
    }
  }

  // Pass 1: both rules for every device event, to decide trust from the data.
  const byExternal = new Int32Array(n).fill(-1);
  const byEnclosure = new Int32Array(n).fill(-1);
  let compared = 0;
  let agreed = 0;
  let externalEqualsCorrelation = 0;
  let withExternal = 0;
  let externalResolved = 0;
  let enclosureResolved = 0;
  const candidates: number[] = [];
  for (let i = 0; i < n; i++) {
    const kind = slices.kind[i];
    const device = isDeviceKind(kind);
    if (!device && !isLaunchKind(kind)) continue;
    candidates.push(i);
    let runtime = -1;
    if (device) {
      const corr = slices.correlation[i];
      if (!Number.isNaN(corr)) runtime = runtimeByCorrelation.get(corr);
      const source = flowSourceOf[i];
      if (runtime < 0 && source >= 0 && isLaunchKind(slices.kind[source])) runtime = source;
      runtimeOf[i] = runtime;
    } else {
      runtime = i;
    }
    let ext = slices.externalId[i];
    if (Number.isNaN(ext) && runtime >= 0) ext = slices.externalId[runtime];
    if (!Number.isNaN(ext)) {
      withExternal++;
      if (device && ext === slices.correlation[i]) externalEqualsCorrelation++;
      const op = opByExternalId.get(ext);
      if (op >= 0) {
        byExternal[i] = op;
        externalResolved++;
      }
    }
    let enclosing = runtime >= 0 ? launchingOpOf(profile, runtime) : -1;
    if (device && enclosing < 0) {
      const source = flowSourceOf[i];
      if (source >= 0) enclosing = isOpKind(slices.kind[source]) ? source : launchingOpOf(profile, source);
    }
    byEnclosure[i] = enclosing;
    if (enclosing >= 0) enclosureResolved++;
    if (device && enclosing >= 0 && byExternal[i] >= 0) {
      compared++;
      if (enclosing === byExternal[i]) agreed++;
    }
  }

  let trusted: boolean;
  let trustReason: string;
  if (compared > 0) {
    trusted = agreed / compared >= TRUST_AGREEMENT;
    trustReason = `External id and enclosure agree on ${agreed} of ${compared} device events (${pct(agreed, compared)})`;
    if (!trusted && externalEqualsCorrelation > 0) {
      trustReason += `; ${externalEqualsCorrelation} device events carry an External id equal to their correlation id`;
    }
  } else if (externalResolved > 0 && enclosureResolved === 0) {
    trusted = true;
    trustReason = `no runtime calls to compare with; ${externalResolved} events resolve by External id`;
  } else {
    trusted = false;
    trustReason =
      withExternal === 0
        ? 'the trace carries no External ids'
        : `${withExternal} events carry External ids but none can be checked against enclosure`;
  }
  trustReason = `${trusted ? 'External ids trusted' : 'linking by enclosure'}: ${trustReason}`;

  // Pass 2: the links.
  for (const i of candidates) {
    let op = -1;
    let how = LinkProvenance.None;
    if (trusted && byExternal[i] >= 0) {
      op = byExternal[i];
      how = LinkProvenance.ExternalId;
    } else if (byEnclosure[i] >= 0) {
      op = byEnclosure[i];
      how = LinkProvenance.Enclosure;
    }
    opOf[i] = op;
    provenance[i] = how;
  }

  // Time per op slice.
  const cpuSelfNs = new Float64Array(n);
  const deviceSelfNs = new Float64Array(n);
  const deviceTotalNs = new Float64Array(n);
  for (let i = 0; i < n; i++) if (isOpKind(slices.kind[i])) cpuSelfNs[i] += slices.dur[i];
  for (let i = 0; i < n; i++) {
    const parent = opParent[i];
    if (parent >= 0 && isOpKind(slices.kind[i])) cpuSelfNs[parent] -= slices.dur[i];
  }
  for (let i = 0; i < n; i++) if (cpuSelfNs[i] < 0) cpuSelfNs[i] = 0;
  const deviceStats = {
    total: 0,
    linkedToRuntime: 0,
    linkedToOp: 0,
    byProvenance: { external_id: 0, enclosure: 0, none: 0 },
  };
  for (const i of candidates) {
    if (!isDeviceKind(slices.kind[i])) continue;
    deviceStats.total++;
    if (runtimeOf[i] >= 0) deviceStats.linkedToRuntime++;
    const op = opOf[i];
    if (op < 0) {
      deviceStats.byProvenance.none++;
      continue;
    }
    deviceStats.linkedToOp++;
    if (provenance[i] === LinkProvenance.ExternalId) deviceStats.byProvenance.external_id++;
    else deviceStats.byProvenance.enclosure++;
    const dur = slices.dur[i];
    deviceSelfNs[op] += dur;
    for (let a = op; a >= 0; a = opParent[a]) deviceTotalNs[a] += dur;
  }

  const lineResult = attributeLines(profile, { opParent, opOf, cpuSelfNs, deviceSelfNs, deviceTotalNs });

  return {
    profile,
    runtimeOf,
    opOf,
    provenance,
    opParent,
    cpuSelfNs,
    deviceSelfNs,
    deviceTotalNs,
    lineOf: lineResult.lineOf,
    chains: lineResult.chains,
    lineOps: lineResult.lineOps,
    lineKernels: lineResult.lineKernels,
    externalIdTrusted: trusted,
    trustReason,
    flows,
    deviceEvents: deviceStats,
    ops: opTable(profile, cpuSelfNs, deviceSelfNs, deviceTotalNs),
    kernels: kernelTable(profile, opOf, candidates),
    lines: lineResult.lines,
  };
}

function pct(a: number, b: number): string {
  return `${((100 * a) / b).toFixed(1)}%`;
}

/** The innermost op enclosing slice i on its own thread (python_function frames in between are skipped). */
function enclosingOpOf(profile: Profile, i: number): number {
  const { parent, kind } = profile.slices;
  for (let a = parent[i]; a >= 0; a = parent[a]) if (isOpKind(kind[a])) return a;
  return -1;
}

/**
 * The op that launched runtime call i, by enclosure: the innermost cpu_op around it, else the innermost
 * user_annotation. Torch stamps a runtime call with the External id of the innermost cpu_op (annotations keep a
 * correlation stack of their own), so `nccl:all_reduce` inside `record_param_comms` is not the launcher: this way
 * a kernel names the same op whichever rule linked it, on a trace of any age.
 */
function launchingOpOf(profile: Profile, i: number): number {
  const { parent, kind } = profile.slices;
  let annotation = -1;
  for (let a = parent[i]; a >= 0; a = parent[a]) {
    if (kind[a] === SliceKind.CpuOp) return a;
    if (annotation < 0 && kind[a] === SliceKind.UserAnnotation) annotation = a;
  }
  return annotation;
}

function pairFlows(profile: Profile): FlowStats {
  const { flows, strings } = profile;
  // (category, id) -> first s half and first f half, per category by the interned id (ids are string indices).
  const starts = new Map<number, IdIndex>();
  const finishes = new Map<number, IdIndex>();
  const byCategory = (table: Map<number, IdIndex>, cat: number) => {
    let ids = table.get(cat);
    if (!ids) table.set(cat, (ids = new IdIndex(strings.size)));
    return ids;
  };
  for (let f = 0; f < flows.length; f++) {
    const phase = flows.phase[f];
    if (phase === FlowPhase.Start || phase === FlowPhase.Finish)
      byCategory(phase === FlowPhase.Start ? starts : finishes, flows.cat[f]).setIfAbsent(flows.id[f], f);
  }
  const stats: FlowStats = { paired: 0, startOnly: 0, finishOnly: 0, pairs: [], byCategory: {} };
  const bucket = (cat: number) => {
    const name = strings.get(cat);
    return (stats.byCategory[name] ??= { paired: 0, startOnly: 0, finishOnly: 0 });
  };
  // In flow order, so that pairs come in the order their first start appears.
  for (let s = 0; s < flows.length; s++) {
    if (flows.phase[s] !== FlowPhase.Start) continue;
    const cat = flows.cat[s];
    const id = flows.id[s];
    if (starts.get(cat)?.get(id) !== s) continue;
    const f = finishes.get(cat)?.get(id) ?? -1;
    if (f < 0) {
      stats.startOnly++;
      bucket(cat).startOnly++;
      continue;
    }
    stats.paired++;
    bucket(cat).paired++;
    stats.pairs.push({ cat, id, from: flows.slice[s], to: flows.slice[f] });
  }
  for (let f = 0; f < flows.length; f++) {
    if (flows.phase[f] !== FlowPhase.Finish) continue;
    const cat = flows.cat[f];
    const id = flows.id[f];
    if (finishes.get(cat)?.get(id) !== f || starts.get(cat)?.has(id)) continue;
    stats.finishOnly++;
    bucket(cat).finishOnly++;
  }
  return stats;
}

function opTable(
  profile: Profile,
  cpuSelf: Float64Array,
  deviceSelf: Float64Array,
  deviceTotal: Float64Array,
): OpStat[] {
  const { slices } = profile;
  const byName = new Map<number, OpStat>();
  for (let i = 0; i < slices.length; i++) {
    if (!isOpKind(slices.kind[i])) continue;
    const nameId = slices.name[i];
    let stat = byName.get(nameId);
    if (!stat) {
      stat = {
        name: profile.strings.get(nameId),
        calls: 0,
        cpuSelfNs: 0,
        cpuTotalNs: 0,
        deviceSelfNs: 0,
        deviceTotalNs: 0,
      };
      byName.set(nameId, stat);
    }
    stat.calls++;
    stat.cpuSelfNs += cpuSelf[i];
    stat.cpuTotalNs += slices.dur[i];
    stat.deviceSelfNs += deviceSelf[i];
    stat.deviceTotalNs += deviceTotal[i];
  }
  return [...byName.values()].sort(
    (a, b) => b.deviceSelfNs - a.deviceSelfNs || b.cpuSelfNs - a.cpuSelfNs || a.name.localeCompare(b.name),
  );
}

const KIND_LABEL: Record<number, string> = {
  [SliceKind.Kernel]: 'kernel',
  [SliceKind.Memcpy]: 'memcpy',
  [SliceKind.Memset]: 'memset',
};

function kernelTable(profile: Profile, opOf: Int32Array, candidates: number[]): KernelStat[] {
  const { slices, strings } = profile;
  const byName = new Map<number, KernelStat & { opTime: Map<number, number> }>();
  for (const i of candidates) {
    const kind = slices.kind[i];
    if (!isDeviceKind(kind)) continue;
    const nameId = slices.name[i];
    let stat = byName.get(nameId);
    if (!stat) {
      stat = {
        name: strings.get(nameId),
        kind: KIND_LABEL[kind],
        count: 0,
        totalNs: 0,
        topOp: '',
        opTime: new Map(),
      };
      byName.set(nameId, stat);
    }
    stat.count++;
    stat.totalNs += slices.dur[i];
    const op = opOf[i];
    if (op >= 0) {
      const opName = slices.name[op];
      stat.opTime.set(opName, (stat.opTime.get(opName) ?? 0) + slices.dur[i]);
    }
  }
  const result: KernelStat[] = [];
  for (const stat of byName.values()) {
    let best = -1;
    let bestTime = -1;
    for (const [opName, time] of stat.opTime) {
      if (time > bestTime) {
        best = opName;
        bestTime = time;
      }
    }
    result.push({
      name: stat.name,
      kind: stat.kind,
      count: stat.count,
      totalNs: stat.totalNs,
      topOp: best >= 0 ? strings.get(best) : '',
    });
  }
  return result.sort((a, b) => b.totalNs - a.totalNs || a.name.localeCompare(b.name));
}
