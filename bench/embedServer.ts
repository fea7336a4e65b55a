import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeEmbedServer {
  url: string;
  /** Environment that points a `kbstudio serve` at this server for the Cohere and OpenAI models. */
  environment: Record<string, string>;
  close(): Promise<void>;
}

/**
 * Answers Cohere's `POST /v2/embed` and OpenAI's `POST /v1/embeddings` on loopback with the benchmark's
 * pre-computed query vectors (by text), so a server can be queried over HTTP with the same vectors the
 * in-process runs use. Its own cost is measured apart (`embedRoundTripMs`).
 */
export async function startFakeEmbedServer(vectors: Map<string, Float32Array>): Promise<FakeEmbedServer> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      const parsed = JSON.parse(body || '{}') as { texts?: string[]; input?: string[] | string };
      const texts =
        parsed.texts ?? (typeof parsed.input === 'string' ? [parsed.input] : (parsed.input ?? []));
      const found = texts.map((t) => vectors.get(t));
      if (found.some((v) => !v)) {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ message: 'unknown benchmark query' }));
        return;
      }
      const arrays = found.map((v) => Array.from(v!));
      const answer =
        req.url === '/v2/embed'
          ? { id: 'bench', embeddings: { float: arrays }, texts, response_type: 'embeddings_by_type' }
          : {
              object: 'list',
              data: arrays.map((embedding, index) => ({ object: 'embedding', index, embedding })),
              model: 'bench',
              usage: { prompt_tokens: texts.length, total_tokens: texts.length },
            };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    environment: {
      COHERE_API_KEY: 'bench',
      COHERE_BASE_URL: url,
      OPENAI_API_KEY: 'bench',
      OPENAI_BASE_URL: `${url}/v1`,
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
