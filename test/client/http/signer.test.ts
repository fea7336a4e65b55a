import { afterEach, describe, expect, it } from 'vitest';
import { KnowledgeClient, TimeoutError, UserAbortError, type WalletSigner } from '../../../src/client';
import { failure, localServer, sendJson, type LocalServer } from '../localServer';

let server: LocalServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A wallet whose user never answers its prompt. */
const neverSigns: WalletSigner = { address: 'Wa11et', sign: () => new Promise<Uint8Array>(() => {}) };

describe('a wallet that never signs', () => {
  it('ends the call when the caller aborts, with a UserAbortError, and sends nothing', async () => {
    server = await localServer((_req, res) => sendJson(res, { data: {} }));
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, signer: neverSigns, timeoutMs: Infinity });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const err = await failure(client.credentials.verify('lst_1', { signal: controller.signal }));
    expect(err).toBeInstanceOf(UserAbortError);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(server.hits).toHaveLength(0);
  });

  it('times out after timeoutMs with a TimeoutError, without asking the wallet again', async () => {
    server = await localServer((_req, res) => sendJson(res, { data: {} }));
    let asked = 0;
    const signer: WalletSigner = { ...neverSigns, sign: (m) => (asked++, neverSigns.sign(m)) };
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, signer, timeoutMs: 200 });
    const started = performance.now();
    const err = await failure(client.retrieve({ listingId: 'lst_1', query: 'q' }));
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({
      code: 'timeout',
      message: 'signing POST /v1/retrieve timed out after 200 ms',
    });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(asked).toBe(1);
    expect(server.hits).toHaveLength(0);
  });

  it('gives a slow signature its own timeout, then the request a whole one', async () => {
    server = await localServer((_req, res) => {
      setTimeout(() => sendJson(res, { data: { ok: true } }), 150);
    });
    const slow: WalletSigner = {
      address: 'Wa11et',
      sign: () => new Promise((resolve) => setTimeout(() => resolve(new Uint8Array(64)), 150)),
    };
    const client = new KnowledgeClient({ baseUrl: server.baseUrl, signer: slow, timeoutMs: 250 });
    expect(await client.credentials.verify('lst_1', { maxRetries: 0 })).toEqual({ ok: true });
  });
});
