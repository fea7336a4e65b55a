/** A mammoth XML element or text node (mammoth/lib/xml/nodes.js). */
export type MammothXmlNode =
  | { type: 'element'; name: string; attributes: Record<string, string>; children: MammothXmlNode[] }
  | { type: 'text'; value: string };

/** mammoth's `readString`, built on saxes, with xmldom's reader as the fallback (docxWorker.mjs). */
export declare function readXmlString(
  xmlString: string,
  namespaceMap?: Record<string, string>,
): Promise<MammothXmlNode>;

/** The tree without the runs Word hides (`w:vanish`), changed in place and returned (docxWorker.mjs). */
export declare function withoutHiddenRuns(tree: MammothXmlNode): MammothXmlNode;

/** The reader installed as mammoth's `readString`: readXmlString's trees without hidden runs. */
export declare function readDocxXml(
  xmlString: string,
  namespaceMap?: Record<string, string>,
): Promise<MammothXmlNode>;
