import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Router } from 'express';
import { v1Router } from '../../src/server/routes/v1';
import { startStudio, type TestStudio, json } from '../helpers/studio';

let studio: TestStudio;
beforeAll(async () => {
  studio = await startStudio();
});
afterAll(() => studio.close());

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Every method + path the /v1 router really answers, found by walking Express's router stacks. */
function routesOf(router: Router): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        // A route of several paths is middleware for them (the retrieval rate limit), beside their own.
        for (const path of [layer.route.path].flat()) {
          for (const method of Object.keys(layer.route.methods)) {
            found.push(`${method.toUpperCase()} /v1${path.replace(/:(\w+)/g, '{$1}')}`);
          }
        }
      } else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((router as unknown as { stack: Layer[] }).stack);
  return [...new Set(found)].sort();
}

describe('GET /v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document served without a key', async () => {
    const res = await studio.api('/v1/openapi.json');
    expect(res.status).toBe(200);
    const doc = await json(res);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.Listing.properties).toHaveProperty('accessModel');
    expect(doc.components.schemas.Error.properties.error.properties).toHaveProperty('requestId');
  });

  it('describes exactly the endpoints that exist', async () => {
    const doc = await await json(await studio.api('/v1/openapi.json'));
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    const served = routesOf(v1Router({ services: studio.services, studioToken: 'x', version: 'test' }));
    expect(served.length).toBeGreaterThan(2);
    expect(documented).toEqual(served);
  });

  it('documents parameters and error responses from the validation schemas', async () => {
    const doc = await await json(await studio.api('/v1/openapi.json'));
    const search = doc.paths['/v1/listings'].get;
    const names = search.parameters.map((p: { name: string }) => p.name).sort();
    expect(names).toEqual(
      ['accessModel', 'domain', 'limit', 'maxPrice', 'minRating', 'offset', 'q', 'sort'].sort(),
    );
    const limit = search.parameters.find((p: { name: string }) => p.name === 'limit');
    expect(limit.schema).toMatchObject({ maximum: 100, minimum: 1, default: 20 });
    expect(Object.keys(search.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
    expect(Object.keys(doc.paths['/v1/listings/{id}'].get.responses)).toContain('404');
    // Every route reading a JSON body answers 413 past its limit; one reading none does not.
    for (const path of ['/v1/retrieve', '/v1/retrieve/stream']) {
      expect(Object.keys(doc.paths[path].post.responses), path).toContain('413');
    }
    expect(Object.keys(search.responses)).not.toContain('413');
  });

  it('documents the X-RateLimit-* headers on every response, Retry-After where it is sent, and 431 and 408 everywhere', async () => {
    const doc = await json(await studio.api('/v1/openapi.json'));
    const rate = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'X-Request-Id'];
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const where = `${method.toUpperCase()} ${path}`;
        // Node refuses a request line or headers over 16 KB before any route, whatever the path.
        expect(op.responses['431'], where).toMatchObject({
          content: { 'application/json': expect.anything() },
        });
        // ... and a request whose headers or body do not arrive in time.
        expect(op.responses['408'], where).toMatchObject({
          content: { 'application/json': expect.anything() },
        });
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          checked++;
          expect(Object.keys(response.headers ?? {}), `${where} ${status}`).toEqual(
            expect.arrayContaining(rate),
          );
        }
        expect(op.responses['429'].headers['Retry-After'], where).toMatchObject({
          required: true,
          schema: { type: 'string' },
        });
        // Sent on a 500 only when the database was busy.
        expect(op.responses['500'].headers['Retry-After'], where).toBeDefined();
        expect(op.responses['500'].headers['Retry-After'].required, where).not.toBe(true);
        expect(op.responses['400'].headers, where).not.toHaveProperty('Retry-After');
      }
    }
    expect(checked).toBeGreaterThan(30);
  });

  it('documents the upload form, its 422 refusals and that it takes an API key, not a wallet signature', async () => {
    const upload = (await json(await studio.api('/v1/openapi.json'))).paths['/v1/upload'].post;
    const form = upload.requestBody.content['multipart/form-data'].schema;
    expect(Object.keys(form.properties).sort()).toEqual(['config', 'files']);
    expect(form.properties.files).toMatchObject({ type: 'string', format: 'binary' });
    expect(Object.keys(upload.responses)).toEqual(expect.arrayContaining(['202', '413', '415', '422']));
    expect(upload.security).toEqual([{ bearerAuth: [] }]);
  });
});
