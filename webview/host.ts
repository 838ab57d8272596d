/**
 * The webview's side of the channel: inside VS Code it is acquireVsCodeApi(); in the standalone report there is
 * no host, so the page answers itself (source links are recorded and announced as a DOM event, and shown as
 * text the reader can copy).
 */
import type { TimelineViewState, WebviewToHost } from '../extension/protocol';

export interface HostBridge {
  readonly standalone: boolean;
  post(message: WebviewToHost): void;
  getState(): TimelineViewState | undefined;
  setState(state: TimelineViewState): void;
}

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

declare global {
  interface Window {
    /** Messages the report page would have sent to an editor (automation and tests read them). */
    flagprofHostMessages?: WebviewToHost[];
  }
}

export function connectHost(): HostBridge {
  if (typeof acquireVsCodeApi === 'function') {
    const api = acquireVsCodeApi();
    return {
      standalone: false,
      post: (message) => api.postMessage(message),
      getState: () => (api.getState() as TimelineViewState | undefined) ?? undefined,
      setState: (state) => api.setState(state),
    };
  }
  let state: TimelineViewState | undefined;
  window.flagprofHostMessages = [];
  return {
    standalone: true,
    post: (message) => {
      window.flagprofHostMessages!.push(message);
      window.dispatchEvent(new CustomEvent('flagprof-host-message', { detail: message }));
    },
    getState: () => state,
    setState: (next) => {
      state = next;
    },
  };
}
