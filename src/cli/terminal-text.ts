/**
 * Text from the database (a key's name, an audit actor) printed on an operator's terminal. A name
 * set over the admin API or by SQL may hold characters a terminal acts on instead of showing: C0
 * controls (ESC starts an escape sequence: a new window title, colours, cursor moves), DEL, the C1
 * controls U+0080-U+009F (U+009B is CSI to some terminals, even encoded in UTF-8), the
 * bidirectional overrides, isolates and marks (U+061C, U+200E, U+200F), which reorder the rest of
 * the line, and the line and paragraph separators U+2028 and U+2029, which break it.
 */
const CONTROL =
  '\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const CONTROL_CHARACTER = new RegExp(`[${CONTROL}]`);
const CONTROL_CHARACTERS = new RegExp(`[${CONTROL}]`, 'g');
/** Those JSON.stringify leaves as they are: it escapes C0 only. */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const hex = (char: string, digits: number): string =>
  char.charCodeAt(0).toString(16).padStart(digits, '0');

export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text);
}

/** `text` with each such character written out, `\x1b` or `\u202e`, as visible text. */
export function printable(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (char) =>
    char.charCodeAt(0) < 0x100 ? `\\x${hex(char, 2)}` : `\\u${hex(char, 4)}`,
  );
}

/**
 * `value` as JSON, every such character as its `\uXXXX` escape: the same JSON to a parser (the
 * characters are only ever inside strings), and nothing a terminal acts on.
 */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value).replace(RAW_IN_JSON, (char) => `\\u${hex(char, 4)}`);
}
