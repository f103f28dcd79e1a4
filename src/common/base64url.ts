/*
 * Cursors are encoded with btoa/atob, never with Buffer#toString('base64url'). Buffer#toString is
 * one function for the whole process: once it has been called with two encodings, its call to
 * the encoding's decoder is polymorphic in every optimised caller, and pg decodes each column
 * of each row through it (UTF-8), which then goes through V8's generic call path (measured with
 * valgrind, see docs/performance.md). A cursor's text is ASCII (numbers, ids as digit strings,
 * ISO dates, base64url digests), which is what btoa takes.
 */

/** base64url (no padding) of an ASCII text. */
export const toBase64url = (ascii: string): string =>
  btoa(ascii).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');

/** The text a base64url string encodes, or undefined if it is not base64(url) at all. */
export function fromBase64url(encoded: string): string | undefined {
  try {
    return atob(encoded.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return undefined;
  }
}
