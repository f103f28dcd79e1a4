import { MAX_TRIES, type RetryOptions } from './retry.js';

/** The longest timeout a timer takes (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
/** The longest wait between tries: a day, well within a timer's reach with its jitter. */
const MAX_WAIT_SECONDS = 86_400;

const OPTIONS = ['baseUrl', 'apiKey', 'adminBaseUrl', 'retry', 'timeout', 'fetch'];
const RETRY_OPTIONS = ['maxTries', 'maxWaitSeconds'];

const refuse = (message: string): never => {
  throw new TypeError(`store-orders-client: ${message}`);
};

const shown = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : String(value);

function checkNames(object: object, known: string[], where: string): void {
  const unknown = Object.keys(object).find((name) => !known.includes(name));
  if (unknown !== undefined) {
    refuse(`unknown option ${where}${unknown}: the options are ${known.join(', ')}`);
  }
}

function checkUrl(value: unknown, name: string): void {
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    refuse(`${name} must be an absolute http:// or https:// URL; got ${shown(value)}`);
  }
}

/** A number in `[min, max]`, a whole one if `whole`: NaN and Infinity are never one. */
function checkNumber(value: unknown, name: string, min: number, max: number, whole: boolean) {
  const fits =
    typeof value === 'number' &&
    (whole ? Number.isInteger(value) : Number.isFinite(value)) &&
    value >= min &&
    value <= max;
  if (!fits) {
    refuse(
      `${name} must be a ${whole ? 'whole ' : ''}number from ${min} to ${max}; got ${shown(value)}`,
    );
  }
}

function checkRetry(retry: unknown): void {
  if (retry === undefined || retry === false) return;
  if (typeof retry !== 'object' || retry === null || Array.isArray(retry)) {
    refuse(`retry must be false or an object such as { maxTries: 3 }; got ${shown(retry)}`);
    return;
  }
  checkNames(retry, RETRY_OPTIONS, 'retry.');
  const { maxTries, maxWaitSeconds } = retry as RetryOptions;
  if (maxTries !== undefined) checkNumber(maxTries, 'retry.maxTries', 1, MAX_TRIES, true);
  if (maxWaitSeconds !== undefined) {
    checkNumber(maxWaitSeconds, 'retry.maxWaitSeconds', 0, MAX_WAIT_SECONDS, false);
  }
}

/**
 * Refuses options the client cannot work with, naming the option: an unknown one (a typo would
 * be ignored), a URL that is not one, a missing key, a number that is no number (NaN, Infinity)
 * or out of its range. Checked once, when the client is made.
 */
export function checkOptions(options: unknown): void {
  if (typeof options !== 'object' || options === null) {
    refuse('the options must be an object with baseUrl and apiKey');
    return;
  }
  checkNames(options, OPTIONS, '');
  const { baseUrl, apiKey, adminBaseUrl, retry, timeout, fetch } = options as Record<
    string,
    unknown
  >;
  checkUrl(baseUrl, 'baseUrl');
  if (adminBaseUrl !== undefined) checkUrl(adminBaseUrl, 'adminBaseUrl');
  if (typeof apiKey !== 'string' || apiKey === '') refuse('apiKey must be a non-empty string');
  checkRetry(retry);
  if (timeout !== undefined) checkNumber(timeout, 'timeout', 1, MAX_TIMEOUT_MS, true);
  if (fetch !== undefined && typeof fetch !== 'function') refuse('fetch must be a function');
}
