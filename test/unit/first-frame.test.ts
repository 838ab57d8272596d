/** The status line's first frame, counted from the user's action (webview/firstFrame.ts). */
import { describe, expect, it } from 'vitest';
import { firstFrameAccount, wholeAfterPartAccount } from '../../webview/firstFrame';

describe('firstFrameAccount', () => {
  it('counts from the opening on the host, with each step: read, analysis, payload and page, transfer, drawing', () => {
    const opened = { atMs: 10_000, readMs: 450, analysisMs: 80 };
    // Posted at 10.9 s (so 370 ms went to the payload and the page's start), arrived at 11.2 s, drawn by 11.35 s.
    const account = firstFrameAccount(opened, { atMs: 11_200, sentAtMs: 10_900 }, 100, 11_350);
    expect(account.sinceOpenedMs).toBe(1350);
    expect(account.text).toBe(
      'First frame in 1.4 s from opening (read 450 ms · analysis 80 ms · payload and page 370 ms · transfer 300 ms · drawing 150 ms)',
    );
  });

  it('says how much of the read was the native parser, where it read the trace', () => {
    const opened = { atMs: 10_000, readMs: 450, analysisMs: 80, parseMs: 120 };
    const account = firstFrameAccount(opened, { atMs: 11_200, sentAtMs: 10_900 }, 100, 11_350);
    expect(account.text).toBe(
      'First frame in 1.4 s from opening (read 450 ms, 120 ms of it native parsing · analysis 80 ms · payload and page 370 ms · transfer 300 ms · drawing 150 ms)',
    );
  });

  it("leaves the transfer out where the host's clock and the page's disagree, and says the figure is a floor", () => {
    const opened = { atMs: 50_000, readMs: 2000, analysisMs: 500 };
    const account = firstFrameAccount(opened, { atMs: 40_000, sentAtMs: 53_000 }, 120, 40_200);
    expect(account.sinceOpenedMs).toBe(2700);
    expect(account.text).toBe(
      'First frame in at least 2.7 s from opening (read 2.0 s · analysis 500 ms · drawing 200 ms)',
    );
  });

  it("a standalone report counts from the page's opening; a payload from nowhere says only its drawing", () => {
    const report = firstFrameAccount(undefined, undefined, 97, 0, 1099);
    expect(report).toEqual({
      text: 'First frame in 1.1 s from opening the page (drawing 97 ms)',
      sinceOpenedMs: 1099,
    });
    expect(firstFrameAccount(undefined, { atMs: 5 }, 42.4, 50).text).toBe('First frame in 42 ms');
  });

  it('a whole trace after its partial frame says when it came, and that the first frame came earlier', () => {
    const whole = firstFrameAccount(
      { atMs: 0, readMs: 6300, analysisMs: 1300 },
      { atMs: 15_000 },
      600,
      15_600,
    );
    expect(wholeAfterPartAccount(whole.text, 2100)).toBe(
      'Whole trace in at least 8.2 s from opening (read 6.3 s · analysis 1.3 s · drawing 600 ms) · first frame at 2.1 s',
    );
  });
});
