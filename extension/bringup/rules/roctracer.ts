/**
 * ROCtracer (AMD, Hygon DCU): the torch_fl tracer's lines (clock sync, pool, correlation push/pop, per-record
 * classification, drain), then the capture agent's (libflagprof_agent.so) ROCtracer binding where its lines are
 * its own, then its rocprofiler-sdk binding's own lines (ROCtracer's successor: tool registration, buffer
 * deliveries, agents, contexts, a service it could not configure); the rest of the agent's are read by the
 * templates every vendor shares (./activity.ts).
 */
import type { Rule } from './rule';
import { F, R, U, n, rx, info, kindName, resultSeverity } from './rule';

export const ROCTRACER_RULES: readonly Rule[] = [
  {
    lines: [{ code: 'R1', component: 'roctracer' }],
    pattern: rx(F, 'RoctracerDeviceTracer initialized'),
    parse: () => info('ROCtracer tracer constructed.'),
  },
  {
    lines: [{ code: 'R2', component: 'roctracer' }],
    pattern: rx(F, 'RoctracerDeviceTracer::start\\(\\)'),
    parse: () => info('ROCtracer session start.'),
  },
  {
    lines: [{ code: 'R3', component: 'roctracer' }],
    pattern: rx(F, `Clock sync: host_base=${U} gpu_base=${U}`),
    parse: (m) => ({
      severity: m[2] === '0' ? 'warning' : 'info',
      message:
        m[2] === '0'
          ? 'roctracer_get_timestamp failed (gpu_base 0): device times cannot be converted.'
          : 'Clock sync (single offset, no drift correction).',
      fields: { hostBase: m[1], gpuBase: m[2] },
    }),
  },
  ...(
    [
      ['R4', 'roctracer_set_properties', 'warning'],
      ['R5', 'roctracer_enable_domain_callback', 'error'],
      ['R7', 'roctracer_enable_domain_activity_expl\\(HIP_OPS\\)', 'error'],
    ] as const
  ).map(([code, call, bad]): Rule => ({
    lines: [{ code, component: 'roctracer' }],
    pattern: rx(F, `${call}: ${R}`),
    parse: (m) => ({
      severity: resultSeverity(n(m[1]), bad),
      message:
        n(m[1]) === 0
          ? `${call.replace(/\\/g, '')} succeeded.`
          : code === 'R5'
            ? 'HIP API callbacks could not be enabled: no runtime events and no torch-id association.'
            : code === 'R7'
              ? 'HIP_OPS activity could not be enabled: no kernels or copies.'
              : 'roctracer_set_properties failed.',
      counts: { result: n(m[1]) },
    }),
  })),
  {
    lines: [{ code: 'R6', component: 'roctracer' }],
    pattern: rx(F, `roctracer_open_pool_expl: ${R} pool=(\\S+)`),
    parse: (m) => {
      const nullPool = m[2] === '0' || /^0x0+$/.test(m[2]);
      return {
        severity: n(m[1]) !== 0 || nullPool ? 'error' : 'info',
        message: nullPool
          ? 'The activity pool is null: no device activity will arrive.'
          : 'Activity pool opened.',
        counts: { result: n(m[1]) },
        fields: { pool: m[2] },
      };
    },
  },
  {
    lines: [{ code: 'R8', component: 'roctracer' }],
    pattern: rx(F, 'ROCtracer started'),
    parse: () => info('ROCtracer session started.'),
  },
  {
    lines: [{ code: 'R9', component: 'roctracer' }],
    pattern: rx(F, `pushCorrelation\\(${R}\\), stack depth=${U}`),
    parse: (m) => ({
      severity: 'debug',
      message: 'Torch correlation id pushed.',
      counts: { id: n(m[1]), depth: n(m[2]) },
    }),
  },
  {
    lines: [{ code: 'R10', component: 'roctracer' }],
    pattern: rx(F, `popCorrelation\\(\\) popped ${R}, stack depth=${U}`),
    parse: (m) => ({
      severity: 'debug',
      message: 'Torch correlation id popped.',
      counts: { id: n(m[1]), depth: n(m[2]) },
    }),
  },
  {
    lines: [{ code: 'R11', component: 'roctracer' }],
    pattern: rx(F, 'activity_callback ENTRY: begin=(\\S+) end=(\\S+)'),
    parse: (m) => ({
      severity: 'debug',
      message: 'Activity buffer delivered.',
      counts: { buffersCompleted: 1 },
      fields: { begin: m[1], end: m[2] },
    }),
  },
  {
    lines: [{ code: 'R12', component: 'roctracer' }],
    pattern: rx(F, 'activity_callback: max events reached, dropping'),
    parse: () => ({
      severity: 'warning',
      message: 'Event cap reached: the rest of this delivery is lost.',
      counts: { recordsDropped: 1 },
    }),
  },
  {
    lines: [{ code: 'R13', component: 'roctracer' }],
    pattern: rx(F, `async record: domain=${R} kind=0x([0-9a-fA-F]+) op=0x([0-9a-fA-F]+) corr=${R}`),
    parse: (m) => ({
      severity: 'debug',
      message: 'Activity record.',
      counts: { domain: n(m[1]), kind: parseInt(m[2], 16), op: parseInt(m[3], 16), correlation: n(m[4]) },
    }),
  },
  {
    lines: [{ code: 'R14', component: 'roctracer' }],
    pattern: rx(F, `  -> classified as kind=${U}`),
    parse: (m) => ({
      severity: 'debug',
      message: `Record classified as ${kindName(m[1])}.`,
      counts: { kind: n(m[1]) },
    }),
  },
  {
    lines: [{ code: 'R15', component: 'roctracer' }],
    pattern: rx(F, `  -> GPU ts: begin=${U} end=${U} duration=${U} ns`),
    parse: (m) => {
      // A wrapped (end < begin) duration shows as an unsigned value near 2^64.
      const wrapped = BigInt(m[3]) > 3_600_000_000_000n;
      return {
        severity: wrapped ? 'warning' : 'debug',
        message: wrapped ? 'Record with end before begin (duration wrapped).' : 'Record GPU timestamps.',
        fields: { begin: m[1], end: m[2], duration: m[3] },
      };
    },
  },
  {
    lines: [{ code: 'R16', component: 'roctracer' }],
    pattern: rx(F, `  -> Host ts: start=${U} end=${U} duration=${U} ns`),
    parse: (m) => ({
      severity: 'debug',
      message: 'Record host timestamps.',
      fields: { start: m[1], end: m[2], duration: m[3] },
    }),
  },
  {
    lines: [{ code: 'R17', component: 'roctracer' }],
    pattern: rx(F, `  -> pushed device event, total=${U}`),
    parse: (m) => ({ severity: 'debug', message: 'Device event kept.', counts: { total: n(m[1]) } }),
  },
  {
    lines: [{ code: 'R18', component: 'roctracer' }],
    pattern: rx(F, 'HIP symbols resolved=(yes|no)'),
    parse: (m) =>
      m[1] === 'yes'
        ? info(
            "HIP symbols resolved: the kernels' blocks per SM, registers and occupancy args are fixed placeholders, not measurements.",
          )
        : info('HIP symbols not resolved: occupancy-style kernel args are omitted.'),
  },
  {
    lines: [{ code: 'R19', component: 'roctracer' }],
    pattern: rx(F, 'RoctracerDeviceTracer::stop\\(\\)'),
    parse: () => info('ROCtracer session stop (no device synchronise: late activity can be missed).'),
  },
  {
    lines: [{ code: 'R20', component: 'roctracer' }],
    pattern: rx(F, `ROCtracer stopped, events collected: ${U}`),
    parse: (m) => info(`ROCtracer stopped with ${m[1]} events collected.`, { eventsCollected: n(m[1]) }),
  },
  {
    lines: [{ code: 'R21', component: 'roctracer' }],
    pattern: rx(F, `drain\\(\\) events by kind: kernel=${U} memcpy=${U} memset=${U} runtime=${U} total=${U}`),
    parse: (m) =>
      info('Drained events by kind.', {
        kernel: n(m[1]),
        memcpy: n(m[2]),
        memset: n(m[3]),
        runtime: n(m[4]),
        total: n(m[5]),
      }),
  },
  {
    lines: [{ code: 'R22', component: 'roctracer' }],
    pattern: rx(F, 'drain\\(\\) first 10 kinds:(.*)', false),
    parse: (m) => ({
      severity: 'debug',
      message: 'Kinds of the first drained events.',
      fields: { kinds: m[1].trim() },
    }),
  },
  {
    lines: [{ code: 'R23', component: 'roctracer' }],
    pattern: rx(F, 'drain\\(\\) last 10 kinds:(.*)', false),
    parse: (m) => ({
      severity: 'debug',
      message: 'Kinds of the last drained events.',
      fields: { kinds: m[1].trim() },
    }),
  },

  // ---- ROCtracer through the capture agent (libflagprof_agent.so)
  {
    lines: [{ code: 'R26', component: 'roctracer' }],
    pattern: rx(F, `roctracer_open_pool_expl failed: ${R}`),
    parse: (m) => ({
      severity: 'error',
      message: 'The ROCtracer activity pool could not be opened: session aborted.',
      counts: { result: n(m[1]) },
    }),
  },
  {
    lines: [{ code: 'R32', component: 'roctracer' }],
    pattern: rx(F, `ROCtracer buffer callback invoked, validSize=${U}`),
    parse: (m) => ({
      severity: 'debug',
      message: 'ROCtracer pool buffer delivered.',
      counts: { buffersCompleted: 1, validSize: n(m[1]) },
    }),
  },
  // Launch dims (grid, block, shared memory) from the HIP API callback: ROCtracer's activity records have none.
  {
    lines: [{ code: 'R37', component: 'roctracer' }],
    pattern: rx(
      F,
      'ROCtracer has no (roctracer_enable_domain_callback|roctracer_op_string): kernels carry no grid or block',
    ),
    parse: (m) => ({
      severity: 'warning',
      message: `This ROCtracer has no ${m[1]}: kernels carry no grid or block (device time is unaffected).`,
      fields: { missing: m[1] },
    }),
  },
  {
    lines: [{ code: 'R38', component: 'roctracer' }],
    pattern: rx(
      F,
      `roctracer_enable_domain_callback\\(HIP_API\\) returned ${R}: kernels carry no grid or block`,
    ),
    parse: (m) => ({
      severity: 'warning',
      message:
        'The HIP API callback could not be enabled: kernels carry no grid or block (device time is unaffected).',
      counts: { result: n(m[1]) },
    }),
  },
  {
    lines: [{ code: 'R39', component: 'roctracer' }],
    pattern: rx(F, `ROCtracer launch dims: ${U} launches seen, ${U} kernels joined`),
    parse: (m) => ({
      severity: m[1] !== '0' && m[2] === '0' ? 'warning' : 'info',
      message:
        m[1] !== '0' && m[2] === '0'
          ? 'The HIP API callback saw launches, but no kernel record matched one: kernels carry no grid or block.'
          : 'Kernel launch dims taken from the HIP API callback.',
      counts: { launchesSeen: n(m[1]), kernelsJoined: n(m[2]) },
    }),
  },
  // The agent's rocprofiler-sdk binding (Q lines).
  {
    lines: [{ code: 'Q1', component: 'roctracer' }],
    pattern: rx(
      F,
      `rocprofiler_force_configure returned ${R}; contexts ${R}, buffer ${R}, code objects ${R}, KERNEL_DISPATCH ${R}, MEMORY_COPY ${R}, HIP_RUNTIME_API ${R}`,
    ),
    parse: (m) => {
      const [configure, contexts, buffer, codeObjects, kernels, copies, hip] = m.slice(1, 8).map(n);
      const failed = [contexts, buffer, kernels, hip].some((r) => r !== 0);
      return {
        severity: configure !== 0 || failed ? 'error' : resultSeverity(codeObjects + copies),
        message:
          configure !== 0
            ? `rocprofiler-sdk refused the agent's tool registration (${configure}): another tool configured it first, or the HIP runtime initialised before the agent loaded.`
            : failed
              ? 'rocprofiler-sdk registered the agent, but a context, the buffer, kernel-dispatch or HIP API tracing could not be set up: no device events or no attribution.'
              : codeObjects + copies !== 0
                ? 'rocprofiler-sdk registered the agent without code-object or memory-copy tracing: kernels unnamed or copies missing.'
                : 'rocprofiler-sdk registered the agent: contexts, buffer and services ready.',
        counts: {
          configure,
          contexts,
          buffer,
          codeObjects,
          kernelDispatch: kernels,
          memoryCopy: copies,
          hipApi: hip,
        },
      };
    },
  },
  {
    lines: [{ code: 'Q7', component: 'roctracer' }],
    pattern: rx(F, `rocprofiler-sdk buffer callback invoked, records=${U}, dropped=${U}`),
    parse: (m) => {
      const counts: Record<string, number> = { records: n(m[1]), recordsDropped: n(m[2]) };
      return m[2] === '0'
        ? { severity: 'debug', message: 'rocprofiler-sdk delivered a buffer.', counts }
        : {
            severity: 'warning',
            message: `rocprofiler-sdk delivered a buffer and dropped ${m[2]} records (its buffer was full).`,
            counts,
          };
    },
  },
  {
    lines: [{ code: 'Q10', component: 'roctracer' }],
    pattern: rx(F, `rocprofiler_query_available_agents returned ${R} \\(${U} GPU agents\\)`),
    parse: (m) => ({
      severity: m[1] === '0' ? 'info' : 'warning',
      message:
        m[1] === '0'
          ? `${m[2]} GPU agents found: device ids are mapped to the process's device indices.`
          : "rocprofiler_query_available_agents failed: device ids stay the agents' handles.",
      counts: { result: n(m[1]), gpuAgents: n(m[2]) },
    }),
  },
  {
    lines: [{ code: 'Q11', component: 'roctracer' }],
    pattern: rx(F, `rocprofiler_create_(context|buffer) failed: ${R}`),
    parse: (m) => ({
      severity: 'error',
      message: `rocprofiler_create_${m[1]} failed (${m[2]}): the session records no device activity.`,
      counts: { result: n(m[2]) },
    }),
  },
  {
    lines: [{ code: 'Q12', component: 'roctracer' }],
    ungated: true,
    pattern: rx(
      F,
      `rocprofiler-sdk (HIP runtime API|memory copy) tracing is unavailable \\(status ${R}\\): (.*)`,
    ),
    parse: (m) => ({
      severity: 'warning',
      message:
        m[1] === 'memory copy'
          ? 'rocprofiler-sdk memory-copy tracing is unavailable: the capture has no copies.'
          : 'rocprofiler-sdk HIP API tracing is unavailable: device work cannot be linked to the calls that launched it.',
      counts: { result: n(m[2]) },
    }),
  },
];
