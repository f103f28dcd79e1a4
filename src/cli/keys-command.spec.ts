// The features' scopes and audit actions, as the keys tool loads them (module-declarations.ts)
// before it parses.
import '../orders/order.scopes';
import '../auth/key.audit';
import '../orders/order.audit';
import { CommanderError, InvalidArgumentError } from 'commander';
import { DEFAULT_GRACE_MS } from '../auth/keys.service';
import { type Command, duration, parseCommand, rfc3339 } from './keys-command';

/** What the tool makes of `argv` before the database: the command, or what it printed and its exit code. */
function parse(argv: string[]): { command?: Command; code: number; out: string; err: string } {
  let out = '';
  let err = '';
  const output = {
    writeOut: (text: string) => (out += text),
    writeErr: (text: string) => (err += text),
  };
  try {
    return { command: parseCommand(argv, output, '1.2.3'), code: 0, out, err };
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    return { code: error.exitCode, out, err };
  }
}

/** The error `argv` is refused with (exit code 2, nothing on stdout), and the usage shown after it. */
function refusal(argv: string[]): string {
  const result = parse(argv);
  expect(result).toMatchObject({ code: 2, out: '' });
  expect(result.err).toMatch(/^keys: .+\n(.+\n)?\nUsage: npm run keys -- /);
  return result.err;
}

