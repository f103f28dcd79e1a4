// A feature's scopes, as the keys tool loads them (scope-declarations.ts) before it parses.
import '../orders/order.scopes';
import {
  DEFAULT_GRACE_MS,
  duration,
  parseCommand,
  rfc3339,
  UsageError,
  usageOf,
} from './keys-command';

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
    expect(() => parseCommand(argv)).toThrow(UsageError);
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

  it('reads --help (per command) and --version before anything else', () => {
    expect(parseCommand(['--help'])).toEqual({ name: 'help', command: undefined });
    expect(parseCommand(['rotate', '-h'])).toEqual({ name: 'help', command: 'rotate' });
    expect(parseCommand(['create', '--bogus', '--help'])).toEqual({
      name: 'help',
      command: 'create',
    });
    expect(parseCommand(['--version'])).toEqual({ name: 'version' });
  });

  it('says what is wrong in its own words, naming the command whose usage to show', () => {
    const error = (argv: string[]): UsageError => {
      try {
        parseCommand(argv);
      } catch (e) {
        if (e instanceof UsageError) return e;
      }
      throw new Error('no UsageError');
    };
    expect(error(['list', '--bogus'])).toMatchObject({
      message: 'unknown option --bogus',
      command: 'list',
    });
    expect(error(['create', '--plan'])).toMatchObject({
      message: '--plan needs a value',
      command: 'create',
    });
    expect(error(['rotate', 'x', '--grace', 'soon'])).toMatchObject({ command: 'rotate' });
    expect(error(['--nope'])).toMatchObject({ command: undefined });
  });

  it.each([
    '\u001b]0;PWNED\u0007\u001b[31m',
    'a\u0000b',
    'tab\there',
    'two\nlines',
    '\u009b',
    'r\u202eL',
  ])('refuses --name %j: a name holds no control character, with the usage of create', (value) => {
    let error: unknown;
    try {
      parseCommand(['create', '--plan', 'free', '--name', value]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ command: 'create' });
    expect((error as UsageError).message).toMatch(/^--name must not contain control characters/);
    // eslint-disable-next-line no-control-regex -- the characters under test
    expect((error as UsageError).message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
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
    let error: unknown;
    try {
      parseCommand(['create', '--plan', 'free', '--scopes', value]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ command: 'create' });
    expect((error as UsageError).message).toContain(message);
  });

  it('refuses --scopes on any command but create', () => {
    expect(() => parseCommand(['rotate', 'abcd', '--scopes', 'orders:read'])).toThrow(
      'rotate does not take --scopes',
    );
  });

  it("lists the known scopes in create's help, with what each grants", () => {
    const help = usageOf('create');
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
      expect(() => duration('--expires-in', text, false)).toThrow(UsageError);
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
    expect(() => rfc3339('--expires-at', text)).toThrow(UsageError);
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
      expect(() => parseCommand(['audit', '--action', 'key.deleted'])).toThrow(
        new UsageError(
          '--action must be one of key.created, key.rotated, key.revoked, key.unbanned, ' +
            'order.cancelled; got "key.deleted"',
          'audit',
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
      expect(() => parseCommand(argv)).toThrow(UsageError);
    });
  });
});
