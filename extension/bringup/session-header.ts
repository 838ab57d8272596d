/** The bring-up view's session header (mode, tracer and why, library, API version). */
export interface SessionHeader {
  mode: string;
  modeReason: string;
  /** The vendor tracer chosen and why. */
  tracer: string;
  tracerReason: string;
  library: string;
  apiVersion: string;
  device: string;
  torch: string;
  python: string;
  exitCode: number | undefined;
}
