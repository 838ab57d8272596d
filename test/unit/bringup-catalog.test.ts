/**
 * The catalogue as a bring-up engineer reads it: every sample line's code, component, severity and message, and
 * what the shared templates (one rule for the lines several vendors print in the same words) and the session
 * header make of the lines that say which vendor traced, or that none could.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLine, parseTraceLog, summarizeDiagnostics } from '../../extension/bringup/diagnostics';
import { RULES } from '../../extension/bringup/rules';
import { sessionHeader } from '../../extension/bringup/session';
import type { Severity } from '../../extension/bringup/types';

const catalog = readFileSync(path.resolve(__dirname, '../fixtures/bringup/catalog-lines.txt'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => {
    const [code, component, ...rest] = l.split('\t');
    return { id: `${component}/${code}`, line: rest.join('\t') };
  });

/** What each sample line means, by component/code: the ids and texts the UI and reports show. */
const MEANING: Record<string, [Severity, string]> = {
  'adaptor/A1': ['info', 'Device profiler plugin registered with kineto.'],
  'adaptor/A2': [
    'warning',
    'No device tracer available: profiles will hold CPU events only (look for the shim lines, or a build without the vendor SDK).',
  ],
  'adaptor/A3': ['info', 'kineto asked the plugin for a session (3 activity types).'],
  'adaptor/A4': ['info', 'Session stopped: 258 events drained (runtime events included).'],
  'adaptor/A5': [
    'error',
    'kineto used the one-argument processTrace: no window filtering, no CPU-op linkage (device time stays 0), no flow arrows. Override the four-argument form.',
  ],
  'adaptor/A6': ['info', 'processTrace received 258 events and the capture window.'],
  'adaptor/A7': ['info', 'Events by kind before window filtering.'],
  'adaptor/A8': ['info', 'First event (runtime).'],
  'adaptor/A9': ['info', 'Last event (kernel).'],
  'adaptor/A10': ['info', 'Device event #1 (kernel) against the window.'],
  'adaptor/A11': ['info', '13 of 13 device events in the capture window.'],
  'adaptor/A12': [
    'error',
    'kineto handed the plugin no linked-activity resolver: self device time will read 0 for every op. The fix is on the torch/libkineto side.',
  ],
  'adaptor/A13': ['debug', 'Kinds of the first events (ordering hint).'],
  'adaptor/A14': ['debug', 'A kernel event outside the capture window was dropped.'],
  'adaptor/A15': ['debug', 'kernel event converted to kineto activity type 5.'],
  'adaptor/A16': ['info', 'Linked 24/24 candidates to CPU ops; 0 of 258 events dropped outside the window.'],
  'cupti/C1': ['warning', 'No usable CUPTI library or symbols: the tracer is not armed.'],
  'cupti/C2': ['info', 'Registering activity buffer callbacks at load (before the first device context).'],
  'cupti/C3': ['info', 'Buffer callbacks registered.'],
  'cupti/C4': [
    'info',
    'Device activity kinds enabled at load (runtime and external correlation wait for start()).',
  ],
  'cupti/C5': ['warning', 'start() found no CUPTI library.'],
  'cupti/C6': ['info', 'Clock sample (vendor against CLOCK_REALTIME).'],
  'cupti/C7': ['info', 'Tracer session start.'],
  'cupti/C8': ['info', 'All activity kinds enabled at session start.'],
  'cupti/C9': ['info', 'Initial flush at session start.'],
  'cupti/C10': ['info', 'Tracer session stop.'],
  'cupti/C11': ['info', 'Flushing activity buffers.'],
  'cupti/C12': ['info', 'Flush at session stop returned.'],
  'cupti/C13': ['debug', 'Activity buffer requested.'],
  'cupti/C14': ['debug', 'Activity buffer completed.'],
  'cupti/C15': ['debug', "A kernel record without timestamps was skipped (vendor 'no timing' sentinel)."],
  'cupti/C16': [
    'error',
    'Activity record layout does not match the bound library (kernel timestamps implausible): affected records are dropped. Point FLAGOS_TRACER_LIBRARY at a matching library.',
  ],
  'cupti/C17': [
    'warning',
    'A buffer hit the per-buffer record cap: the tail of that buffer is missing from the trace.',
  ],
  'cupti/C18': [
    'warning',
    'Host allocation of an activity buffer failed: records are dropped while memory is short.',
  ],
  'cupti-shim/S1': [
    'warning',
    'The library override FLAGOS_TRACER_LIBRARY could not be loaded; the shim fell back to its normal search.',
  ],
  'cupti-shim/S2': ['info', 'Bound /usr/local/cuda/lib64/libcupti.so.12 (API version 24).'],
  'cupti-shim/S3': [
    'warning',
    'A library opened but lacks cuptiActivityRegisterCallbacks: tracer unavailable.',
  ],
  'mspti/M1': ['error', 'libmspti could not be loaded or lacks a required symbol: session aborted.'],
  'mspti/M2': [
    'error',
    'msptiSubscribe failed: another MSPTI subscriber (another profiler) owns the process. Session aborted.',
  ],
  'mspti/M3': ['error', 'MSPTI buffer callback registration failed: session aborted.'],
  'mspti/M4': [
    'error',
    "msptiActivityEnable(RUNTIME_API) failed: the session is aborted without a further line (no 'MSPTI session started').",
  ],
  'mspti/M5': [
    'warning',
    'MSPTI memcpy activity refused: libmspti.so was probably not LD_PRELOADed at process start. No gpu_memcpy records.',
  ],
  'mspti/M6': [
    'warning',
    'MSPTI memset activity refused (needs the process-start preload). No gpu_memset records.',
  ],
  'mspti/M7': ['info', 'MSPTI session started.'],
  'mspti/M8': ['info', 'MSPTI session stopped.'],
  'mspti/M0': [
    'info',
    'Bound /usr/local/Ascend/ascend-toolkit/latest/tools/mspti/lib64/libmspti.so (MSPTI version 260000).',
  ],
  'mspti/M9': [
    'warning',
    'An MSPTI activity kind could not be enabled (MEMCPY/MEMSET need libmspti.so preloaded at process start).',
  ],
  'mspti/M13': ['debug', 'Activity buffer requested.'],
  'mspti/M14': ['debug', 'Activity buffer completed.'],
  'mspti/M15': ['warning', 'The final MSPTI flush failed: the last activity records may be missing.'],
  'mspti/M16': [
    'error',
    'MSPTI record layout does not match the bound library (timestamps implausible): affected records are dropped. Point FLAGOS_TRACER_LIBRARY at the libmspti.so of the running CANN.',
  ],
  'mspti/M17': [
    'warning',
    'An MSPTI buffer hit the per-buffer record cap: the tail of that buffer is missing from the capture.',
  ],
  'mspti/M18': [
    'warning',
    'Host allocation of an MSPTI activity buffer failed: records are dropped while memory is short.',
  ],
  'mupti/U1': ['error', 'MUPTI buffer callback registration failed: session aborted.'],
  'mupti/U2': [
    'warning',
    'muptiActivityEnable(EXTERNAL_CORRELATION) failed: that record family will be missing.',
  ],
  'mupti/U3': ['info', 'MUPTI session started.'],
  'mupti/U4': ['info', 'MUPTI session stopped with 117 records kept.'],
  'topspti/T1': ['error', 'TOPSPTI buffer callback registration failed: session aborted.'],
  'topspti/T2': ['warning', 'topsptiActivityEnable(MEMSET) failed: that record family will be missing.'],
  'topspti/T3': ['info', 'TOPSPTI session started.'],
  'topspti/T4': ['info', 'TOPSPTI session stopped with 42 records kept.'],
  'roctracer/R1': ['info', 'ROCtracer tracer constructed.'],
  'roctracer/R2': ['info', 'ROCtracer session start.'],
  'roctracer/R3': ['info', 'Clock sync (single offset, no drift correction).'],
  'roctracer/R4': ['info', 'roctracer_set_properties succeeded.'],
  'roctracer/R5': ['info', 'roctracer_enable_domain_callback succeeded.'],
  'roctracer/R6': ['info', 'Activity pool opened.'],
  'roctracer/R7': ['info', 'roctracer_enable_domain_activity_expl(HIP_OPS) succeeded.'],
  'roctracer/R8': ['info', 'ROCtracer session started.'],
  'roctracer/R9': ['debug', 'Torch correlation id pushed.'],
  'roctracer/R10': ['debug', 'Torch correlation id popped.'],
  'roctracer/R11': ['debug', 'Activity buffer delivered.'],
  'roctracer/R12': ['warning', 'Event cap reached: the rest of this delivery is lost.'],
  'roctracer/R13': ['debug', 'Activity record.'],
  'roctracer/R14': ['debug', 'Record classified as kernel.'],
  'roctracer/R15': ['debug', 'Record GPU timestamps.'],
  'roctracer/R16': ['debug', 'Record host timestamps.'],
  'roctracer/R17': ['debug', 'Device event kept.'],
  'roctracer/R18': [
    'info',
    "HIP symbols resolved: the kernels' blocks per SM, registers and occupancy args are fixed placeholders, not measurements.",
  ],
  'roctracer/R19': ['info', 'ROCtracer session stop (no device synchronise: late activity can be missed).'],
  'roctracer/R20': ['info', 'ROCtracer stopped with 640 events collected.'],
  'roctracer/R21': ['info', 'Drained events by kind.'],
  'roctracer/R22': ['debug', 'Kinds of the first drained events.'],
  'roctracer/R23': ['debug', 'Kinds of the last drained events.'],
  'roctracer/R24': ['info', 'Bound /opt/rocm/lib/libroctracer64.so.4 (ROCtracer version 401).'],
  'roctracer/R25': [
    'error',
    'libroctracer64 could not be loaded or lacks a required symbol: session aborted.',
  ],
  'roctracer/R26': ['error', 'The ROCtracer activity pool could not be opened: session aborted.'],
  'roctracer/R27': ['error', 'roctracer_enable_domain_activity_expl(HIP_API) failed: no HIP API records.'],
  'roctracer/R28': ['info', 'HSA clock sampled against CLOCK_REALTIME (a calibration pair).'],
  'roctracer/R29': ['info', 'ROCtracer session started.'],
  'roctracer/R30': ['info', 'ROCtracer session stopped.'],
  'roctracer/R31': ['info', 'All ROCtracer domains enabled at session start.'],
  'roctracer/R32': ['debug', 'ROCtracer pool buffer delivered.'],
  'roctracer/R33': ['warning', 'The final ROCtracer flush failed: the last activity records may be missing.'],
  'roctracer/R34': [
    'error',
    'ROCtracer record layout does not match the bound library (timestamps or device id implausible): affected records are dropped. Point FLAGOS_TRACER_LIBRARY at the libroctracer64.so of the running ROCm.',
  ],
  'roctracer/R35': [
    'warning',
    'A ROCtracer buffer hit the per-buffer record cap: the tail of that buffer is missing from the capture.',
  ],
  'roctracer/R36': [
    'warning',
    'Host allocation while copying ROCtracer records failed: records are dropped while memory is short.',
  ],
  'roctracer/R37': [
    'warning',
    'This ROCtracer has no roctracer_enable_domain_callback: kernels carry no grid or block (device time is unaffected).',
  ],
  'roctracer/R38': [
    'warning',
    'The HIP API callback could not be enabled: kernels carry no grid or block (device time is unaffected).',
  ],
  'roctracer/R39': ['info', 'Kernel launch dims taken from the HIP API callback.'],
  'roctracer/Q0': ['info', 'Bound /opt/rocm/lib/librocprofiler-sdk.so.1 (rocprofiler-sdk version 601).'],
  'roctracer/Q1': ['info', 'rocprofiler-sdk registered the agent: contexts, buffer and services ready.'],
  'roctracer/Q2': ['info', 'rocprofiler-sdk session started.'],
  'roctracer/Q3': ['info', 'rocprofiler-sdk session stopped.'],
  'roctracer/Q4': ['info', 'Every rocprofiler-sdk service configured and the context started.'],
  'roctracer/Q5': [
    'warning',
    'The final rocprofiler-sdk flush failed: the last activity records may be missing.',
  ],
  'roctracer/Q6': [
    'info',
    'rocprofiler-sdk clock (CLOCK_BOOTTIME) sampled against CLOCK_REALTIME (a calibration pair).',
  ],
  'roctracer/Q7': [
    'warning',
    'rocprofiler-sdk delivered a buffer and dropped 4 records (its buffer was full).',
  ],
  'roctracer/Q8': [
    'error',
    'rocprofiler-sdk record layout does not match the bound library (record size unexpected): affected records are dropped. Point FLAGOS_TRACER_LIBRARY at the librocprofiler-sdk.so of the running ROCm.',
  ],
  'roctracer/Q9': [
    'warning',
    'Host allocation while copying rocprofiler-sdk records failed: records are dropped while memory is short.',
  ],
  'roctracer/Q10': ['info', "2 GPU agents found: device ids are mapped to the process's device indices."],
  'roctracer/Q11': ['error', 'rocprofiler_create_buffer failed (4): the session records no device activity.'],
  'roctracer/Q12': [
    'warning',
    'rocprofiler-sdk memory-copy tracing is unavailable: the capture has no copies.',
  ],
  'roctracer/Q13': [
    'error',
    'librocprofiler-sdk could not be loaded or lacks a required symbol: session aborted.',
  ],
  'env/E1': [
    'warning',
    'FLAGOS_TRACE="2" is not a boolean, so tracing is off. Use 1/true/on/yes or 0/false/off/no.',
  ],
  'env/P1': ['warning', 'FLAGOS_TRACES is not a torch_fl variable and was ignored (a typo?).'],
  'agent/A4': ['warning', 'The agent copied 29 records and 5 external correlations; 2 dropped.'],
  'agent/A12': [
    'error',
    '14 device records but no runtime records: device activity cannot be linked to the ops that launched it (runtime activity not enabled at start).',
  ],
  'agent/A20': ['info', 'The CUPTI device tracer started a session.'],
  'agent/A21': [
    'info',
    'The MSPTI device tracer handed the Kineto adaptor 353 events from 531 records; 0 dropped.',
  ],
  'agent/A22': [
    'error',
    "The device tracer's drain failed: capture <memory>: could not be read back. The profile has no device activity for this session.",
  ],
  'agent/A23': [
    'warning',
    "The MCPTI buffer walk met 16 bytes that were no record of a known kind and skipped them, resuming at the next record: the vendor's records around them were kept. Several per run point at a record layout this build does not know.",
  ],
  'agent/A25': [
    'warning',
    'TOPSPTI called no API-enter callback during the session, so no torch id reached the device work: kernels, copies and fills are recorded, but belong to their ops by time alone (no External ids). A release without runtime callbacks, or a subscription another tool holds.',
  ],
  'agent/A26': [
    'info',
    "TOPSPTI has no external-correlation API: the agent takes torch's id in its API-enter callback.",
  ],
  'agent/A27': [
    'info',
    "MCPTI writes no device records: the agent read 1 device's properties from wcudaDeviceGetAttribute, so kernels carry occupancy.",
  ],
  'agent/E2': [
    'error',
    'FLAGOS_ACCELERATOR=tpu is not a known accelerator (known: cuda, metax, ppu, ascend, rocm, dcu, musa, gcu, cpu), so no device tracer was chosen.',
  ],
  'agent/E3': [
    'warning',
    'FLAGOS_ACCELERATOR=cpu has no activity-API tracer: device activity is not recorded; CPU profiling continues.',
  ],
};

