/**
 * Kineto's own log lines (`USDT:2026-12-02 02:41:47 15248:15248 SyncActivityProfilerHandler.cpp:52] profiler_start`,
 * `STAGE:… ActivityProfilerController.cpp:312] Completed Stage: Warm Up` in older torch) are printed on the script's
 * stderr at every profiler start and stop — with segments, every few seconds. They say nothing to the user, so the
 * launcher takes them out of what the user sees and keeps them in the session's kineto.log.
 *
 * The filter works on bytes and passes everything else through at once, unchanged (a progress bar's '\r' updates,
 * a traceback's exact bytes): only a line that starts like a Kineto line is held until its end shows what it is.
 */

const KINETO_LINE = /^(USDT|STAGE):\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \d+:\d+ [\w.]+\.cpp:\d+\] /;
const PREFIXES = ['USDT:', 'STAGE:'];
/** A "line" this long without a newline is not one of Kineto's: it goes to the user. */
const MAX_HELD = 4096;

export function isKinetoLogLine(line: string): boolean {
  return KINETO_LINE.test(line);
}

function mayBeKineto(start: string): boolean {
  return PREFIXES.some((prefix) => prefix.startsWith(start) || start.startsWith(prefix));
}

export class KinetoLogFilter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private holding = false;
  private atLineStart = true;

  constructor(
    private readonly toUser: (chunk: Buffer) => void,
    private readonly toLog: (line: string) => void,
  ) {}

  push(chunk: Buffer): void {
    let from = 0;
    let at = 0;
    while (at < chunk.length) {
      if (this.atLineStart && !this.holding) {
        if (at > from) this.toUser(chunk.subarray(from, at));
        from = at;
        this.holding = true;
      }
      const newline = chunk.indexOf(10, at);
      const end = newline === -1 ? chunk.length : newline + 1;
      if (!this.holding) {
        this.atLineStart = newline !== -1;
        at = end;
        continue;
      }
      this.held.push(chunk.subarray(at, end));
      this.heldBytes += end - at;
      at = end;
      from = end;
      const text = Buffer.concat(this.held).toString('latin1');
      if (!mayBeKineto(text.slice(0, 6)) || this.heldBytes > MAX_HELD) {
        this.release(newline !== -1);
      } else if (newline !== -1) {
        const line = text.replace(/\r?\n$/, '');
        if (isKinetoLogLine(line)) {
          this.toLog(
            Buffer.concat(this.held)
              .toString('utf8')
              .replace(/\r?\n$/, ''),
          );
          this.held = [];
          this.heldBytes = 0;
          this.holding = false;
          this.atLineStart = true;
        } else this.release(true);
      }
    }
    if (at > from) this.toUser(chunk.subarray(from, at));
  }

  /** The stream ended: a held partial line is the user's. */
  end(): void {
    if (this.holding) this.release(false);
  }

  private release(lineEnded: boolean): void {
    if (this.heldBytes > 0) this.toUser(Buffer.concat(this.held));
    this.held = [];
    this.heldBytes = 0;
    this.holding = false;
    this.atLineStart = lineEnded;
  }
}
