// Failures the API server reports (metav1.Status) and the checks callers make on them
// (k8s.io/apimachinery/pkg/api/errors).

export interface StatusCause {
  /** The cause type (Go's StatusCause.Type, `reason` on the wire), e.g. NamespaceTerminating. */
  reason?: string;
  message?: string;
  field?: string;
}

export interface Status {
  apiVersion?: string;
  kind?: string;
  status?: 'Success' | 'Failure';
  code?: number;
  reason?: string;
  message?: string;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
}

const reasonByCode: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** A failure reported by the API server (an HTTP error or a watch ERROR event) as a metav1.Status. */
export class StatusError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly status: Status;

  constructor(status: Status, httpCode?: number) {
    const code = status.code ?? httpCode ?? 0;
    const reason = status.reason || reasonByCode[code] || 'Unknown';
    super(status.message || `${reason} (HTTP ${code})`);
    this.name = 'StatusError';
    this.code = code;
    this.reason = reason;
    this.status = status;
  }

  /** Builds the error from a response body, which is a Status unless something in between answered. */
  static fromResponse(httpCode: number, body: string): StatusError {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    if (isStatus(parsed)) return new StatusError(parsed, httpCode);
    const text = body.trim().slice(0, 1024);
    return new StatusError({ kind: 'Status', status: 'Failure', code: httpCode, message: text || undefined }, httpCode);
  }
}

function isStatus(v: unknown): v is Status {
  return typeof v === 'object' && v !== null && (v as Status).kind === 'Status';
}

function hasReason(err: unknown, reason: string): boolean {
  return err instanceof StatusError && err.reason === reason;
}

export function isNotFound(err: unknown): boolean {
  return hasReason(err, 'NotFound');
}
/** The call's result, or undefined when the object is already gone (deletes and patches racing a delete). */
export async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
export function isAlreadyExists(err: unknown): boolean {
  return hasReason(err, 'AlreadyExists');
}
export function isConflict(err: unknown): boolean {
  return hasReason(err, 'Conflict');
}
/** The requested resourceVersion or continue token is too old: the caller must relist. */
export function isGone(err: unknown): boolean {
  return err instanceof StatusError && (err.code === 410 || err.reason === 'Gone' || err.reason === 'Expired');
}
export function isInvalid(err: unknown): boolean {
  return hasReason(err, 'Invalid');
}
export function isForbidden(err: unknown): boolean {
  return hasReason(err, 'Forbidden');
}
/**
 * The API server refused to create an object because its namespace is being deleted (403 with a
 * NamespaceTerminating cause): nothing more can be created there, so callers stop quietly instead
 * of retrying (upstream: apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause)).
 */
export function isNamespaceTerminating(err: unknown): boolean {
  return err instanceof StatusError && (err.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');
}
export function isTooManyRequests(err: unknown): boolean {
  return err instanceof StatusError && (err.reason === 'TooManyRequests' || err.code === 429);
}