const header = (log: string) => sessionHeader(undefined, summarizeDiagnostics(parseTraceLog(log)));

describe('every catalogue sample', () => {
  it('has its meaning stated here, and no meaning is stated for a line the file lacks', () => {
    expect(new Set(catalog.map((c) => c.id))).toEqual(new Set(Object.keys(MEANING)));
  });

  it.each(catalog)('$id keeps its code, component, severity and message', ({ id, line }) => {
    const d = parseLine(line);
    expect(`${d.component}/${d.code}`).toBe(id);
    expect([d.severity, d.message]).toEqual(MEANING[id]);
  });

  it('is read by fewer rules than there are lines: one rule per template several vendors print', () => {
    const shared = RULES.filter((rule) => rule.lines.length > 1);
    expect(shared.length).toBeGreaterThan(10);
    expect(RULES.length).toBeLessThanOrEqual(catalog.length - 20);
  });
});

describe('the shared templates', () => {
  it('give each vendor its own catalogue line for the same words', () => {
    const started = ['MSPTI', 'MUPTI', 'TOPSPTI', 'ROCtracer'].map((vendor) =>
      parseLine(`[flagos] ${vendor} session started`),
    );
    expect(started.map((d) => [d.component, d.code, d.message])).toEqual([
      ['mspti', 'M7', 'MSPTI session started.'],
      ['mupti', 'U3', 'MUPTI session started.'],
      ['topspti', 'T3', 'TOPSPTI session started.'],
      ['roctracer', 'R29', 'ROCtracer session started.'],
    ]);
  });

  it("read the lines of MetaX MCPTI, which the agent names by its own label, as the CUPTI tracer's", () => {
    expect(parseLine('[flagos] MCPTI bufferCompleted callback invoked, validSize=0')).toMatchObject({
      component: 'cupti',
      code: 'C14',
      severity: 'warning',
    });
    const layout = parseTraceLog(
      [
        '[flagos] MCPTI activity records failed the layout self-check (kernel timestamps implausible).',
        '[flagos]   bound MCPTI: /opt/maca/lib/libmcpti.so (API version 18)',
        '[flagos]   Point FLAGOS_TRACER_LIBRARY at the CUPTI that belongs to the running CUDA runtime.',
      ].join('\n'),
    );
    expect(layout).toHaveLength(1);
    expect(layout[0]).toMatchObject({ component: 'cupti', code: 'C16', severity: 'error', ungated: true });
    expect(layout[0].fields).toMatchObject({ library: '/opt/maca/lib/libmcpti.so', apiVersion: '18' });
  });

  it("read the bound library from any vendor's layout warning, and a vintage only from the CUPTI tracer's", () => {
    const [mspti] = parseTraceLog(
      [
        '[flagos] MSPTI activity records failed the layout self-check (record overruns the buffer).',
        '[flagos]   bound MSPTI: /usr/local/Ascend/lib64/libmspti.so (version 260000)',
        '[flagos]   Point FLAGOS_TRACER_LIBRARY at the libmspti.so of the running CANN.',
      ].join('\n'),
    );
    expect(mspti.code).toBe('M16');
    expect(mspti.fields).toEqual({
      reason: 'record overruns the buffer',
      library: '/usr/local/Ascend/lib64/libmspti.so',
      apiVersion: '260000',
    });
  });

  it("keep each vendor's grading where the same words mean different things", () => {
    expect(parseLine('[flagos] msptiActivityEnable(11) returned 1').severity).toBe('warning');
    expect(parseLine('[flagos] msptiActivityEnable(2) returned 1').severity).toBe('error');
    expect(parseLine('[flagos] roctracer_enable_domain_activity_expl(5) returned 1').severity).toBe(
      'warning',
    );
    const hipOps = parseLine('[flagos] roctracer_enable_domain_activity_expl(2) returned 1');
    expect(hipOps).toMatchObject({ code: 'R27', severity: 'error', fields: { domain: 'HIP_OPS' } });
    expect(parseLine('[flagos] MSPTI activity setup results: CALLBACKS=0, API=3').severity).toBe('error');
    expect(
      parseLine('[flagos] ROCtracer activity setup results: POOL=0, HIP_OPS=0, EXT_API=3').severity,
    ).toBe('warning');
    // TOPSPTI prints no result: the kind counts once.
    expect(parseLine('[flagos] topsptiActivityEnable(KERNEL) failed').counts).toEqual({ KERNEL: 1 });
    expect(parseLine('[flagos] muptiActivityEnable(KERNEL) failed: 7').counts).toEqual({
      result: 7,
      KERNEL: 7,
    });
  });

  it('grade a clock sample with no vendor time as failed, for every vendor', () => {
    for (const line of [
      '[flagos] clock sample result=0 vendor=0 realtime=1785000000000000000',
      '[flagos] ROCtracer clock sample result=0 vendor=0 realtime=1785000000000000000',
    ])
      expect(parseLine(line)).toMatchObject({ severity: 'warning', fields: { vendor: '0' } });
  });
});

