import { decodeTextInTurns } from '../decode';
import { InvalidDocument } from '../errors';
import { EventLoopTurns } from '../eventLoopTurns';
import type { ParsedDocument, Parser, Section } from '../types';
import { flattenFields, isPlainObject, MAX_NESTING, nestingDepth, toMetadata } from './flatten';
import { arrayItemTexts } from './jsonItems';
import { locateJsonSyntaxError } from './jsonSyntaxError';

/** The top-level fields tried, in order, as an item's text (DESIGN §6). */
const TEXT_FIELDS = ['text', 'content', 'body'] as const;
const LISTED_SKIPS = 20;
/** Texts shorter than this are parsed in one go (parseInTurns). */
export const PARSE_WHOLE_BELOW_CHARS = 1 << 20;
/** Items read between two looks at the clock (EventLoopTurns). */
const ITEMS_BETWEEN_TURNS = 64;

/**
 * JSON (spec §2, DESIGN §6): an array of objects or a single object; each top-level item is one section
 * with metadata `{ item: <0-based index>, ...fields }`, nested fields flattened with dotted keys and
 * arrays kept as arrays (see flattenFields). The text is the first non-empty `text`, `content` or `body`
 * string; otherwise every non-empty string field as `key: value` lines. Fields used as text are not
 * repeated in the metadata. An array holding a non-object (a number, a string, null, an array) is
 * refused, naming the index: the spec promises objects, and guessing what a bare scalar means would
 * silently change the data. Items without any text are skipped and listed in `warnings`.
 */
export const parseJson: Parser = async ({ bytes, source }) => {
  // The parse runs on the server's thread: a large file is decoded, parsed and read in turns with its
  // requests.
  const turns = new EventLoopTurns();
  const text = await decodeTextInTurns(bytes, turns, source);
  if (text.trim() === '') throw new InvalidDocument(source, 'the file is empty.');
  const items = topLevelItems(await parseInTurns(text, source, turns), source);

  const sections: Section[] = [];
  const skipped: number[] = [];
  for (const [index, item] of items.entries()) {
    const section = itemSection(item, index);
    if (section) sections.push(section);
    else skipped.push(index);
    if (index % ITEMS_BETWEEN_TURNS === ITEMS_BETWEEN_TURNS - 1) await turns.take();
  }

  const warnings: string[] = [];
  if (items.length === 0) warnings.push('The JSON array is empty: no documents.');
  if (skipped.length > 0) warnings.push(skippedWarning(skipped));
  const document: ParsedDocument = { format: 'json', sections, metadata: {} };
  if (warnings.length > 0) document.warnings = warnings;
  return document;
};

/**
 * The value of the text: a large array's items parsed one at a time (arrayItemTexts), anything else
 * whole. Below a megabyte (JSON.parse takes about 10 ms) the scan would only add its own time.
 */
async function parseInTurns(text: string, source: string, turns: EventLoopTurns): Promise<unknown> {
  if (text.length < PARSE_WHOLE_BELOW_CHARS) return parseStrict(text, source);
  const texts = await arrayItemTexts(text, turns);
  if (!texts) return parseStrict(text, source);
  const items: unknown[] = [];
  for (const [index, itemText] of texts.entries()) {
    try {
      items.push(JSON.parse(itemText));
    } catch {
      // The whole text's parse says where the error is (or, were the scan wrong, gives the value).
      return parseStrict(text, source);
    }
    if (index % ITEMS_BETWEEN_TURNS === ITEMS_BETWEEN_TURNS - 1) await turns.take();
  }
  return items;
}

function parseStrict(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const { line, column, reason } = locateJsonSyntaxError(text, error);
    throw new InvalidDocument(source, `invalid JSON at line ${line}, column ${column}: ${reason}.`);
  }
}

function topLevelItems(value: unknown, source: string): Record<string, unknown>[] {
  const items = isPlainObject(value) ? [value] : value;
  if (!Array.isArray(items)) {
    throw new InvalidDocument(
      source,
      `expected an array of objects or a single object, found ${kindOf(value)}.`,
    );
  }
  items.forEach((item, index) => {
    if (!isPlainObject(item)) {
      throw new InvalidDocument(
        source,
        `item ${index} (0-based) is ${kindOf(item)}; expected an array of objects or a single object.`,
      );
    }
    if (nestingDepth(item) > MAX_NESTING) {
      throw new InvalidDocument(
        source,
        `item ${index} (0-based) nests more than ${MAX_NESTING} levels deep.`,
      );
    }
  });
  return items as Record<string, unknown>[];
}

function itemSection(item: Record<string, unknown>, index: number): Section | undefined {
  const textField = TEXT_FIELDS.find((field) => isNonEmptyString(item[field]));
  const fields = flattenFields(item);
  if (textField) {
    const others = fields.filter(([key]) => key !== textField);
    return { text: item[textField] as string, metadata: { item: index, ...toMetadata(others) } };
  }
  const stringFields = fields.filter(([, value]) => isNonEmptyString(value));
  if (stringFields.length === 0) return undefined;
  const others = fields.filter(([, value]) => !isNonEmptyString(value));
  return {
    text: stringFields.map(([key, value]) => `${key}: ${value as string}`).join('\n'),
    metadata: { item: index, ...toMetadata(others) },
  };
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function skippedWarning(indexes: number[]): string {
  const listed = indexes.slice(0, LISTED_SKIPS).join(', ');
  const more = indexes.length > LISTED_SKIPS ? ` and ${indexes.length - LISTED_SKIPS} more` : '';
  return `${indexes.length} item(s) had no text (no non-empty "text", "content" or "body" field and no other string field) and were skipped: items ${listed}${more} (0-based).`;
}
