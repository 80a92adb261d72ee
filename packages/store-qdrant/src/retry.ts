import { MemloomError } from '@memloom/core';

export interface RetryPolicy {
  attempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  random?: (() => number) | undefined;
}

/** What a failed request tells us. */
export interface FailureFacts {
  /** HTTP status when the server answered. */
  status: number | undefined;
  /** Worth another try: timeouts, 429, 5xx, dropped connections. */
  transient: boolean;
  /** A timeout of any kind (the client's, an HTTP 408 or 504, a connect timeout): the error is `TIMEOUT`. */
  timeout: boolean;
  /** The client's own timer fired: no answer within its timeout. Not an HTTP 408 or 504, nor a connect timeout. */
  unanswered: boolean;
  /** Seconds the server asked us to wait (429 with retry-after). */
  retryAfterSeconds: number | undefined;
  /** The server's own words, when it gave any. */
  detail: string;
}

/** What a request does, when it writes: a write refused with HTTP 403 is marked `readonly: true`. */
export interface CallKind {
  write?: boolean;
  /** false: a request the client gave up on (`unanswered`) is not tried again. @default true */
  retryTimeout?: boolean;
  /**
   * true: Qdrant answers this request whatever collections it holds (the server version, whether a
   * collection exists), so an HTTP 404 means something else answered (another server on that port, a
   * proxy's wrong path), not that the collection is missing.
   */
  notFoundMeansNotQdrant?: boolean;
}

/** The kind of every request that writes (an upsert, a delete, a payload or vector change, a collection or index made). */
export const WRITE: CallKind = { write: true };

/**
 * `open()`'s first request (the server version, or whether the collection exists when the version is
 * not checked): one the client gave up on is not tried again, so a server that takes connections but
 * never answers fails the open in one `timeoutMs`, not `retry.attempts` of them. Other transient
 * failures (a refused connection or a connect timeout, a 503 of a server starting up, an HTTP 408 or
 * 504 of a proxy) are retried as everywhere.
 */
export const FIRST_CONTACT: CallKind = { retryTimeout: false };

/** Where the requests go: named in every request error. */
export interface CallTarget {
  collection: string;
  /** The URL of the store's own client; undefined for a client given ready-made (it has its own). */
  url?: string | undefined;
  /** Where `url` came from (the `urlSource` option), named at the end of the message. */
  urlSource?: string | undefined;
  /** The per-request timeout of the store's own client (`timeoutMs`); undefined for a client given ready-made. */
  timeoutMs?: number | undefined;
}

export type QdrantCall = <T>(operation: string, request: () => Promise<T>, kind?: CallKind) => Promise<T>;

/**
 * Wrap every request: retry transient failures with exponential backoff and
 * full jitter, never retry client errors (4xx), and turn whatever is left into
 * a MemloomError that names Qdrant and the operation.
 */
export function createCaller(policy: RetryPolicy, target: CallTarget): QdrantCall {
  const sleep = policy.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = policy.random ?? Math.random;
  return async <T>(operation: string, request: () => Promise<T>, kind: CallKind = {}): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await request();
      } catch (error) {
        if (MemloomError.isInstance(error)) throw error;
        const facts = describeFailure(error);
        const retried = facts.transient && attempt < policy.attempts && !(facts.unanswered && kind.retryTimeout === false);
        if (!retried) throw toStoreError(operation, target, error, facts, attempt, kind);
        const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (attempt - 1));
        const asked = facts.retryAfterSeconds !== undefined ? facts.retryAfterSeconds * 1000 : 0;
        await sleep(Math.max(asked, Math.floor(random() * ceiling)));
      }
    }
  };
}

/**
 * A write (one called with `WRITE`) the server refused with HTTP 403: the API key is known but may
 * only read, or writes are locked on the server. A read's 403 is not one.
 */
export function isForbiddenWrite(error: unknown): boolean {
  return MemloomError.isInstance(error) && error.details.readonly === true;
}

/** Run a write: false when the key may not write (`isForbiddenWrite`); any other failure, a read's 403 too, is thrown. */
export async function writtenUnlessForbidden(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (error) {
    if (isForbiddenWrite(error)) return false;
    throw error;
  }
}

