/** Every character of an ASCII `text` percent-encoded, its hex in upper or lower case. */
export function encodeAll(text: string, upper = true): string {
  return Array.from(Buffer.from(text, 'latin1'), (byte) => {
    const hex = byte.toString(16).padStart(2, '0');
    return `%${upper ? hex.toUpperCase() : hex}`;
  }).join('');
}

/**
 * What a reader of a log could make of `text`: percent-decoded as often as it takes, each `%XX`
 * as one character (enough to find anything ASCII, such as a key, however it was encoded).
 */
export function decodedFully(text: string): string {
  let decoded = text;
  for (;;) {
    const next = decoded.replace(/%([0-9a-f]{2})/gi, (_, hex: string) =>
      String.fromCharCode(parseInt(hex, 16)),
    );
    if (next === decoded) return decoded;
    decoded = next;
  }
}
