import { MemloomError, TOKENIZER_VERSION } from '@memloom/core';
import { record } from '@memloom/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createQdrantStore } from '../src/index.js';
import { toMemoryPayload } from '../src/payload.js';
import { META_POINT_ID, memoryPointId } from '../src/point-ids.js';
import { collectionInfo, metaPoint } from './fake-client.js';

/**
 * The store's own QdrantClient (from `@qdrant/js-client-rest`), with `fetch` replaced: the
 * client builds each request URL and turns each answer into an error itself, so these tests
 * see what a server (or a proxy in front of it) would be sent and how its answers reach the store.
 */
function fakeFetch(answers: Array<() => Response> = []) {
  const urls: string[] = [];
  vi.stubGlobal('fetch', async (url: string) => {
    urls.push(url);
    const answer = answers[urls.length - 1];
    return answer ? answer() : json({ result: { count: 3 }, status: 'ok', time: 0 });
  });
  return urls;
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the URL the store connects to', () => {
  const cases: Array<[string, string]> = [
    // Behind a reverse proxy: the path is kept, and the proxy's port is the scheme's.
    ['https://example.com/qdrant', 'https://example.com/qdrant/collections/memloom/points/count'],
    ['https://example.com/qdrant/', 'https://example.com/qdrant/collections/memloom/points/count'],
    ['http://proxy.internal:8080/db/qdrant', 'http://proxy.internal:8080/db/qdrant/collections/memloom/points/count'],
    ['https://example.com:443/qdrant', 'https://example.com:443/qdrant/collections/memloom/points/count'],
    // A port written in the URL is used, even the scheme's own (URL parsing reports that as none).
    ['https://q.example.com:443', 'https://q.example.com:443/collections/memloom/points/count'],
    // Without a path or a port, Qdrant's own port, as QdrantClient does.
    ['http://localhost:6333', 'http://localhost:6333/collections/memloom/points/count'],
    ['http://qdrant', 'http://qdrant:6333/collections/memloom/points/count'],
  ];
  for (const [url, requested] of cases) {
    it(`${url} asks ${requested}`, async () => {
      const urls = fakeFetch();
      expect(await createQdrantStore({ url, retry: { attempts: 1 } }).count({})).toBe(3);
      expect(urls).toEqual([requested]);
    });
  }
});

describe('a 429 answer through the real client', () => {
  const busy = (retryAfter: string) => () => json({ status: { error: 'Rate limiting exceeded' }, time: 0 }, 429, { 'retry-after': retryAfter });

  it('is retried when its retry-after is an HTTP date (the client fails to read it and throws a plain error)', async () => {
    const urls = fakeFetch([busy('Wed, 21 Oct 2015 07:28:00 GMT')]);
    const sleeps: number[] = [];
    const store = createQdrantStore({ url: 'http://localhost:6333', retry: { sleep: async (ms) => void sleeps.push(ms), random: () => 0.5 } });
    expect(await store.count({})).toBe(3);
    expect(urls).toHaveLength(2);
    // No wait the store can know of: the usual backoff.
    expect(sleeps).toEqual([50]);
  });

  it('waits at least the seconds the client read, which are only the first digit of retry-after (a client limitation)', async () => {
    fakeFetch([busy('12')]);
    const sleeps: number[] = [];
    const store = createQdrantStore({ url: 'http://localhost:6333', retry: { sleep: async (ms) => void sleeps.push(ms), random: () => 0 } });
    expect(await store.count({})).toBe(3);
    expect(sleeps).toEqual([1000]);
  });
});

describe('mustExist through the real client', () => {
  it('a missing collection is MISSING_RESOURCE naming it and the URL; only reads are sent', async () => {
    const requests: string[] = [];
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      const path = new URL(url).pathname;
      requests.push(`${init?.method ?? 'GET'} ${path}`);
      if (path === '/') return json({ title: 'qdrant - vector search engine', version: '1.18.0' });
      if (path === '/collections/teem/exists') return json({ result: { exists: false }, status: 'ok', time: 0 });
      return json({ status: { error: 'refused by the test' }, time: 0 }, 400);
    });
    const store = createQdrantStore({ url: 'http://qdrant.internal:6333', collection: 'teem', mustExist: true, retry: { attempts: 1 } });
    const error = await store.open({ dimension: 8, embedderId: 'test/embedder' }).then(
      () => undefined,
      (caught: unknown) => caught as MemloomError,
    );
    expect(MemloomError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'MISSING_RESOURCE', details: { collection: 'teem', url: 'http://qdrant.internal:6333', mustExist: true } });
    expect(error?.message).toBe(
      '[memloom] [qdrant] no store at http://qdrant.internal:6333: the collection "teem" does not exist, and nothing was created (mustExist). Check the collection name and the URL, or create the store by opening it without mustExist',
    );
    expect(requests).toContain('GET /collections/teem/exists');
    expect(requests.filter((request) => !request.startsWith('GET '))).toEqual([]);
  });

  it('names where the URL came from (urlSource) in a missing collection, a server not reached and an answer', async () => {
    vi.stubGlobal('fetch', async (url: string) => {
      const { pathname, port } = new URL(url);
      if (port === '1') throw Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
      if (pathname === '/') return json({ title: 'qdrant - vector search engine', version: '1.18.0' });
      if (pathname === '/collections/teem/exists') return json({ result: { exists: false }, status: 'ok', time: 0 });
      return json({ status: { error: 'refused by the test' }, time: 0 }, 400);
    });
    const open = (options: Parameters<typeof createQdrantStore>[0]) =>
      createQdrantStore({ collection: 'teem', retry: { attempts: 1 }, urlSource: 'environment variable QDRANT_URL', ...options })
        .open({ dimension: 8, embedderId: 'test/embedder' })
        .then(
          () => undefined,
          (caught: unknown) => caught as MemloomError,
        );
    const missing = await open({ url: 'http://qdrant.internal:6333', mustExist: true });
    expect(missing).toMatchObject({ code: 'MISSING_RESOURCE', details: { url: 'http://qdrant.internal:6333', urlSource: 'environment variable QDRANT_URL' } });
    expect(missing?.message).toMatch(/\(mustExist\)\. .* \(the Qdrant URL from environment variable QDRANT_URL\)$/u);
    const unreached = await open({ url: 'http://127.0.0.1:1' });
    expect(unreached).toMatchObject({ code: 'STORE_ERROR', details: { urlSource: 'environment variable QDRANT_URL' } });
    expect(unreached?.message).toContain('(Qdrant at http://127.0.0.1:1)');
    expect(unreached?.message).toMatch(/\(the Qdrant URL from environment variable QDRANT_URL\)$/u);
    // The server answered (400 on the create): an answer may come from the wrong server too (a 404 of a proxy), so it is named.
    const answered = await open({ url: 'http://qdrant.internal:6333' });
    expect(answered).toMatchObject({ code: 'STORE_ERROR', details: { status: 400, url: 'http://qdrant.internal:6333', urlSource: 'environment variable QDRANT_URL' } });
    expect(answered?.message).toContain('create collection failed (Qdrant at http://qdrant.internal:6333) (HTTP 400)');
    expect(answered?.message).toMatch(/\(the Qdrant URL from environment variable QDRANT_URL\)$/u);
  });
});

