/** A mammoth XML element or text node (mammoth/lib/xml/nodes.js). */
export type MammothXmlNode =
  | { type: 'element'; name: string; attributes: Record<string, string>; children: MammothXmlNode[] }
  | { type: 'text'; value: string };

/** mammoth's `readString`, built on saxes, with xmldom's reader as the fallback (docxWorker.mjs). */
export declare function readXmlString(
  xmlString: string,
  namespaceMap?: Record<string, string>,
): Promise<MammothXmlNode>;

/**
 * The tree as mammoth should read it, changed in place and returned (docxWorker.mjs): without the runs
 * Word hides (`w:vanish`), with the text mammoth would drop (simple fields, Office Math, page and column
 * breaks, `w:cr`, bidi containers, ruby, symbols, DrawingML text boxes) in elements it reads.
 */
export declare function rewriteForMammoth(tree: MammothXmlNode): MammothXmlNode;

/** The reader installed as mammoth's `readString`: readXmlString's trees, rewritten for mammoth. */
export declare function readDocxXml(
  xmlString: string,
  namespaceMap?: Record<string, string>,
): Promise<MammothXmlNode>;

/**
 * The DOCX as HTML, as the worker converts it: mammoth's result, and the names of the elements whose
 * text it left out (`w:sym`, `w:altChunk`, any other element it ignored that holds text).
 */
export declare function convertDocx(
  buffer: Buffer,
): Promise<{ value: string; messages: { type: string; message: string }[]; leftOut: string[] }>;
