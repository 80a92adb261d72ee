import { MemloomError } from '@memloom/core';
import { QdrantClientResourceExhaustedError, QdrantClientTimeoutError, QdrantClientUnexpectedResponseError } from '@qdrant/js-client-rest';
import { describe, expect, it } from 'vitest';
import { createQdrantStore } from '../src/index.js';
import { describeFailure } from '../src/retry.js';
import { httpError, scriptedClient } from './fake-client.js';

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
