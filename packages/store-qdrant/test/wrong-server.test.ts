import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemloomError } from '@memloom/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createQdrantStore } from '../src/index.js';

/**
 * A local HTTP server that is not Qdrant (another service on the port given, a proxy in front):
 * `answer` gives the status, content type and body for each path. The store's own client talks to
 * it over HTTP, so the errors are those a user sees.
 */
type Answer = [status: number, type: string, body: string];

let server: Server | undefined;
const requests: string[] = [];

async function serve(answer: (path: string) => Answer): Promise<string> {
  requests.length = 0;
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests.push(`${request.method} ${request.url}`);
      const [status, type, body] = answer(new URL(request.url ?? '/', 'http://x').pathname);
      response.writeHead(status, { 'content-type': type });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

const QDRANT_ROOT: Answer = [200, 'application/json', JSON.stringify({ title: 'qdrant - vector search engine', version: '1.18.0' })];
const NOT_FOUND: Answer = [404, 'text/plain', 'Not Found'];
const SOURCE = 'environment variable QDRANT_URL';

async function openFails(url: string, options: { checkServerVersion?: boolean } = {}): Promise<MemloomError> {
  const store = createQdrantStore({ url, urlSource: SOURCE, retry: { attempts: 1 }, ...options });
  const error = await store.open({ dimension: 8, embedderId: 'test/embedder' }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(MemloomError.isInstance(error)).toBe(true);
  return error as MemloomError;
}

describe('a server that answers 404 (a wrong port, a proxy\'s wrong path)', () => {
  it('fails the version request naming the URL and its source, without the collection hint', { timeout: 10_000 }, async () => {
    const url = await serve(() => NOT_FOUND);
    const error = await openFails(url);
    // Before: "read server version failed (HTTP 404): does collection "memloom" exist? open() creates it: Not Found", no URL.
    expect(error.message).toBe(
      `[memloom] [qdrant] read server version failed (Qdrant at ${url}) (HTTP 404): Qdrant always answers this request, so something else answered it (another server on that port, or a proxy's wrong path); check the URL: Not Found (the Qdrant URL from ${SOURCE})`,
    );
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'qdrant', details: { operation: 'read server version', status: 404, attempts: 1, url, urlSource: SOURCE } });
    expect(requests).toEqual(['GET /']);
  });

  it('without the version check, fails the collection check the same way (Qdrant answers it with a yes or a no)', { timeout: 10_000 }, async () => {
    const url = await serve(() => NOT_FOUND);
    const error = await openFails(url, { checkServerVersion: false });
    expect(error.message).not.toContain('does collection');
    expect(error.message).toContain(`check collection failed (Qdrant at ${url}) (HTTP 404): Qdrant always answers this request`);
    expect(error.details).toMatchObject({ operation: 'check collection', status: 404, url, urlSource: SOURCE });
  });

  it('keeps the collection hint for a request about the collection, with the URL and its source', { timeout: 10_000 }, async () => {
    // Qdrant at the root, the collection gone (deleted after open(), say): its requests answer 404.
    const url = await serve((path) => (path === '/' ? QDRANT_ROOT : NOT_FOUND));
    const store = createQdrantStore({ url, urlSource: SOURCE, retry: { attempts: 1 }, checkServerVersion: false });
    const error = await store.count({}).then(
      () => undefined,
      (caught: unknown) => caught as MemloomError,
    );
    expect(error?.message).toBe(
      `[memloom] [qdrant] count memories failed (Qdrant at ${url}) (HTTP 404): does collection "memloom" exist? open() creates it: Not Found (the Qdrant URL from ${SOURCE})`,
    );
    expect(error?.details).toMatchObject({ operation: 'count memories', status: 404, url, urlSource: SOURCE });
  });
});

describe('a server that answers the version request with something other than Qdrant\'s JSON', () => {
  it('a web page (HTTP 200): "no Qdrant server at <url>", before any other request', { timeout: 10_000 }, async () => {
    const url = await serve(() => [200, 'text/html', '<!doctype html><html><body>Welcome to nginx!</body></html>']);
    const error = await openFails(url);
    // Before: the page passed the version check, then "check collection failed (Qdrant at …): Result came uninitialized".
    expect(error).toMatchObject({ code: 'STORE_ERROR', backend: 'qdrant', details: { operation: 'read server version', url, urlSource: SOURCE } });
    expect(error.message).toBe(
      `[memloom] [qdrant] no Qdrant server at ${url}: the server version request was answered with "<!doctype html><html><body>Welcome to ng…", not Qdrant's JSON; check the URL (its port, or a proxy's path) (the Qdrant URL from ${SOURCE})`,
    );
    expect(requests).toEqual(['GET /']);
  });

  it('JSON without a version (another API on that port)', { timeout: 10_000 }, async () => {
    const url = await serve(() => [200, 'application/json', JSON.stringify({ status: 'ok' })]);
    const error = await openFails(url);
    expect(error).toMatchObject({ code: 'STORE_ERROR', details: { operation: 'read server version', url } });
    expect(error.message).toContain(`no Qdrant server at ${url}: the server version request was answered with JSON without a version, not Qdrant's JSON`);
    expect(requests).toEqual(['GET /']);
  });
});
