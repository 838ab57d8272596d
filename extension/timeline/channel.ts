/**
 * What one timeline webview is to show, and when it can be told: the host side of the panel's messages, without
 * VS Code so that its ordering can be tested.
 *
 * A webview without retainContextWhenHidden is destroyed when its tab is hidden and built again (then it posts
 * 'ready') when the tab is shown; anything posted meanwhile is dropped. So the latest content is kept and sent at
 * each 'ready', and a requested selection is kept until a webview has actually received it.
 *
 * Loads are numbered: a load overtaken by newer content (another load, a profile shown directly, the panel
 * closed) is dropped when it finishes instead of replacing what the panel shows, or reporting an error into it.
 */
import type { HostToWebview } from '../protocol';

/** Posts to the webview; resolves false when no webview received the message (hidden, reloading, disposed). */
export type PostToWebview = (message: HostToWebview) => PromiseLike<boolean> | boolean;

type Content =
  | { kind: 'progress'; title: string; message: string }
  /** `analysis`: the analysis of a payload shown without it (header.linkingPending), once it is done. */
  | { kind: 'profile'; payload: ArrayBuffer; analysis?: ArrayBuffer }
  | { kind: 'error'; title: string; message: string };

export class TimelineChannel {
  private content: Content | undefined;
  /** A selection no webview has received yet. */
  private select: number | undefined;
  private ready = false;
  /** Counts 'ready's, so that a send that failed for an earlier webview does not mark a newer one gone. */
  private webview = 0;
  private generation = 0;
  private disposed = false;

  constructor(private readonly post: PostToWebview) {}

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** A webview listens: what is shown now reaches it at once. */
  get isListening(): boolean {
    return this.ready && !this.disposed;
  }

  /** A load starts (shown as progress until it finishes); returns the ticket to finish it with. */
  beginLoad(title: string, message: string): number {
    const ticket = ++this.generation;
    // A profile already shown stays on screen while it is loaded again.
    if (this.content?.kind !== 'profile') this.setContent({ kind: 'progress', title, message });
    return ticket;
  }

  /** Whether the load with this ticket still decides what the panel shows. */
  isCurrent(ticket: number): boolean {
    return !this.disposed && ticket === this.generation;
  }

  /** Shows a finished load's profile; false (and nothing shown) when newer content or a close overtook it. */
  finishLoad(ticket: number, payload: ArrayBuffer, select?: number): boolean {
    if (!this.isCurrent(ticket)) return false;
    this.showProfile(payload, select);
    return true;
  }

  /**
   * Shows a partial profile while the load with this ticket goes on (its finishLoad replaces it); nothing when
   * newer content or a close overtook the load.
   */
  showPartial(ticket: number, payload: ArrayBuffer): Promise<void> {
    if (!this.isCurrent(ticket)) return Promise.resolve();
    this.content = { kind: 'profile', payload };
    return this.flush();
  }

  /**
   * Completes a finished load whose profile is shown without its analysis (showPartial with a linkingPending
   * payload): the analysis goes to the webview now, and with the payload to each webview built later. False (and
   * nothing sent) when newer content or a close overtook the load.
   */
  finishAnalysis(ticket: number, analysis: ArrayBuffer, select?: number): boolean {
    if (!this.isCurrent(ticket) || this.content?.kind !== 'profile') return false;
    this.generation++;
    if (select !== undefined) this.select = select;
    this.content = { ...this.content, analysis };
    if (this.ready) void this.sendAnalysis(analysis);
    return true;
  }

  /** Shows a failed load's error; false (and nothing shown) when newer content or a close overtook it. */
  failLoad(ticket: number, title: string, message: string): boolean {
    if (!this.isCurrent(ticket)) return false;
    this.showError(title, message);
    return true;
  }

  /** Shows a profile, overtaking any load in flight. `select` is a slice to select and reveal. */
  showProfile(payload: ArrayBuffer, select?: number): void {
    if (this.disposed) return;
    this.generation++;
    if (select !== undefined) this.select = select;
    this.setContent({ kind: 'profile', payload });
  }

  showError(title: string, message: string): void {
    if (this.disposed) return;
    this.generation++;
    this.setContent({ kind: 'error', title, message });
  }

  /** Selects a slice: now if a webview shows the profile, else with the profile once one can be told. */
  selectSlice(slice: number): void {
    if (this.disposed) return;
    this.select = slice;
    if (this.ready && this.content?.kind === 'profile') void this.send({ type: 'select', slice }, slice);
  }

  /** A webview (re)loaded and listens: everything it should show is sent again. */
  webviewReady(): void {
    if (this.disposed) return;
    this.ready = true;
    this.webview++;
    void this.flush();
  }

  /** The webview was destroyed (its tab hidden): nothing reaches it until its successor says 'ready'. */
  webviewGone(): void {
    this.ready = false;
  }

  dispose(): void {
    this.disposed = true;
    this.ready = false;
    this.content = undefined;
    this.select = undefined;
  }

  private setContent(content: Content): void {
    this.content = content;
    void this.flush();
  }

  /** Sends the content to a webview that listens; resolves once it is delivered (at once when none listens). */
  private flush(): Promise<void> {
    const content = this.content;
    if (!this.ready || !content) return Promise.resolve();
    switch (content.kind) {
      case 'progress':
        return this.send({ type: 'progress', title: content.title, message: content.message });
      case 'error':
        return this.send({ type: 'error', title: content.title, message: content.message });
      case 'profile':
        // Once shown, the selection lives in the webview's own state: a later reload restores that instead.
        if (content.analysis) {
          void this.send({ type: 'init', payload: content.payload, sentAtMs: Date.now() });
          return this.sendAnalysis(content.analysis);
        }
        return this.send(
          { type: 'init', payload: content.payload, select: this.select, sentAtMs: Date.now() },
          this.select,
        );
    }
  }

  /** The selection waits for the analysis: the page shows the profile whole only then. */
  private sendAnalysis(analysis: ArrayBuffer): Promise<void> {
    return this.send({ type: 'analysis', payload: analysis, select: this.select }, this.select);
  }

  /** Posts; a selection carried by the message is forgotten once a webview has it, kept when none got it. */
  private send(message: HostToWebview, carriesSelect?: number): Promise<void> {
    const webview = this.webview;
    const settle = (delivered: boolean): void => {
      if (delivered) {
        if (carriesSelect !== undefined && this.select === carriesSelect) this.select = undefined;
      } else if (webview === this.webview) {
        // That webview is gone; its successor says 'ready' and gets everything then.
        this.ready = false;
      }
    };
    let result: PromiseLike<boolean> | boolean;
    try {
      result = this.post(message);
    } catch {
      settle(false);
      return Promise.resolve();
    }
    if (typeof result === 'boolean') {
      settle(result);
      return Promise.resolve();
    }
    return Promise.resolve(result).then(settle, () => settle(false));
  }
}
