import type { Root } from 'hast';

/** The hast tree rehype-parse would make of `html`, without positions (htmlWorker.mjs). */
export declare function parseHtmlTree(html: string): Root;
