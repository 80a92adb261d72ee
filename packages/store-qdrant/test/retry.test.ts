import { MemloomError } from '@memloom/core';
import { QdrantClientResourceExhaustedError, QdrantClientTimeoutError, QdrantClientUnexpectedResponseError } from '@qdrant/js-client-rest';
import { describe, expect, it, vi } from 'vitest';
import { createQdrantStore } from '../src/index.js';
import { describeFailure } from '../src/retry.js';
import { httpError, metaPoint, scriptedClient } from './fake-client.js';

function failing(failures: unknown[], then: unknown = { count: 7 }) {
  let call = 0;
  const sleeps: number[] = [];
  const fake = scriptedClient({
    count: () => {
      const failure = failures[call++];
      if (failure !== undefined) throw failure;
      return then;
    },
  });
  const store = createQdrantStore({
    client: fake.client,
    retry: { attempts: 4, initialDelayMs: 100, maxDelayMs: 250, sleep: async (ms) => void sleeps.push(ms), random: () => 0.999 },
  });
  return { store, fake, sleeps, calls: () => call };
}

async function caught(promise: Promise<unknown>): Promise<MemloomError> {
  try {
    await promise;
  } catch (error) {
    expect(MemloomError.isInstance(error)).toBe(true);
    return error as MemloomError;
  }
  throw new Error('expected a failure');
}

function networkError(code: string) {
  return Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });
}

describe('retries', () => {
  it('retry 5xx with capped exponential backoff and then succeed', async () => {
    const { store, sleeps, calls } = failing([httpError(503), httpError(502)]);
    expect(await store.count({})).toBe(7);
    expect(calls()).toBe(3);
    expect(sleeps).toEqual([99, 199]);
  });

  it('retry timeouts, 429 (honouring retry-after) and dropped connections', async () => {
    const busy = new QdrantClientResourceExhaustedError('busy', '2');
    const { store, sleeps, calls } = failing([new QdrantClientTimeoutError('timed out'), busy, networkError('ECONNRESET')]);
    expect(await store.count({})).toBe(7);
    expect(calls()).toBe(4);
    expect(sleeps[1]).toBe(2000);
  });

  it('never retry a client error (4xx) and name Qdrant, the operation and the server message', async () => {
    const { store, sleeps, calls } = failing([httpError(400, 'Bad request: Index required but not found for "metadata.topic"')]);
    const error = await caught(store.count({}));
    expect(calls()).toBe(1);
    expect(sleeps).toEqual([]);
    expect(error.code).toBe('STORE_ERROR');
    expect(error.backend).toBe('qdrant');
    expect(error.message).toBe('[memloom] [qdrant] count memories failed (HTTP 400): Bad request: Index required but not found for "metadata.topic"');
    expect(error.details).toMatchObject({ operation: 'count memories', status: 400, attempts: 1, collection: 'memloom' });
  });

  it('give up after the configured attempts with the last failure as cause', async () => {
    const last = httpError(500, 'Service internal error');
    const { store, calls } = failing([httpError(500), httpError(500), httpError(500), last]);
    const error = await caught(store.count({}));
    expect(calls()).toBe(4);
    expect(error.code).toBe('STORE_ERROR');
    expect(error.message).toContain('after 4 tries');
    expect(error.cause).toBe(last);
  });

  it('a timeout that outlasts every try is TIMEOUT', async () => {
    const timeouts = Array.from({ length: 4 }, () => new QdrantClientTimeoutError('The operation was aborted'));
    const error = await caught(failing(timeouts).store.count({}));
    expect(error.code).toBe('TIMEOUT');
  });

  it('an unauthorized request hints at the API key', async () => {
    const error = await caught(failing([httpError(403, 'Forbidden')]).store.count({}));
    expect(error.message).toContain('check apiKey');
  });
});

describe('failure classification', () => {
  it('reads the status out of an unexpected-response error', () => {
    const error = QdrantClientUnexpectedResponseError.forResponse({ status: 503, statusText: 'Service Unavailable', data: null, headers: new Headers(), url: '', ok: false });
    expect(describeFailure(error)).toMatchObject({ status: 503, transient: true });
  });

  it('treats unknown errors as permanent', () => {
    expect(describeFailure(new Error('boom')).transient).toBe(false);
    expect(describeFailure(networkError('ERR_INVALID_URL')).transient).toBe(false);
    expect(describeFailure(networkError('UND_ERR_SOCKET')).transient).toBe(true);
    expect(describeFailure(httpError(404)).transient).toBe(false);
    expect(describeFailure(httpError(409)).transient).toBe(false);
  });
});

describe('an unreachable server', () => {
  it('is named in the error, with the URL it tried (no HTTP status came back)', async () => {
    const store = createQdrantStore({ url: 'http://127.0.0.1:9', retry: { attempts: 1 } });
    const error = await caught(store.open({ dimension: 8, embedderId: 'test/vectors' }));
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'qdrant' });
    expect(error.message).toContain('(Qdrant at http://127.0.0.1:9)');
  });
});

