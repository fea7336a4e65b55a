// Converts DOCX files to HTML with mammoth inside a long-lived worker thread (see parserWorkerPool.ts),
// so a Word document is read on the second core while the main thread chunks and embeds the previous
// file. Plain JavaScript on purpose: it must load as it is under node, tsx, vitest and the Electron build.
// docx.ts screens the archive first and turns the HTML into sections.
import { parentPort } from 'node:worker_threads';
import mammoth from 'mammoth';

const MAMMOTH_OPTIONS = {
  // Word's "Title" paragraph style heads the document like a level-1 heading.
  styleMap: ["p[style-name='Title'] => h1:fresh"],
  // Images carry no text: skip them without reading their data (the default inlines them as base64).
  convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })),
};

parentPort.on('message', async ({ id, data }) => {
  try {
    const buffer = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const { value, messages } = await mammoth.convertToHtml({ buffer }, MAMMOTH_OPTIONS);
    parentPort.postMessage({
      id,
      ok: true,
      html: value,
      messages: messages.map((m) => ({ type: m.type, message: m.message })),
    });
  } catch (error) {
    parentPort.postMessage({
      id,
      ok: false,
      name: error?.name ?? 'Error',
      message: String(error?.message ?? error),
    });
  }
});
