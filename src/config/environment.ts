import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsIP, IsOptional, IsString, IsUrl, Matches, Max, Min } from 'class-validator';
import {
  declaredSettings,
  InvalidEnvironmentError,
  settingsProblems,
  toInt,
  variablesOf,
} from './settings';

export { InvalidEnvironmentError } from './settings';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The service's own environment variables, with their defaults; a module declares its own in its
 * folder (`defineSettings`). Validated once at boot ({@link validateEnvironment}); a bad value
 * stops the process with a message naming it.
 */
export class EnvironmentVariables {
  @Transform(toInt)
  @IsInt({ message: 'PORT must be an integer between 0 and 65535' })
  @Min(0, { message: 'PORT must be an integer between 0 and 65535' })
  @Max(65535, { message: 'PORT must be an integer between 0 and 65535' })
  PORT: number = 3000;

  /** Address of the interface to listen on; unset, every interface (IPv6 and IPv4). */
  @IsOptional()
  @IsIP(undefined, { message: 'HOST must be an IP address, e.g. 0.0.0.0, :: or 127.0.0.1' })
  HOST?: string;

  @IsOptional()
  @IsUrl(
    { protocols: ['postgres', 'postgresql'], require_tld: false, require_protocol: true },
    { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' },
  )
  DATABASE_URL?: string;

  @IsOptional()
  @IsUrl(
    { protocols: ['redis', 'rediss'], require_tld: false, require_protocol: true },
    { message: 'REDIS_URL must be a redis:// or rediss:// URL' },
  )
  REDIS_URL?: string;

  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_tld: false, require_protocol: true },
    { message: 'PUBLIC_BASE_URL must be an http:// or https:// URL' },
  )
  PUBLIC_BASE_URL?: string;

  @IsOptional()
  @IsUrl(
    { protocols: ['http', 'https'], require_tld: false, require_protocol: true },
    { message: 'STAGING_BASE_URL must be an http:// or https:// URL' },
  )
  STAGING_BASE_URL?: string;

  /** Express's trust-proxy setting: `true`/`false`, a hop count, or addresses/subnets/names. */
  @IsOptional()
  @IsString()
  @Matches(/^(true|false|\d+|[\w.:/-]+(\s*,\s*[\w.:/-]+)*)$/, {
    message:
      'TRUST_PROXY must be true, false, a hop count, or a comma-separated list of addresses, subnets or loopback/linklocal/uniquelocal',
  })
  TRUST_PROXY?: string;

  @Transform(toInt)
  @IsInt({ message: 'RATE_LIMIT_BAN_AFTER must be a positive integer' })
  @Min(1, { message: 'RATE_LIMIT_BAN_AFTER must be a positive integer' })
  RATE_LIMIT_BAN_AFTER: number = 60;

  @Transform(toInt)
  @IsInt({ message: 'RATE_LIMIT_BAN_SECONDS must be a positive integer' })
  @Min(1, { message: 'RATE_LIMIT_BAN_SECONDS must be a positive integer' })
  RATE_LIMIT_BAN_SECONDS: number = 900;

  /**
   * Anonymous clients (IPs) whose counters the in-process limiter keeps at once; the least
   * recently seen go first. Keys' counters are kept apart and never pushed out.
   */
  @Transform(toInt)
  @IsInt({ message: 'RATE_LIMIT_ANONYMOUS_TRACKERS must be a positive integer' })
  @Min(1, { message: 'RATE_LIMIT_ANONYMOUS_TRACKERS must be a positive integer' })
  RATE_LIMIT_ANONYMOUS_TRACKERS: number = 100_000;

  @IsIn(LOG_LEVELS, { message: `LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}` })
  LOG_LEVEL: LogLevel = 'info';

  /**
   * `on`: responses of 1 KiB or more are compressed (gzip, or brotli where asked) for clients that
   * accept it; `off`: never, for a deployment whose proxy compresses.
   */
  @IsIn(['on', 'off'], { message: 'COMPRESSION must be on or off' })
  COMPRESSION: 'on' | 'off' = 'on';

  /** How long a request waits for a database connection before it is answered 503. */
  @Transform(toInt)
  @IsInt({ message: 'DATABASE_CONNECT_TIMEOUT_MS must be an integer of at least 100' })
  @Min(100, { message: 'DATABASE_CONNECT_TIMEOUT_MS must be an integer of at least 100' })
  DATABASE_CONNECT_TIMEOUT_MS: number = 3000;

  /** Server-side limit on any one statement, so a stuck query cannot hold a request forever. */
  @Transform(toInt)
  @IsInt({ message: 'DATABASE_STATEMENT_TIMEOUT_MS must be an integer of at least 100' })
  @Min(100, { message: 'DATABASE_STATEMENT_TIMEOUT_MS must be an integer of at least 100' })
  DATABASE_STATEMENT_TIMEOUT_MS: number = 15000;

  @Transform(toInt)
  @IsInt({ message: 'DATABASE_POOL_SIZE must be an integer between 1 and 200' })
  @Min(1, { message: 'DATABASE_POOL_SIZE must be an integer between 1 and 200' })
  @Max(200, { message: 'DATABASE_POOL_SIZE must be an integer between 1 and 200' })
  DATABASE_POOL_SIZE: number = 10;

  /** Where the embedded PostgreSQL keeps its data when DATABASE_URL is not set. */
  @IsString()
  EMBEDDED_DATABASE_DIR: string = './.data';

  @Transform(toInt)
  @IsInt({ message: 'EMBEDDED_DATABASE_PORT must be an integer between 1 and 65535' })
  @Min(1, { message: 'EMBEDDED_DATABASE_PORT must be an integer between 1 and 65535' })
  @Max(65535, { message: 'EMBEDDED_DATABASE_PORT must be an integer between 1 and 65535' })
  EMBEDDED_DATABASE_PORT: number = 54329;

  /** Port of the Prometheus `/metrics` listener; unset, metrics are not served at all. */
  @IsOptional()
  @Transform(toInt)
  @IsInt({ message: 'METRICS_PORT must be an integer between 0 and 65535' })
  @Min(0, { message: 'METRICS_PORT must be an integer between 0 and 65535' })
  @Max(65535, { message: 'METRICS_PORT must be an integer between 0 and 65535' })
  METRICS_PORT?: number;

  /** After SIGTERM, how long readiness answers 503 before the listener closes (load balancers notice). */
  @Transform(toInt)
  @IsInt({ message: 'SHUTDOWN_DRAIN_DELAY_MS must be a non-negative integer' })
  @Min(0, { message: 'SHUTDOWN_DRAIN_DELAY_MS must be a non-negative integer' })
  SHUTDOWN_DRAIN_DELAY_MS: number = 0;

  /** Hard deadline for the whole shutdown; past it the process exits with status 1. */
  @Transform(toInt)
  @IsInt({ message: 'SHUTDOWN_TIMEOUT_MS must be an integer of at least 1000' })
  @Min(1000, { message: 'SHUTDOWN_TIMEOUT_MS must be an integer of at least 1000' })
  SHUTDOWN_TIMEOUT_MS: number = 25000;

  /** Time a client has to send a request's headers; past it the request is answered 408. */
  @Transform(toInt)
  @IsInt({ message: 'HTTP_HEADERS_TIMEOUT_MS must be an integer of at least 1000' })
  @Min(1000, { message: 'HTTP_HEADERS_TIMEOUT_MS must be an integer of at least 1000' })
  HTTP_HEADERS_TIMEOUT_MS: number = 10000;

  /** Time a client has to send a whole request, body included; past it, 408. */
  @Transform(toInt)
  @IsInt({ message: 'HTTP_REQUEST_TIMEOUT_MS must be an integer of at least 1000' })
  @Min(1000, { message: 'HTTP_REQUEST_TIMEOUT_MS must be an integer of at least 1000' })
  HTTP_REQUEST_TIMEOUT_MS: number = 30000;

  /** How long an idle keep-alive connection is kept open. */
  @Transform(toInt)
  @IsInt({ message: 'HTTP_KEEP_ALIVE_TIMEOUT_MS must be a non-negative integer' })
  @Min(0, { message: 'HTTP_KEEP_ALIVE_TIMEOUT_MS must be a non-negative integer' })
  HTTP_KEEP_ALIVE_TIMEOUT_MS: number = 5000;

  /**
   * How long a streamed response (v1's list) waits for a client that takes none of it before
   * cutting the connection: a client that keeps reading gets the whole list however long it takes.
   */
  @Transform(toInt)
  @IsInt({ message: 'HTTP_STALL_TIMEOUT_MS must be an integer of at least 1000' })
  @Min(1000, { message: 'HTTP_STALL_TIMEOUT_MS must be an integer of at least 1000' })
  HTTP_STALL_TIMEOUT_MS: number = 30000;
}

/** The service's own variables and every declared module's (`defineSettings`): no list kept by hand. */
export function environmentVariableNames(): string[] {
  return [EnvironmentVariables, ...declaredSettings().map((d) => d.schema)].flatMap(variablesOf);
}

/**
 * Validates the service's variables and every declared module's at once (each problem naming
 * its variable), before anything starts. Everything else in the environment is ignored.
 */
export function validateEnvironment(env: Record<string, unknown>): EnvironmentVariables {
  const { settings: config, problems } = settingsProblems(EnvironmentVariables, env);
  for (const { schema } of declaredSettings())
    problems.push(...settingsProblems(schema, env).problems);
  if (problems.length > 0) throw new InvalidEnvironmentError(problems);
  // The headers are part of the request: Node checks both from the request's first byte.
  if (config.HTTP_REQUEST_TIMEOUT_MS < config.HTTP_HEADERS_TIMEOUT_MS) {
    throw new InvalidEnvironmentError([
      'HTTP_REQUEST_TIMEOUT_MS must be at least HTTP_HEADERS_TIMEOUT_MS',
    ]);
  }
  return config;
}
