/** Script nonces for the webviews' Content-Security-Policy. */
import { randomBytes } from 'node:crypto';

/**
 * A fresh nonce per page: 128 bits from the system's cryptographic random source, base64 (the CSP nonce grammar).
 * A guessable nonce would let script injected into the page run despite the policy.
 */
export function webviewNonce(): string {
  return randomBytes(16).toString('base64');
}