describe("the library override's failure (S1)", () => {
  it("is the shim's in torch_fl's wording and the agent's in its own", () => {
    const shim = parseLine('[flagos-cupti-shim] FLAGOS_TRACER_LIBRARY=/x.so could not be loaded: nope');
    const agent = parseLine('[flagos] FLAGOS_TRACER_LIBRARY=/x.so could not be loaded: nope');
    expect(shim).toMatchObject({ component: 'cupti-shim', code: 'S1', ungated: true });
    expect(shim.fields).toEqual({
      variable: 'FLAGOS_TRACER_LIBRARY',
      path: '/x.so',
      error: 'nope',
      vintage: 'B',
    });
    expect(agent).toMatchObject({ component: 'agent', code: 'S1', severity: 'warning', ungated: true });
    expect(agent.fields).toEqual({ variable: 'FLAGOS_TRACER_LIBRARY', path: '/x.so', error: 'nope' });
    expect(agent.message).toMatch(/the agent fell back/);
    // The retired variable was only ever the shim's.
    expect(parseLine('[flagos] FLAGOS_CUPTI_LIBRARY=/x.so could not be loaded: nope').code).toBe('');
  });
});

describe('the session header', () => {
  const noLibrary = [
    '[flagos] CUPTI not available, tracer not armed',
    '[flagos] libmspti is unavailable',
    '[flagos] libroctracer64 is unavailable',
    '[flagos] librocprofiler-sdk is unavailable',
  ];

  it('says no vendor library loaded when every vendor says its library is unavailable, and names no vendor', () => {
    const summary = summarizeDiagnostics(parseTraceLog(noLibrary.join('\n')));
    expect(summary.tracer).toBe('');
    expect(summary.noLibraryLoaded).toEqual({ tried: [] });
    expect(header(noLibrary.join('\n')).tracer).toBe('no vendor activity library loaded');
    const withOverride = [
      '[flagos] FLAGOS_TRACER_LIBRARY=/opt/x/libcupti.so could not be loaded: not found',
      ...noLibrary,
    ];
    expect(header(withOverride.join('\n')).tracer).toBe(
      'no vendor activity library loaded (tried FLAGOS_TRACER_LIBRARY=/opt/x/libcupti.so)',
    );
  });

  it("names what the agent's load failure says it tried", () => {
    const failure =
      '[flagos] device tracer start failed: no CUPTI-compatible, MSPTI or ROCtracer library could be loaded; tried ' +
      'FLAGOS_TRACER_LIBRARY=/opt/my cupti/libcupti.so (/opt/my cupti/libcupti.so: cannot open shared object file); ' +
      'libcupti.so.13 (libcupti.so.13: cannot open shared object file); libmspti.so (required MSPTI activity symbols ' +
      'are missing); libroctracer64.so (libroctracer64.so: cannot open shared object file)';
    const h = header(
      ['[flagos-cupti-shim] bound cuptiActivityRegisterCallbacks NOT resolved', failure].join('\n'),
    );
    expect(h.tracer).toBe(
      'no vendor activity library loaded (tried FLAGOS_TRACER_LIBRARY=/opt/my cupti/libcupti.so, libcupti.so.13, libmspti.so, libroctracer64.so)',
    );
    // One accelerator's tracer only (FLAGOS_ACCELERATOR).
    expect(
      header(
        '[flagos] device tracer start failed: no MSPTI library for FLAGOS_ACCELERATOR=ascend could be loaded; tried libmspti.so (not found)',
      ).tracer,
    ).toBe('no vendor activity library loaded (tried libmspti.so)');
    // Any other failure says nothing about the libraries.
    expect(
      header('[flagos] device tracer drain failed: capture <memory>: could not be read back').tracer,
    ).toBe('');
  });

  it('names no vendor on a tie', () => {
    const tie = ['[flagos] MSPTI session started', '[flagos] ROCtracer session started'].join('\n');
    expect(summarizeDiagnostics(parseTraceLog(tie)).tracer).toBe('');
    expect(header(tie).tracer).toBe('');
    expect(header(`${tie}\n[flagos] MSPTI session stopped`).tracer).toBe('MSPTI (Ascend)');
  });

  it('tells MetaX from CUDA on the CUPTI tracer by the library bound, or by the tracer the agent names', () => {
    const cuda =
      '[flagos-cupti-shim] bound cuptiActivityRegisterCallbacks -> /usr/local/cuda/lib64/libcupti.so.12 (CUPTI API version 24)';
    const metax =
      '[flagos-cupti-shim] bound cuptiActivityRegisterCallbacks -> /opt/maca/lib/libmcpti.so (CUPTI API version 18)';
    const started = '[flagos] CuptiDeviceTracer::start() called';
    expect(header(`${cuda}\n${started}`).tracer).toBe('CUPTI (CUDA / PPU)');
    expect(header(`${metax}\n${started}`).tracer).toBe('MCPTI (MetaX)');
    expect(summarizeDiagnostics(parseTraceLog(`${metax}\n${started}`)).tracer).toBe('mcpti');
    expect(header('[flagos] MCPTI device tracer session start').tracer).toBe('MCPTI (MetaX)');
    expect(header('[flagos] ROCtracer device tracer session start').tracer).toBe('ROCtracer (DCU)');
  });

  it('names MUSA, GCU and rocprofiler-sdk from the agent lines their bindings print', () => {
    // The CUPTI family's binding prints CUPTI's lines for MUPTI's and TOPSPTI's libraries: the library decides.
    const started = '[flagos] CuptiDeviceTracer::start() called';
    const mupti =
      '[flagos-cupti-shim] bound muptiActivityRegisterCallbacks -> /usr/local/musa/lib/libmupti.so (MUPTI API version 12)';
    const topspti =
      '[flagos-cupti-shim] bound topsptiActivityRegisterCallbacks -> /opt/tops/lib/libtopspti.so (TOPSPTI API version 1)';
    expect(header(`${mupti}\n${started}`).tracer).toBe('MUPTI (MUSA)');
    expect(header(`${topspti}\n${started}`).tracer).toBe('TOPSPTI (GCU)');
    const rocprofiler = [
      '[flagos] bound rocprofiler_force_configure -> /opt/rocm/lib/librocprofiler-sdk.so.1 (rocprofiler-sdk version 601)',
      '[flagos] rocprofiler-sdk session started',
    ].join('\n');
    expect(header(rocprofiler).tracer).toBe('rocprofiler-sdk (ROCm / DCU)');
    expect(header('[flagos] TOPSPTI device tracer session start').tracer).toBe('TOPSPTI (GCU)');
  });
});
