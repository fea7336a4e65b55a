// The offline model's embedding thread (embeddingThread.ts): embeds documents' chunks while the ingesting
// thread chunks and stages the next ones. It sums over the table of the thread that loaded the model, in
// shared WebAssembly memory (140 MB, never copied), with a scratch area of its own, so its vectors are
// the same as that thread's, bit for bit. TypeScript, started through workerScript.ts (tsx from the
// sources, a bundled .mjs in the Electron build).
import { parentPort } from 'node:worker_threads';
import { GloveSentenceModel, type SharedGloveModel } from './offlineGlove';

/**
 * The first message: the model to attach to. Then one message per batch of texts, joined (one string is
 * copied to this thread at once, rather than one per text) with each text's length.
 */
export type EmbeddingWorkerRequest =
  { model: SharedGloveModel; area: number } | { id: number; text: string; lengths: Int32Array };

/** `ready` once attached; then each batch's vectors back to back (texts × dimensions), or its error. */
export type EmbeddingWorkerReply =
  { ready: true } | { id: number; vectors: Float32Array } | { id: number; error: string };

let model: GloveSentenceModel | undefined;

parentPort?.on('message', (request: EmbeddingWorkerRequest) => {
  const reply = (message: EmbeddingWorkerReply, transfer: ArrayBuffer[] = []) =>
    parentPort!.postMessage(message, transfer);
  if ('model' in request) {
    model = GloveSentenceModel.attach(request.model, request.area);
    reply({ ready: true });
    return;
  }
  try {
    if (!model) throw new Error('the embedding thread has no model yet.');
    const d = model.dimensions;
    const { text, lengths } = request;
    const vectors = new Float32Array(lengths.length * d);
    for (let i = 0, at = 0; i < lengths.length; at += lengths[i]!, i++) {
      vectors.set(model.embed(text.slice(at, at + lengths[i]!)), i * d);
    }
    reply({ id: request.id, vectors }, [vectors.buffer]);
  } catch (error) {
    reply({ id: request.id, error: (error as Error).message });
  }
});
