import type { MammothXmlNode } from './docxWorker.mjs';

/** A count in one of Word's number formats (w:numFmt): decimal for the formats not written out. */
export declare function formatNumber(n: number, format: string): string;

/**
 * Writes Word's label at the start of each numbered paragraph of a document part, in document order,
 * and returns how many were labelled (docxNumbering.mjs).
 */
export declare function labelNumberedParagraphs(
  documentTree: MammothXmlNode,
  numberingTree: MammothXmlNode | undefined,
  stylesTree: MammothXmlNode | undefined,
  run: (text: string) => MammothXmlNode,
): number;
