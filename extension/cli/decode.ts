import { AddonLoadError, type DecodedCapture } from '../import/addon';
import { captureFacts, decodeCaptureFile } from '../import/capture';
import { terminalText } from '../shared/text';
import type { CliCommand } from './commands';
import { UserError } from '../import/errors';
import { parseCommandArgs } from './errors';
import { vendorRow } from '../shared/vendors';

const KIND_NAMES = ['kernel', 'memcpy', 'memset', 'runtime', 'driver'];

/** Absolute epoch ns as decimal text: exact (the values exceed 2^53, so JSON numbers would round them). */
function absolute(capture: DecodedCapture, relative: number): string {
  return (capture.baseNs + BigInt(relative)).toString();
}

function argsOf(capture: DecodedCapture, i: number): Record<string, unknown> {
  const args = capture.args;
  if (!args) return {};
  const text = Buffer.from(
    args.bytes.buffer,
    args.bytes.byteOffset + args.offsets[i],
    args.offsets[i + 1] - args.offsets[i],
  );
  return JSON.parse(text.toString('utf8')) as Record<string, unknown>;
}

function eventJson(capture: DecodedCapture, i: number) {
  const external = capture.externalId[i];
  return {
    kind: KIND_NAMES[capture.kind[i]] ?? String(capture.kind[i]),
    start_ns: absolute(capture, capture.start[i]),
    end_ns: absolute(capture, capture.end[i]),
    correlation_id: capture.correlation[i],
    external_correlation_id: Number.isNaN(external) ? null : external,
    device: capture.device[i],
    stream: capture.stream[i],
    thread_id: capture.thread[i],
    name: capture.names[capture.name[i]],
    metadata: argsOf(capture, i),
  };
}

function countsLine(capture: DecodedCapture): string {
  const c = capture.counts;
  return (
    `kernel=${c.kernel} memcpy=${c.memcpy} memset=${c.memset} runtime=${c.runtime} driver=${c.driver} ` +
    `external-correlation=${c.externalCorrelation} device-records=${c.deviceRecords} dropped=${c.dropped} ` +
    `no-timing=${c.noTiming} rejected=${c.implausible + c.malformed} frames=${c.frames} bad-frames=${c.badFrames}` +
    (c.correlationWrapped ? ` correlation-wrapped=${c.correlationWrapped}` : '')
  );
}

/** The capture as text. Names, library path and diagnostics come from the file: each goes through terminalText. */
function renderText(file: string, capture: DecodedCapture): string {
  const out: string[] = [];
  const window =
    capture.windowStartNs !== null
      ? `window [${capture.windowStartNs}, ${capture.windowStopNs ?? 'not stopped'}]`
      : 'no capture window';
  out.push(
    `${terminalText(file)}: ${vendorRow(capture.vendor)?.label ?? terminalText(capture.vendor.toUpperCase())} API ${capture.apiVersion}, format ${capture.formatVersion}, pid ${capture.pid}, ` +
      `${capture.closed ? 'closed' : 'not closed (the process stopped first; its prefix was decoded)'}, ${window}`,
  );
  if (capture.library) out.push(`library: ${terminalText(capture.library)}`);
  out.push(`counts: ${countsLine(capture)}`);
  out.push(`diagnostics (${capture.diagnostics.length}):`);
  for (const d of capture.diagnostics) {
    const where = d.offset === undefined ? '' : ` @${d.offset}`;
    out.push(`  ${terminalText(d.severity)} ${terminalText(d.code)}${where}: ${terminalText(d.message)}`);
  }
  out.push(`events (${capture.length}):`);
  for (let i = 0; i < capture.length; i++) {
    const ext = capture.externalId[i];
    out.push(
      `  ${(KIND_NAMES[capture.kind[i]] ?? '?').padEnd(7)} ${absolute(capture, capture.start[i])} ` +
        `+${capture.end[i] - capture.start[i]}ns corr=${capture.correlation[i]} ext=${Number.isNaN(ext) ? '-' : ext} ` +
        `dev=${capture.device[i]} stream=${capture.stream[i]} tid=${capture.thread[i]} ${terminalText(capture.names[capture.name[i]] ?? '')} ` +
        // JSON escapes C0 controls but not C1 ones or bidirectional overrides.
        terminalText(JSON.stringify(argsOf(capture, i))),
    );
  }
  return `${out.join('\n')}\n`;
}

export const decodeCommand: CliCommand = {
  synopsis:
    'decode CAPTURE.fpc [--json]   the device events, counts and diagnostics of an agent-mode capture',
  async run(argv) {
    const parsed = parseCommandArgs(
      argv,
      { json: { type: 'boolean' } },
      'usage: flagprof decode CAPTURE.fpc [--json]',
    );
    const [file, ...extra] = parsed.positionals;
    if (!file || extra.length > 0) throw new UserError('usage: flagprof decode CAPTURE.fpc [--json]');
    let capture: DecodedCapture;
    try {
      capture = decodeCaptureFile(file, { args: true });
    } catch (error) {
      if (error instanceof AddonLoadError) throw new UserError(error.message, 1);
      throw error;
    }
    if (parsed.values.json) {
      const events = [];
      for (let i = 0; i < capture.length; i++) events.push(eventJson(capture, i));
      const json = {
        file,
        formatVersion: capture.formatVersion,
        pid: capture.pid,
        ...captureFacts(capture),
        diagnostics: capture.diagnostics.map((d) => ({ ...d, realtimeNs: d.realtimeNs?.toString() })),
        events,
      };
      process.stdout.write(`${JSON.stringify(json, null, 1)}\n`);
    } else {
      process.stdout.write(renderText(file, capture));
    }
    return 0;
  },
};
