// Reads PDFs with pdfjs inside a worker thread, so a large or hostile file can be timed out and its memory
// released by terminating the thread. Plain JavaScript on purpose: it must load as it is under node, tsx and
// vitest. It only extracts; pdfText.ts turns the items into text and pdf.ts decides what to refuse.
import { createRequire } from 'node:module';
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import { getDocument, OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';

// pdfjs inflates Flate and Brotli streams with the web DecompressionStream where there is one, and with its
// own JavaScript decoders where there is not (it runs in browsers without it). Node backs DecompressionStream
// with zlib handles, and terminating this thread (a file past its time limit, a cancelled ingestion) while
// one is being set up aborts the whole process (node_zlib.cc: "close before init"; seen once in CI, in
// pdf.test.ts). Without it, no zlib handle is ever made here, and the fixtures' pages are read about
// 30% faster (medians of 7 in a worker: 242-272 ms against 361-383 ms; small streams cost a turn each).
delete globalThis.DecompressionStream;

// pdfjs reports damaged objects on the console; the outcome is reported through the result instead. (Piping
// the worker's stdout instead would keep the process alive while the worker idles.)
for (const method of ['log', 'info', 'warn', 'error', 'debug']) console[method] = () => undefined;

const IMAGE_OPS = new Set(
  [
    OPS.paintImageXObject,
    OPS.paintImageXObjectRepeat,
    OPS.paintInlineImageXObject,
    OPS.paintInlineImageXObjectGroup,
    OPS.paintImageMaskXObject,
    OPS.paintImageMaskXObjectGroup,
    OPS.paintImageMaskXObjectRepeat,
  ].filter((op) => op !== undefined),
);

const pdfjsRoot = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
// pdfjs reads these with fs in Node: plain paths, with the trailing slash it insists on.
const assetUrl = (folder) => path.join(pdfjsRoot, folder) + '/';

/**
 * Opens a PDF as this worker reads it (also timed alone by bench/floorParser.mjs).
 * @param {Uint8Array} data
 */
export function openPdf(data) {
  return getDocument({
    data,
    // CMaps are needed to map CJK fonts' character codes to Unicode; standard fonts give glyph widths.
    cMapUrl: assetUrl('cmaps'),
    cMapPacked: true,
    standardFontDataUrl: assetUrl('standard_fonts'),
    wasmUrl: assetUrl('wasm'),
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    verbosity: 0,
  }).promise;
}

/** @param {{ data: Uint8Array, lowTextChars: number }} input */
async function extract({ data, lowTextChars }) {
  const doc = await openPdf(data);
  try {
    const { info, metadata } = await doc.getMetadata().catch(() => ({ info: {}, metadata: null }));
    const pages = [];
    for (let number = 1; number <= doc.numPages; number++) {
      pages.push(await readPage(doc, number, lowTextChars));
    }
    // The document info dictionary first, then XMP metadata (some producers only write that).
    const title = infoString(info?.Title) ?? infoString(metadata?.get('dc:title'));
    const author = infoString(info?.Author) ?? infoString(metadata?.get('dc:creator'));
    return { title, author, pages };
  } finally {
    await doc.destroy();
  }
}

async function readPage(doc, number, lowTextChars) {
  try {
    const page = await doc.getPage(number);
    const content = await page.getTextContent();
    const items = [];
    let chars = 0;
    for (const item of content.items) {
      if (!('str' in item)) continue;
      const [a, b, c, d, e, f] = item.transform;
      // Position in the text's own direction, so rotated text lines up like horizontal text.
      const angle = Math.atan2(b, a);
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      const size = Math.hypot(c, d);
      items.push([
        item.str,
        item.hasEOL,
        e * cos + f * sin,
        f * cos - e * sin,
        item.width,
        item.height || size,
        Math.round(angle * 100),
      ]);
      chars += item.str.replace(/\s/g, '').length;
    }
    // Operator lists are costly (they load images): only look for images on pages with little text.
    let images = 0;
    let imageCover = 0;
    if (chars < lowTextChars) {
      ({ images, imageCover } = imagesOf(await page.getOperatorList(), page.view));
    }
    page.cleanup();
    return { items, chars, images, imageCover };
  } catch (error) {
    return { items: [], chars: 0, images: 0, imageCover: 0, error: String(error?.message ?? error) };
  }
}

/**
 * The images a page paints, and the share of the page they cover (their areas summed, at most 1): a scan
 * is one image, or strips of one, over the whole page; a logo or a chart beside a caption is not. An
 * image is drawn in the unit square under the current transformation matrix, so its area is that
 * matrix's determinant, followed here through save/restore, transform and form XObjects.
 */
function imagesOf({ fnArray, argsArray }, view) {
  const pageArea = Math.abs((view[2] - view[0]) * (view[3] - view[1]));
  let matrix = [1, 0, 0, 1, 0, 0];
  const saved = [];
  let images = 0;
  let area = 0;
  for (let i = 0; i < fnArray.length; i++) {
    const fn = fnArray[i];
    const args = argsArray[i];
    if (fn === OPS.save || fn === OPS.paintFormXObjectBegin) {
      saved.push(matrix);
      if (fn === OPS.paintFormXObjectBegin && Array.isArray(args?.[0])) matrix = multiply(args[0], matrix);
    } else if (fn === OPS.restore || fn === OPS.paintFormXObjectEnd) {
      matrix = saved.pop() ?? matrix;
    } else if (fn === OPS.transform && Array.isArray(args)) {
      matrix = multiply(args, matrix);
    } else if (IMAGE_OPS.has(fn)) {
      images++;
      // Repeats and groups draw the image several times; their positions are not followed, one counts.
      area += Math.abs(matrix[0] * matrix[3] - matrix[1] * matrix[2]);
    }
  }
  return { images, imageCover: pageArea > 0 ? Math.min(1, area / pageArea) : 0 };
}

/** The matrix `m` applied, then `n` (PDF's row-vector convention: m × n). */
function multiply(m, n) {
  return [
    m[0] * n[0] + m[1] * n[2],
    m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2],
    m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4],
    m[4] * n[1] + m[5] * n[3] + n[5],
  ];
}

function infoString(value) {
  const text = Array.isArray(value) ? value.join(', ') : value;
  return typeof text === 'string' && text.trim() ? text.trim() : undefined;
}

// Long-lived: the pool (parserWorkerPool.ts) sends one file at a time and reuses the thread, so pdfjs loads
// once instead of once per file. Each reply carries the id of its request.
parentPort.on('message', async ({ id, data, lowTextChars }) => {
  try {
    parentPort.postMessage({ id, ok: true, ...(await extract({ data, lowTextChars })) });
  } catch (error) {
    parentPort.postMessage({
      id,
      ok: false,
      name: error?.name ?? 'Error',
      message: String(error?.message ?? error),
    });
  }
});