describe('open() against a server that takes connections but never answers', () => {
  const OPEN = { dimension: 8, embedderId: 'test/embedder' };
  const timedOut = () => new QdrantClientTimeoutError('The operation was aborted');

  function opening(handlers: Parameters<typeof scriptedClient>[0], options: { checkServerVersion?: boolean } = {}) {
    const sleeps: number[] = [];
    const fake = scriptedClient(handlers);
    const store = createQdrantStore({ client: fake.client, ...options, retry: { sleep: async (ms) => void sleeps.push(ms), random: () => 0.5 } });
    return { store, fake, sleeps };
  }

  it('fails at its first request that times out, without trying it again (one timeout, not retry.attempts of them)', async () => {
    const { store, fake, sleeps } = opening({ versionInfo: () => Promise.reject(timedOut()) });
    const error = await caught(store.open(OPEN));
    // Before: 4 tries (each a full timeoutMs against a real server), 3 sleeps between them.
    expect(fake.methods()).toEqual(['versionInfo']);
    expect(sleeps).toEqual([]);
    expect(error).toMatchObject({ code: 'TIMEOUT', backend: 'qdrant', details: { operation: 'read server version', attempts: 1 } });
    // A client given ready-made has its own URL and timeout.
    expect(error.message).toBe("[memloom] [qdrant] read server version failed: no answer within the given client's timeout: The operation was aborted");
  });

  it('without the server version check, the check for the collection is that first request', async () => {
    const { store, fake, sleeps } = opening({ collectionExists: () => Promise.reject(timedOut()) }, { checkServerVersion: false });
    const error = await caught(store.open(OPEN));
    expect(fake.methods()).toEqual(['collectionExists']);
    expect(sleeps).toEqual([]);
    expect(error).toMatchObject({ code: 'TIMEOUT', details: { operation: 'check collection', attempts: 1 } });
  });

  it('still retries its other transient failures (a server starting up), and later requests\' timeouts', async () => {
    let versionCalls = 0;
    let countCalls = 0;
    const { store, sleeps } = opening({
      versionInfo: () => (++versionCalls < 3 ? Promise.reject(versionCalls === 1 ? networkError('ECONNREFUSED') : httpError(503)) : { title: 'qdrant', version: '1.18.0' }),
      retrieve: () => [metaPoint('test/embedder')],
      count: () => (++countCalls === 1 ? Promise.reject(timedOut()) : { count: 7 }),
    });
    await store.open(OPEN);
    expect(versionCalls).toBe(3);
    expect(await store.count({})).toBe(7);
    expect(countCalls).toBe(2);
    expect(sleeps).toHaveLength(3);
  });

  it('retries a timeout that is not its own client giving up: an HTTP 408 or 504 (a proxy), a connect timeout', async () => {
    const answered = { title: 'qdrant', version: '1.18.0' };
    for (const failure of [() => httpError(408), () => httpError(504), () => networkError('UND_ERR_CONNECT_TIMEOUT'), () => networkError('ETIMEDOUT')]) {
      let versionCalls = 0;
      const { store, sleeps } = opening({
        versionInfo: () => (++versionCalls === 1 ? Promise.reject(failure()) : answered),
        retrieve: () => [metaPoint('test/embedder')],
      });
      // Before: TIMEOUT at the first failure, not tried again.
      await store.open(OPEN);
      expect(versionCalls).toBe(2);
      expect(sleeps).toHaveLength(1);
    }
  });

  it('gives only its first request no second try: the collection check after the version, or after creating it, is retried', async () => {
    let checks = 0;
    let reads = 0;
    const { store, fake } = opening({
      versionInfo: () => ({ title: 'qdrant', version: '1.18.0' }),
      // Missing, then (after the create) a timeout, then there.
      collectionExists: () => (++checks === 1 ? { exists: false } : checks === 2 ? Promise.reject(timedOut()) : { exists: true }),
      retrieve: () => (++reads === 1 ? [] : [metaPoint('test/embedder')]),
    });
    // Before: TIMEOUT "check collection failed", the re-read after the create not tried again.
    await store.open(OPEN);
    expect(fake.methods().slice(0, 5)).toEqual(['versionInfo', 'collectionExists', 'createCollection', 'collectionExists', 'collectionExists']);

    let existing = 0;
    const slow = opening({
      collectionExists: () => (++existing === 1 ? Promise.reject(timedOut()) : { exists: true }),
      retrieve: () => [metaPoint('test/embedder')],
    });
    await slow.store.open(OPEN);
    expect(existing).toBe(2);
  });

  it('says "no answer within timeoutMs" only when its own client gave up, not for a connect timeout', async () => {
    const at = 'http://127.0.0.1:9';
    const abort = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    const connect = networkError('UND_ERR_CONNECT_TIMEOUT');
    const results: MemloomError[] = [];
    for (const failure of [abort, connect]) {
      vi.stubGlobal('fetch', async () => {
        throw failure;
      });
      try {
        const store = createQdrantStore({ url: at, timeoutMs: 1_000, retry: { attempts: 2, sleep: async () => undefined } });
        results.push(await caught(store.open(OPEN)));
      } finally {
        vi.unstubAllGlobals();
      }
    }
    const [unanswered, refused] = results as [MemloomError, MemloomError];
    expect(unanswered).toMatchObject({ code: 'TIMEOUT', details: { operation: 'read server version', attempts: 1, timeoutMs: 1_000 } });
    expect(unanswered.message).toContain(`(Qdrant at ${at}): no answer within 1000 ms`);
    // Before: "no answer within 1000 ms", details.timeoutMs, and not tried again.
    expect(refused).toMatchObject({ code: 'TIMEOUT', details: { operation: 'read server version', attempts: 2 } });
    expect(refused.details).not.toHaveProperty('timeoutMs');
    expect(refused.message).toBe(`[memloom] [qdrant] read server version failed (Qdrant at ${at}) after 2 tries: fetch failed (UND_ERR_CONNECT_TIMEOUT)`);
  });
});
