/**
 * A worker thread the extension host keeps for one kind of request (the read worker, timeline/readOffThread.ts; the
 * analysis worker, analysis/offThread.ts): started on first use from its bundle beside the running one, its
 * requests numbered and waiting in `pending`, stopped after a quiet spell (its heap freed), and every request still
 * waiting rejected when it stops or dies.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

export abstract class WorkerHost<Pending extends { reject(error: Error): void }, Reply> {
  private worker: Worker | undefined;
  protected readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly file: string,
    /** How long the worker stays once no request waits. */
    private readonly idleMs: number,
  ) {}

  /** A reply the worker posted. */
  protected abstract onReply(reply: Reply): void;

  /** What the requests still waiting are rejected with when the worker fails, exits or idles (`cause`). */
  protected abstract stopped(cause: unknown): Error;

  /** Starts the worker ahead of the first request (it loads its bundle meanwhile). */
  warm(): void {
    this.started();
  }

  /** The worker and a new request's id; it stays while the request waits. */
  protected begin(): { worker: Worker; id: number } {
    const worker = this.started();
    if (this.idle) clearTimeout(this.idle);
    return { worker, id: this.nextId++ };
  }

  protected started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.file);
    worker.unref();
    worker.on('message', (reply: Reply) => this.onReply(reply));
    worker.on('error', (error) => this.stop(this.stopped(error)));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.stop(this.stopped(`the ${this.name} stopped (exit code ${code})`));
    });
    this.worker = worker;
    return worker;
  }

  /** The worker's name in messages ("the analysis worker stopped …"). */
  protected abstract readonly name: string;

  /** Stops the worker idleMs from now, unless a request comes meanwhile. */
  protected idleAfter(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.pending.size === 0) this.stop(this.stopped('idle'));
    }, this.idleMs);
    this.idle.unref();
  }

  /** Stops the worker; every request still waiting is rejected with `reason`. */
  stop(reason: Error): void {
    const worker = this.worker;
    this.worker = undefined;
    if (this.idle) clearTimeout(this.idle);
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const pending of waiting) pending.reject(reason);
    void worker?.terminate();
  }
}

/**
 * One host per worker bundle: `file`, or `bundle` beside the running bundle where the sources were bundled;
 * undefined where there is none (the sources run unbundled, as in the unit tests).
 */
export function hostsByBundle<T>(
  bundle: string,
  make: (file: string) => T,
): (file?: string) => T | undefined {
  const hosts = new Map<string, T>();
  return (file) => {
    const beside = path.join(__dirname, bundle);
    const resolved = file ?? (existsSync(beside) ? beside : undefined);
    if (!resolved) return undefined;
    let host = hosts.get(resolved);
    if (!host) hosts.set(resolved, (host = make(resolved)));
    return host;
  };
}