const TRANSIENT_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** Classify an error thrown by `@qdrant/js-client-rest` (or by fetch underneath it). */
export function describeFailure(error: unknown): FailureFacts {
  const value = error as { name?: unknown; status?: unknown; message?: unknown; data?: unknown; retry_after?: unknown; code?: unknown; cause?: unknown };
  const name = typeof value?.name === 'string' ? value.name : '';
  const message = typeof value?.message === 'string' ? value.message : String(error);
  if (name === 'QdrantClientTimeoutError' || name === 'AbortError' || name === 'TimeoutError') {
    return { status: undefined, transient: true, timeout: true, unanswered: true, retryAfterSeconds: undefined, detail: message || 'request timed out' };
  }
  if (name === 'QdrantClientResourceExhaustedError') {
    // The client reads only the first character of retry-after ("12" gives 1): a lower bound at best.
    const seconds = typeof value.retry_after === 'number' && Number.isFinite(value.retry_after) ? value.retry_after : undefined;
    return { status: 429, transient: true, timeout: false, unanswered: false, retryAfterSeconds: seconds, detail: message };
  }
  // A 429 whose retry-after the client could not read (an HTTP date): it throws this in place of
  // the 429, without the response, so the store cannot read the header either.
  if (/^Invalid retryAfter value: /.test(message)) {
    return { status: 429, transient: true, timeout: false, unanswered: false, retryAfterSeconds: undefined, detail: `rate limited (${message})` };
  }
  let status = typeof value?.status === 'number' ? value.status : undefined;
  // QdrantClientUnexpectedResponseError carries the status only in its message.
  if (status === undefined && name === 'QdrantClientUnexpectedResponseError') {
    const found = /Unexpected Response: (\d{3})/.exec(message);
    if (found) status = Number(found[1]);
  }
  if (status !== undefined) {
    const transient = status === 408 || status === 429 || status >= 500;
    return { status, transient, timeout: status === 408 || status === 504, unanswered: false, retryAfterSeconds: undefined, detail: serverDetail(value.data) ?? message };
  }
  const code = networkCode(error);
  if (code !== undefined) {
    return { status: undefined, transient: TRANSIENT_CODES.has(code), timeout: code.includes('TIMEOUT') || code === 'ETIMEDOUT', unanswered: false, retryAfterSeconds: undefined, detail: `${message} (${code})` };
  }
  // fetch reports a dropped connection as a bare TypeError("fetch failed").
  if (name === 'TypeError' && /fetch failed|network/i.test(message)) {
    return { status: undefined, transient: true, timeout: false, unanswered: false, retryAfterSeconds: undefined, detail: message };
  }
  return { status: undefined, transient: false, timeout: false, unanswered: false, retryAfterSeconds: undefined, detail: message };
}

/**
 * Where `url` came from, for every error about where requests go: the message's closing
 * `(the Qdrant URL from …)` (empty without a url or urlSource) and the details naming url and urlSource.
 */
export function urlOrigin({ url, urlSource }: Pick<CallTarget, 'url' | 'urlSource'>): { from: string; details: { url?: string; urlSource?: string } } {
  const from = url !== undefined && urlSource ? ` (the Qdrant URL from ${urlSource})` : '';
  return { from, details: { ...(url === undefined ? {} : { url }), ...(from ? { urlSource } : {}) } };
}

/**
 * A write refused with 403 (a read-only key, writes locked on the server) is `readonly: true`, as
 * SQLite and Markdown mark a write to a file or folder they may not write. Every error names the URL
 * of the store's own client and where it came from: an answer (a 404 of another server on that port,
 * a proxy's) may come from the wrong place as much as a refused connection.
 */
function toStoreError(operation: string, target: CallTarget, error: unknown, facts: FailureFacts, attempts: number, kind: CallKind): MemloomError {
  const { collection, url, timeoutMs } = target;
  const readonly = kind.write === true && facts.status === 403;
  const tries = attempts > 1 ? ` after ${attempts} tries` : '';
  const where = url ? ` (Qdrant at ${url})` : '';
  const { from, details: origin } = urlOrigin(target);
  const status = facts.status !== undefined ? ` (HTTP ${facts.status})` : '';
  // No answer in time (the client gave up, not an HTTP 408 or 504 or a connect timeout): say how long it waited, and what sets that.
  const { unanswered } = facts;
  const hint = readonly
    ? ': this API key may only read, or writes are locked on the server; check apiKey'
    : facts.status === 401 || facts.status === 403
      ? ': check apiKey'
      : facts.status === 404
        ? kind.notFoundMeansNotQdrant
          ? ': Qdrant always answers this request, so something else answered it (another server on that port, or a proxy\'s wrong path); check the URL'
          : `: does collection "${collection}" exist? open() creates it`
        : unanswered
          ? timeoutMs !== undefined
            ? `: no answer within ${timeoutMs} ms; check that Qdrant runs there and is not stuck, or give a slow server more time with the timeoutMs option`
            : ": no answer within the given client's timeout"
          : '';
  return new MemloomError({
    code: facts.timeout ? 'TIMEOUT' : 'STORE_ERROR',
    backend: 'qdrant',
    message: `${operation} failed${where}${status}${tries}${hint}: ${facts.detail}${from}`,
    cause: error,
    details: {
      operation,
      collection,
      attempts,
      ...(facts.status !== undefined ? { status: facts.status } : {}),
      ...(readonly ? { readonly: true } : {}),
      ...(unanswered && timeoutMs !== undefined ? { timeoutMs } : {}),
      ...origin,
    },
  });
}

function serverDetail(data: unknown): string | undefined {
  const error = (data as { status?: { error?: unknown } } | undefined)?.status?.error;
  return typeof error === 'string' ? error : undefined;
}

function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
