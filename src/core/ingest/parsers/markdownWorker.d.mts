import type { Root } from 'mdast';

/** Whether GFM autolink literals could change the text of a Markdown piece (markdownWorker.mjs). */
export declare function autolinksMatter(text: string): boolean;

/** The tree of one piece as the worker sends it: markdown-it's where it reads as micromark, else micromark's. */
export declare function parseMarkdownTree(text: string, mdx?: boolean): Root;

/** The tree micromark makes of a piece (remark-parse with GFM, or MDX), without positions. */
export declare function micromarkTree(text: string, mdx?: boolean): Root;

/** The tree markdown-it makes of a piece, or undefined where micromark must read it. */
export declare function markdownItTree(text: string): Root | undefined;
