import { hasControlCharacter, printable, terminalJson } from './terminal-text';

describe('text for the terminal', () => {
  const hostile = '\u001b]0;PWNED\u0007\u001b[31m';

  it('writes out C0 (NUL, ESC, tab, newline), DEL and C1 controls as \\xNN', () => {
    expect(printable(hostile)).toBe('\\x1b]0;PWNED\\x07\\x1b[31m');
    expect(printable('a\u0000b\tc\nd\u007fe\u0080f\u009bg')).toBe(
      'a\\x00b\\x09c\\x0ad\\x7fe\\x80f\\x9bg',
    );
  });

  it('writes out the bidirectional overrides and isolates as \\uNNNN', () => {
    expect(printable('a\u202eb\u202ac\u2066d\u2069e')).toBe('a\\u202eb\\u202ac\\u2066d\\u2069e');
  });

  it('writes out the bidirectional marks and the line and paragraph separators', () => {
    expect(printable('a\u200fb\u061cc\u200ed\u2028e\u2029f')).toBe(
      'a\\u200fb\\u061cc\\u200ed\\u2028e\\u2029f',
    );
    const json = terminalJson({ name: 'x\u200f\u061c\u2028' });
    expect(json).toBe('{"name":"x\\u200f\\u061c\\u2028"}');
  });

  it('leaves any other text as it is', () => {
    const text = 'Acme shop – Zürich 東京 🛒 \\x1b ~';
    expect(printable(text)).toBe(text);
    expect(hasControlCharacter(text)).toBe(false);
  });

  it.each([
    '\u0000',
    '\t',
    '\n',
    '\u001b',
    '\u007f',
    '\u0085',
    '\u009f',
    '\u202e',
    '\u2067',
    '\u200f',
    '\u2028',
  ])('finds %j', (char) => {
    expect(hasControlCharacter(`name${char}`)).toBe(true);
  });

  it('gives JSON that parses back to the same value, with none of them raw', () => {
    const value = { name: `${hostile}\u007f\u009b\u202e`, plain: 'Zürich' };
    const json = terminalJson(value);
    expect(JSON.parse(json)).toEqual(value);
    // eslint-disable-next-line no-control-regex -- the characters under test
    expect(json).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(json).toContain('\\u001b]0;PWNED\\u0007');
    expect(json).toContain('\\u009b\\u202e');
    expect(terminalJson({ name: 'Zürich', n: 1 })).toBe(JSON.stringify({ name: 'Zürich', n: 1 }));
  });
});
