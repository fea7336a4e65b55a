// Times one format's third-party parser on its files, on a thread of its own as the pipeline's parser
// workers run them (ingestFloor.ts). A thread of its own also because pdfjs's legacy build replaces
// built-ins of the thread that loads it (Array.prototype.push and JSON.stringify among them, with
// slower polyfills): loaded on the benchmark's thread, it made the next suite's JavaScript several
// times slower. Plain JavaScript, as the parser workers are.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';

const require = createRequire(import.meta.url);

/** Each format's library, called as the pipeline calls it, with nothing around it. */
async function parserFor(format) {
  switch (format) {
    case 'csv': {
      const { parse } = await import('csv-parse/sync');
      const options = { relax_column_count: true, relax_quotes: true, skip_empty_lines: true };
      return (data) => parse(data.toString('utf8'), options);
    }
    case 'json':
      return (data) => JSON.parse(data.toString('utf8'));
    case 'markdown': {
      // markdown-it's tokens: the cheaper of the pipeline's two Markdown readers.
      const { default: MarkdownIt } = await import('markdown-it');
      const markdownIt = new MarkdownIt();
      return (data) => markdownIt.parse(data.toString('utf8'), {});
    }
    case 'html': {
      const { parse } = await import('parse5');
      return (data) => parse(data.toString('utf8'));
    }
    case 'docx': {
      // The DOCX worker's module puts its XML reader into mammoth, as the pipeline runs it.
      await import('../src/core/ingest/parsers/docxWorker.mjs');
      const { default: mammoth } = await import('mammoth');
      return (data) => mammoth.convertToHtml({ buffer: data });
    }
    case 'pdf': {
      const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs');
      const root = path.dirname(require.resolve('pdfjs-dist/package.json'));
      const asset = (folder) => path.join(root, folder) + '/';
      for (const method of ['log', 'info', 'warn', 'error', 'debug']) console[method] = () => undefined;
      return async (data) => {
        const doc = await getDocument({
          data: new Uint8Array(data),
          cMapUrl: asset('cmaps'),
          cMapPacked: true,
          standardFontDataUrl: asset('standard_fonts'),
          wasmUrl: asset('wasm'),
          isEvalSupported: false,
          useSystemFonts: false,
          disableFontFace: true,
          verbosity: 0,
        }).promise;
        try {
          for (let page = 1; page <= doc.numPages; page++) await (await doc.getPage(page)).getTextContent();
        } finally {
          await doc.destroy();
        }
      };
    }
    default:
      throw new Error(`no parser for ${format}`);
  }
}

async function run({ format, paths, rounds }) {
  const parse = await parserFor(format);
  const files = paths.map((p) => readFileSync(p));
  // One untimed pass: the library's code compiled and its caches warm, as in a running studio.
  for (const data of files) await parse(data);
  const times = [];
  for (let r = 0; r < rounds; r++) {
    const started = performance.now();
    for (const data of files) await parse(data);
    times.push(performance.now() - started);
  }
  return times;
}

run(workerData).then(
  (times) => parentPort.postMessage({ times }),
  (error) => parentPort.postMessage({ error: String(error?.stack ?? error) }),
);
