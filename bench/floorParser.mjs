// Times one format's third-party parser on its files, on a thread of its own as the pipeline's parser
// workers run them (ingestFloor.ts). A thread of its own also because pdfjs's legacy build replaces
// built-ins of the thread that loads it (Array.prototype.push and JSON.stringify among them, with
// slower polyfills): loaded on the benchmark's thread, it made the next suite's JavaScript several
// times slower. Plain JavaScript, as the parser workers are.
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

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
      // The DOCX worker's own call: its options (images skipped unread) and its XML reader in mammoth.
      const { convertDocx } = await import('../src/core/ingest/parsers/docxWorker.mjs');
      return (data) => convertDocx(data);
    }
    case 'pdf': {
      // The PDF worker's own options; the worker module also silences pdfjs's console output.
      const { openPdf } = await import('../src/core/ingest/parsers/pdfWorker.mjs');
      return async (data) => {
        const doc = await openPdf(new Uint8Array(data));
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
