/**
 * One text item of a page as pdfWorker.mjs sends it: [text, hasEOL, x, y, width, height, direction].
 * x and y are in the text's own direction (rotated text is turned back to horizontal); direction is the
 * rotation angle in hundredths of a radian, so items of different directions never share a line.
 */
export type PdfTextItem = [
  str: string,
  hasEOL: boolean,
  x: number,
  y: number,
  width: number,
  height: number,
  dir: number,
];

// Characters pdfjs emits for glyphs without a Unicode mapping (icons, bullets in symbol fonts).
// eslint-disable-next-line no-control-regex -- removing control characters is the point
const CONTROL_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f\ufffe\uffff]/g;

/**
 * Joins a page's text items in content order: a space where the gap between two items on a line is wider
 * than a hair (kerning), a newline where pdfjs marks an end of line or the baseline moves, a blank line where
 * the vertical gap is wider than about one and a half lines (a paragraph break) or the text jumps up (a new
 * column).
 */
export function pageText(items: readonly PdfTextItem[]): string {
  let out = '';
  let prev: PdfTextItem | undefined;
  let lineBreak = false;
  for (const item of items) {
    const [raw, hasEOL, x, y, , height, dir] = item;
    const str = removeControlChars(raw);
    if (str.trim() === '') {
      if (hasEOL) lineBreak = true;
      else if (str && out && !endsWithSpace(out)) out += ' ';
      continue;
    }
    if (prev) {
      const [, , px, py, pw, ph, pdir] = prev;
      const size = Math.max(Math.min(height, ph), 1);
      const sameLine = !lineBreak && dir === pdir && verticalOverlap(y, height, py, ph) > 0.3 * size;
      if (sameLine) {
        const gap = x - (px + pw);
        const spaced = endsWithSpace(out) || /^\s/.test(str);
        if (!spaced && (gap > 0.15 * size || gap < -size)) out += ' ';
      } else {
        const drop = py - y;
        const paragraph = dir !== pdir || drop < -0.5 * size || drop > 1.6 * Math.max(height, ph);
        out = out.trimEnd() + (paragraph ? '\n\n' : '\n');
      }
    }
    out += str;
    prev = item;
    lineBreak = hasEOL;
  }
  return tidy(out);
}

/** Text without the control characters PDFs carry for unmapped glyphs (and in info strings). */
export function removeControlChars(text: string): string {
  return text.replace(CONTROL_CHARS, '');
}

function endsWithSpace(text: string): boolean {
  return /\s/.test(text.at(-1) ?? '');
}

function verticalOverlap(y1: number, h1: number, y2: number, h2: number): number {
  return Math.min(y1 + h1, y2 + h2) - Math.max(y1, y2);
}

function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/\s+$/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
