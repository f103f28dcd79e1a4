import { InvalidEnvironmentError, validateEnvironment as validateByNamespace } from './environment';

/** Every module's values in one object, as the tests below look them up by variable. */
const validateEnvironment = (env: Record<string, string>): Record<string, unknown> =>
  Object.assign({}, ...Object.values(validateByNamespace(env))) as Record<string, unknown>;

function problemsOf(env: Record<string, string>): string {
  try {
    validateByNamespace(env);
  } catch (error) {
    if (error instanceof InvalidEnvironmentError) return error.message;
    throw error;
  }
  throw new Error('expected the environment to be refused');
}

describe('validateEnvironment', () => {
  it('has the documented defaults', () => {
    expect(validateEnvironment({})).toMatchObject({
      PORT: 3000,
      RATE_LIMIT_BAN_AFTER: 60,
      RATE_LIMIT_BAN_SECONDS: 900,
      LOG_LEVEL: 'info',
      COMPRESSION: 'on',
      DATABASE_URL: undefined,
      HTTP_HEADERS_TIMEOUT_MS: 10000,
      HTTP_REQUEST_TIMEOUT_MS: 30000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 5000,
      HTTP_STALL_TIMEOUT_MS: 30000,
    });
  });

  it('reads numbers and URLs, and treats empty values as unset', () => {
    const env = validateEnvironment({
      PORT: '8080',
      DATABASE_URL: 'postgres://u:p@db:5432/orders',
      REDIS_URL: 'redis://cache:6379',
      PUBLIC_BASE_URL: '',
      TRUST_PROXY: 'loopback, 10.0.0.0/8',
      COMPRESSION: 'off',
    });
    expect(env).toMatchObject({
      COMPRESSION: 'off',
      PORT: 8080,
      DATABASE_URL: 'postgres://u:p@db:5432/orders',
      PUBLIC_BASE_URL: undefined,
    });
  });

  it('listens on every interface unless HOST names one by its IPv4 or IPv6 address', () => {
    expect(validateEnvironment({}).HOST).toBeUndefined();
    expect(validateEnvironment({ HOST: '127.0.0.1' }).HOST).toBe('127.0.0.1');
    expect(validateEnvironment({ HOST: '::' }).HOST).toBe('::');
    expect(problemsOf({ HOST: 'all interfaces' })).toContain('HOST must be an IP address');
    expect(problemsOf({ HOST: '10.0.0.256' })).toContain('HOST must be an IP address');
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://db/orders' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'http://cache' }, 'REDIS_URL'],
    [{ RATE_LIMIT_BAN_AFTER: '0' }, 'RATE_LIMIT_BAN_AFTER'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ COMPRESSION: 'gzip' }, 'COMPRESSION'],
    [{ TRUST_PROXY: 'yes please!' }, 'TRUST_PROXY'],
    [{ HTTP_HEADERS_TIMEOUT_MS: '10' }, 'HTTP_HEADERS_TIMEOUT_MS'],
    [{ HTTP_REQUEST_TIMEOUT_MS: 'soon' }, 'HTTP_REQUEST_TIMEOUT_MS'],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_MS: '-5' }, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'],
    [{ HTTP_STALL_TIMEOUT_MS: '500' }, 'HTTP_STALL_TIMEOUT_MS'],
    [{ HTTP_STALL_TIMEOUT_MS: 'never' }, 'HTTP_STALL_TIMEOUT_MS'],
    [
      { HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '15000' },
      'HTTP_REQUEST_TIMEOUT_MS',
    ],
  ])('refuses %j with a message naming %s', (env, name) => {
    expect(problemsOf(env)).toContain(name);
  });

  it('names every bad variable at once', () => {
    const message = problemsOf({ PORT: 'x', DATABASE_URL: 'y' });
    expect(message).toContain('PORT');
    expect(message).toContain('DATABASE_URL');
  });

  it('ignores variables that are not its own', () => {
    expect(validateEnvironment({ HOME: '/root', PATH: '/bin' })).not.toHaveProperty('HOME');
  });
});