describe('keys command arguments', () => {
  it('reads create with its options', () => {
    expect(parseCommand(['create', '--plan', 'pro', '--name', 'shop', '--json'])).toEqual({
      name: 'create',
      plan: 'pro',
      label: 'shop',
      limits: undefined,
      json: true,
    });
    expect(
      parseCommand(['create', '--plan', 'enterprise', '--per-minute', '100', '--per-day', '3']),
    ).toMatchObject({
      limits: { perMinute: 100, perDay: 3 },
    });
  });

  it('reads list, revoke and unban', () => {
    expect(parseCommand(['list'])).toEqual({ name: 'list', json: false });
    expect(parseCommand(['revoke', 'abc'])).toEqual({ name: 'revoke', id: 'abc' });
    expect(parseCommand(['unban', 'abc'])).toEqual({ name: 'unban', id: 'abc' });
  });

  it.each([
    [[]],
    [['nope']],
    [['create']],
    [['create', '--plan', 'platinum']],
    [['create', '--plan', 'enterprise', '--per-day', '5']],
    [['create', '--plan', 'enterprise', '--per-minute', '1.5', '--per-day', '5']],
    [['create', '--plan', 'enterprise', '--per-minute', '99999999999', '--per-day', '5']],
    [['create', '--plan', 'free', '--per-minute', '5', '--per-day', '5']],
    [['create', '--plan', 'free', 'extra']],
    [['list', '--plan', 'free']],
    [['show']],
    [['show', 'a', 'b']],
    [['rotate']],
    [['rotate', 'a', '--plan', 'pro']],
    [['create', '--plan', 'free', '--expires-in', '1d', '--expires-at', '2030-01-01T00:00:00Z']],
    [['revoke', 'a', '--grace', '1h']],
    [['revoke']],
    [['revoke', 'a', '--json']],
    [['create', '--plan']],
    [['create', '--unknown']],
  ])('refuses %j', (argv) => {
    refusal(argv);
  });

  it('reads expiry, show and rotate', () => {
    expect(parseCommand(['create', '--plan', 'free', '--expires-in', '90d'])).toMatchObject({
      expiry: { inMs: 90 * 86_400_000 },
    });
    expect(
      parseCommand(['create', '--plan', 'free', '--expires-at', '2027-03-01T01:00:00+01:00']),
    ).toMatchObject({ expiry: { at: new Date('2027-03-01T00:00:00Z') } });
    expect(parseCommand(['show', 'abcd1234', '--json'])).toEqual({
      name: 'show',
      id: 'abcd1234',
      json: true,
    });
    expect(parseCommand(['rotate', 'abcd1234'])).toEqual({
      name: 'rotate',
      id: 'abcd1234',
      graceMs: DEFAULT_GRACE_MS,
      json: false,
    });
    expect(parseCommand(['rotate', 'abcd1234', '--grace', '0'])).toMatchObject({ graceMs: 0 });
    expect(parseCommand(['rotate', 'abcd1234', '--grace', '15m'])).toMatchObject({
      graceMs: 900_000,
    });
  });

  it('prints --help (per command) and --version before anything else, exit code 0', () => {
    const all = parse(['--help']);
    expect(all).toMatchObject({ code: 0, err: '' });
    expect(all.out).toMatch(/^Usage: npm run keys -- <command> \[options\]\n/);
    expect(all.out).toMatch(/^Commands:\n( {2}.+\n)* {2}show <id> +One key in full/m);
    const rotate = parse(['rotate', '-h']);
    expect(rotate).toMatchObject({ code: 0, err: '' });
    expect(rotate.out).toMatch(
      /^Usage: npm run keys -- rotate <id> \[--grace DURATION\] \[--expires-in DURATION\] \[--expires-at TIME\] \[--json\]\n/,
    );
    expect(rotate.out).toMatch(/^ {2}--grace DURATION +How long the old key keeps working/m);
    expect(parse(['create', '--bogus', '--help']).out).toMatch(/^Usage: npm run keys -- create /);
    expect(parse(['help', 'unban']).out).toMatch(/^Usage: npm run keys -- unban <id>\n/);
    expect(parse(['--version'])).toEqual({ code: 0, out: '1.2.3\n', err: '' });
  });

  it('says what is wrong in its own words, with the usage of the command', () => {
    expect(refusal(['list', '--bogus'])).toMatch(
      /^keys: unknown option --bogus\n[^]*\nUsage: npm run keys -- list \[--json\]\n/,
    );
    expect(refusal(['create', '--plan'])).toMatch(
      /^keys: --plan needs a value\n\nUsage: npm run keys -- create --plan PLAN /,
    );
    expect(refusal(['rotate', 'x', '--grace', 'soon'])).toMatch(
      /^keys: --grace must be a number followed by s, m, h or d \(e\.g\. 90d, 24h\); got "soon"\n\nUsage: npm run keys -- rotate <id> /,
    );
    expect(refusal(['create', '--plan', 'enterprise', '--per-day', '5'])).toMatch(
      /^keys: an enterprise key needs both --per-minute N and --per-day N\n\nUsage: npm run keys -- create /,
    );
    const top = refusal(['--nope']);
    expect(top).toMatch(/^keys: unknown option --nope\n/);
    expect(top).toContain('\nCommands:\n');
    expect(refusal([])).toMatch(/^keys: a command is needed\n/);
  });

  it.each([
    '\u001b]0;PWNED\u0007\u001b[31m',
    'a\u0000b',
    'tab\there',
    'two\nlines',
    '\u009b',
    'r\u202eL',
  ])('refuses --name %j: a name holds no control character, with the usage of create', (value) => {
    const error = refusal(['create', '--plan', 'free', '--name', value]);
    expect(error).toMatch(/^keys: --name must not contain control characters/);
    expect(error).toContain('Usage: npm run keys -- create ');
    // eslint-disable-next-line no-control-regex -- the characters under test
    expect(error).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
  });

  it('takes any other name as it is', () => {
    expect(
      parseCommand(['create', '--plan', 'free', '--name', 'Acme – Zürich 東京 \\x1b']),
    ).toMatchObject({ label: 'Acme – Zürich 東京 \\x1b' });
  });

  it('reads --scopes: the scopes features declare, or *, comma-separated', () => {
    expect(parseCommand(['create', '--plan', 'free'])).toMatchObject({ scopes: undefined });
    expect(parseCommand(['create', '--plan', 'free', '--scopes', 'orders:read'])).toMatchObject({
      scopes: ['orders:read'],
    });
    expect(
      parseCommand(['create', '--plan', 'free', '--scopes', 'orders:read, orders:cancel']),
    ).toMatchObject({ scopes: ['orders:read', 'orders:cancel'] });
    expect(parseCommand(['create', '--plan', 'free', '--scopes', '*,keys:admin'])).toMatchObject({
      scopes: ['*', 'keys:admin'],
    });
  });

  it.each([
    ['orders:write', 'unknown scope "orders:write"'],
    ['orders:read,pets:read', 'unknown scope "pets:read"'],
    ['ORDERS:READ', 'unknown scope "ORDERS:READ"'],
    ['', 'at least one scope'],
    [',', 'at least one scope'],
  ])('refuses --scopes %p, naming what is wrong, with the usage of create', (value, message) => {
    const error = refusal(['create', '--plan', 'free', '--scopes', value]);
    expect(error).toMatch(/^keys: --scopes: /);
    expect(error).toContain(message);
    expect(error).toContain('Usage: npm run keys -- create ');
  });

  it('refuses --scopes on any command but create', () => {
    expect(refusal(['rotate', 'abcd', '--scopes', 'orders:read'])).toMatch(
      /^keys: unknown option --scopes\n[^]*\nUsage: npm run keys -- rotate <id> /,
    );
  });

  it("lists the known scopes in create's help, with what each grants", () => {
    const help = parse(['create', '--help']).out;
    expect(help).toContain('--scopes LIST');
    expect(help).toMatch(/^ {2}orders:read +List the orders/m);
    expect(help).toMatch(/^ {2}keys:admin +The admin API/m);
  });

  it.each([
    ['30s', 30_000],
    ['15m', 900_000],
    ['24h', 86_400_000],
    ['90d', 7_776_000_000],
  ])('reads the duration %p', (text, ms) => {
    expect(duration('--x', text, false)).toBe(ms);
  });

  it.each(['90', '0', '0d', '1w', '1.5h', '-1d', ' 1d', '99999999d'])(
    'refuses the expiry duration %p',
    (text) => {
      expect(() => duration('--expires-in', text, false)).toThrow(InvalidArgumentError);
    },
  );

  it.each([
    ['2027-03-01T00:00:00Z', '2027-03-01T00:00:00.000Z'],
    ['2027-03-01t00:00:00z', '2027-03-01T00:00:00.000Z'],
    ['2027-03-01 05:30:00.250+05:30', '2027-03-01T00:00:00.250Z'],
    ['2027-02-28T23:00:00-01:00', '2027-03-01T00:00:00.000Z'],
  ])('reads the RFC 3339 time %p', (text, iso) => {
    expect(rfc3339('--x', text).toISOString()).toBe(iso);
  });

  it.each([
    '2027-03-01T00:00:00',
    '2027-03-01',
    '2027-02-30T00:00:00Z',
    '2027-03-01T24:00:00Z',
    '2027-03-01T00:60:00Z',
    '2027-03-01T00:00:00+0100',
    'tomorrow',
  ])('refuses the time %p', (text) => {
    expect(() => rfc3339('--expires-at', text)).toThrow(InvalidArgumentError);
  });

  describe('audit', () => {
    it('reads the filters, the page size, the cursor and --json', () => {
      expect(parseCommand(['audit'])).toEqual({ name: 'audit', query: {}, json: false });
      expect(
        parseCommand([
          'audit',
          '--action',
          'order.cancelled',
          '--actor',
          'key:abc',
          '--target',
          'order:7',
          '--limit',
          '2',
          '--cursor',
          'YXVkaXQ6NQ',
          '--json',
        ]),
      ).toEqual({
        name: 'audit',
        query: {
          action: 'order.cancelled',
          actor: 'key:abc',
          target: 'order:7',
          limit: 2,
          cursor: 'YXVkaXQ6NQ',
        },
        json: true,
      });
      expect(parseCommand(['audit', '--limit', '1000'])).toMatchObject({ query: { limit: 1000 } });
    });

    it('refuses an unknown action, naming the actions there are', () => {
      expect(refusal(['audit', '--action', 'key.deleted'])).toMatch(
        new RegExp(
          '^keys: --action must be one of key.created, key.rotated, key.revoked, key.unbanned, ' +
            'order.cancelled; got "key.deleted"\n\nUsage: npm run keys -- audit ',
        ),
      );
    });

    it.each([
      [['audit', '--limit', '0']],
      [['audit', '--limit', '1001']],
      [['audit', '--limit', 'ten']],
      [['audit', '--limit', '1.5']],
      [['audit', '--limit']],
      [['audit', '--actor', '']],
      [['audit', '--target', '']],
      [['audit', 'key.created']],
      [['audit', '--plan', 'free']],
      [['list', '--action', 'key.created']],
    ])('refuses %j', (argv) => {
      refusal(argv);
    });
  });
});