describe('the keyword rebuild through the real client', () => {
  it('sends its condition on the write read: a batch update keeps update_filter (QdrantClient.updateVectors drops it)', async () => {
    const point = { id: memoryPointId('m1'), payload: { ...toMemoryPayload(record({ id: 'm1', content: 'I moved to Lisbon' }), 'write-1') } };
    const answers: Record<string, unknown> = {
      '/': { title: 'qdrant - vector search engine', version: '1.18.0' },
      '/collections/memloom/exists': { result: { exists: true } },
      '/collections/memloom': { result: collectionInfo() },
      '/collections/memloom/points': { result: [metaPoint('test/embedder', 1, 2)] },
      '/collections/memloom/points/count': { result: { count: 1 } },
      '/collections/memloom/points/scroll': { result: { points: [point], next_page_offset: null } },
    };
    const writes: Array<{ request: string; body: any }> = [];
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      const { pathname, search } = new URL(url);
      if (pathname in answers) return json({ status: 'ok', time: 0, ...(answers[pathname] as object) });
      writes.push({ request: `${init?.method} ${pathname}${search}`, body: JSON.parse(String(init?.body)) });
      return json({ result: pathname.endsWith('/batch') ? [{ operation_id: 1, status: 'completed' }] : { operation_id: 1, status: 'completed' }, status: 'ok', time: 0 });
    });
    await createQdrantStore({ url: 'http://localhost:6333', retry: { attempts: 1 } }).open({ dimension: 8, embedderId: 'test/embedder' });
    const writesOfPoints = writes.filter((write) => !write.request.startsWith('PUT /collections/memloom/index'));
    expect(writesOfPoints.map((write) => write.request)).toEqual([
      'POST /collections/memloom/points/batch?wait=true&ordering=strong',
      'POST /collections/memloom/points/payload?wait=true&ordering=strong',
    ]);
    expect(writesOfPoints[0]?.body.operations[0].update_vectors.update_filter).toEqual({ must: [{ key: 'writeId', match: { any: ['write-1'] } }] });
    expect(writesOfPoints[1]?.body).toMatchObject({ points: [META_POINT_ID], payload: { tokenizerVersion: TOKENIZER_VERSION } });
  });
});

describe('a server that takes connections but never answers, through the real client', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fails open() after one timeoutMs (the client\'s timer, on a fake clock), naming the URL, the wait and the option', { timeout: 10_000 }, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const urls: string[] = [];
    // Never answers: only the client's timeout (an abort) ends the request.
    vi.stubGlobal('fetch', (url: string, init: RequestInit) => {
      urls.push(url);
      return new Promise((_resolve, reject) => {
        init.signal?.addEventListener('abort', () => reject(Object.assign(new Error('This operation was aborted'), { name: 'AbortError' })));
      });
    });
    const sleeps: number[] = [];
    const store = createQdrantStore({ url: 'http://10.0.0.5:6333', timeoutMs: 5_000, retry: { sleep: async (ms) => void sleeps.push(ms) } });
    const failed = store.open({ dimension: 8, embedderId: 'test/embedder' }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    // Time enough for every try the retry policy allows (4), were they made.
    await vi.advanceTimersByTimeAsync(4 * 5_000);
    const error = (await failed) as MemloomError;
    // Before: 4 requests, each waited out (about 2 minutes at the default 30 s).
    expect(urls).toEqual(['http://10.0.0.5:6333/']);
    expect(sleeps).toEqual([]);
    expect(MemloomError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'TIMEOUT', backend: 'qdrant', details: { operation: 'read server version', attempts: 1, timeoutMs: 5_000 } });
    expect(error.message).toBe(
      '[memloom] [qdrant] read server version failed (Qdrant at http://10.0.0.5:6333): no answer within 5000 ms; check that Qdrant runs there and is not stuck, or give a slow server more time with the timeoutMs option: This operation was aborted',
    );
  });
});
