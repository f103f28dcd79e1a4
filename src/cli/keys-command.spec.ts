import { parseCommand, UsageError } from './keys-command';

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
    [['revoke']],
    [['revoke', 'a', '--json']],
    [['create', '--plan']],
    [['create', '--unknown']],
  ])('refuses %j', (argv) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
  });
});
