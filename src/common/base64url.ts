/** base64url (no padding) of a text's UTF-8. */
export const toBase64url = (text: string): string => Buffer.from(text).toString('base64url');

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * The text (UTF-8) a base64url string encodes, or undefined if it has a character base64url has
 * not. Decoding still forgives stray bits: whoever checks a token it wrote encodes it back.
 */
export const fromBase64url = (encoded: string): string | undefined =>
  BASE64URL.test(encoded) ? Buffer.from(encoded, 'base64url').toString() : undefined;
