const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const DECIMAL_INTEGER = /^-?[0-9]+$/;
/** Up to 15 digits (and a sign) a JS number holds exactly: no BigInt needed. */
const SAFE_LENGTH = 15;

/**
 * The canonical decimal form of a base-10 int64 (leading zeros dropped, `-0` is `0`), or
 * undefined when `text` is not one. Stays exact over the whole range: never a JS number.
 */
export function parseInt64(text: string): string | undefined {
  if (text.length > 64 || !DECIMAL_INTEGER.test(text)) return undefined;
  // The common case (an id path parameter, on every cancel): `-0` becomes `0` here too.
  if (text.length <= SAFE_LENGTH) return String(Number(text));
  const value = BigInt(text);
  return value >= INT64_MIN && value <= INT64_MAX ? value.toString() : undefined;
}
