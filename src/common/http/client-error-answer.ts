import { ApiException } from '../errors/api.exception';
import { CommonErrors, type ErrorCode } from '../errors/error-code';

/** The error code of each kind of error Node's HTTP layer reports before (or instead of) a request. */
function codeFor(nodeCode: string | undefined): ErrorCode {
  switch (nodeCode) {
    case 'HPE_HEADER_OVERFLOW':
      return CommonErrors.HEADERS_TOO_LARGE;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return CommonErrors.REQUEST_TIMEOUT;
    default:
      return CommonErrors.BAD_REQUEST;
  }
}

/**
 * The answer to a request Node's HTTP parser refused (`HPE_*`) or timed out (`ERR_HTTP_*`): the
 * Error JSON of every other error, 400, 408 or 431.
 */
export function clientErrorAnswer(nodeCode: string | undefined): { status: number; body: string } {
  const exception = new ApiException(codeFor(nodeCode));
  return { status: exception.getStatus(), body: JSON.stringify(exception.toBody()) };
}
