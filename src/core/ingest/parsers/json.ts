import { decodeTextInTurns } from '../decode';
import { InvalidDocument } from '../errors';
import { EventLoopTurns } from '../eventLoopTurns';
import type { ParsedDocument, Parser, Section } from '../types';
import { flattenFields, isPlainObject, MAX_NESTING, NestingScan, toMetadata } from './flatten';
import { arrayItemTexts, objectMemberTexts } from './jsonItems';
import { locateJsonSyntaxError } from './jsonSyntaxError';

/** The top-level fields tried, in order, as an item's text (DESIGN §6). */
const TEXT_FIELDS = ['text', 'content', 'body'] as const;
const LISTED_SKIPS = 20;
/** Texts shorter than this are parsed in one go (parseInTurns). */
export const PARSE_WHOLE_BELOW_CHARS = 1 << 20;
/** Items read between two looks at the clock (EventLoopTurns). */
const ITEMS_BETWEEN_TURNS = 64;

/**
 * JSON (spec §2, DESIGN §6): an array of objects or a single object; each top-level item is one
 * document. Here it is one section with metadata `{ item: <0-based index>, ...fields }`; the commit gives
 * each item's chunks the item's own document id and chunk indexes (commitWorker.mjs), while the file
 * stays the unit the studio keeps, re-ingests and deletes. Nested fields are flattened with dotted keys
 * and arrays kept as arrays (see flattenFields). The text is the first non-empty `text`, `content` or
 * `body` string; otherwise the item's fields as `key: value` lines (itemLines): every non-empty string
 * it holds, nested objects and arrays included. Fields used as text are not repeated in the metadata. An
 * array holding a non-object (a number, a string, null, an array) is refused, naming the index: the spec
 * promises objects, and guessing what a bare scalar means would silently change the data. Items without
 * any text are skipped and listed in `warnings`.
 *
 * A single object is one document even when its content is a list of records (`{"data": [...]}`, an
 * export's usual wrapping): the spec says so, and which array to unwrap would be a guess. Its records
 * are then lines of one section, each line naming its record (`data[3].title: …`).
 */
export const parseJson: Parser = async ({ bytes, source }) => {
  // The parse runs on the server's thread: a large file is decoded, parsed and read in turns with its
  // requests.
  const turns = new EventLoopTurns();
  const text = await decodeTextInTurns(bytes, turns, source);
  if (text.trim() === '') throw new InvalidDocument(source, 'the file is empty.');
  const items = await topLevelItems(await parseInTurns(text, source, turns), source, turns);

  const sections: Section[] = [];
  const skipped: number[] = [];
  for (const [index, item] of items.entries()) {
    const section = await itemSection(item, index, source, turns);
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
 * The value of the text: a large array's items parsed one at a time (arrayItemTexts), and so are those
 * of an array in a large object (objectMemberTexts: `{"data": [...]}`); anything else whole. Below a
 * megabyte (JSON.parse takes about 10 ms) the scan would only add its own time.
 */
async function parseInTurns(text: string, source: string, turns: EventLoopTurns): Promise<unknown> {
  if (text.length < PARSE_WHOLE_BELOW_CHARS) return parseStrict(text, source);
  const texts = await arrayItemTexts(text, turns);
  if (texts) return (await parseItems(texts, turns)) ?? parseStrict(text, source);
  const members = await objectMemberTexts(text, turns);
  if (!members) return parseStrict(text, source);
  const entries: [string, unknown][] = [];
  for (const { key, value, items } of members) {
    try {
      const name = JSON.parse(key) as string;
      const parsed = items ? await parseItems(items, turns) : JSON.parse(value);
      if (parsed === undefined) return parseStrict(text, source);
      entries.push([name, parsed]);
    } catch {
      return parseStrict(text, source);
    }
    await turns.take();
  }
  // As JSON.parse builds it: a repeated key keeps its first place and its last value, `__proto__` is
  // an own property.
  return Object.fromEntries(entries);
}

/**
 * Each text parsed on its own; undefined when one fails. The whole text's parse then says where the
 * error is (or, were the scan wrong, gives the value).
 */
async function parseItems(texts: string[], turns: EventLoopTurns): Promise<unknown[] | undefined> {
  const items: unknown[] = [];
  for (const [index, itemText] of texts.entries()) {
    try {
      items.push(JSON.parse(itemText));
    } catch {
      return undefined;
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

async function topLevelItems(
  value: unknown,
  source: string,
  turns: EventLoopTurns,
): Promise<Record<string, unknown>[]> {
  const items = isPlainObject(value) ? [value] : value;
  if (!Array.isArray(items)) {
    throw new InvalidDocument(
      source,
      `expected an array of objects or a single object, found ${kindOf(value)}.`,
    );
  }
  for (const [index, item] of items.entries()) {
    if (!isPlainObject(item)) {
      throw new InvalidDocument(
        source,
        `item ${index} (0-based) is ${kindOf(item)}; expected an array of objects or a single object.`,
      );
    }
    // In turns: a single object may be the whole file.
    const scan = new NestingScan(item);
    while (!scan.run(VALUES_BETWEEN_TURNS)) await turns.take();
    if (scan.deepest > MAX_NESTING) {
      throw new InvalidDocument(
        source,
        `item ${index} (0-based) nests more than ${MAX_NESTING} levels deep.`,
      );
    }
  }
  return items as Record<string, unknown>[];
}

async function itemSection(
  item: Record<string, unknown>,
  index: number,
  source: string,
  turns: EventLoopTurns,
): Promise<Section | undefined> {
  const textField = TEXT_FIELDS.find((field) => isNonEmptyString(item[field]));
  if (textField) {
    const others = flattenFields(item).filter(([key]) => key !== textField);
    return { text: item[textField] as string, metadata: { item: index, ...toMetadata(others) } };
  }
  const { lines, hasString, metadata } = await itemLines(item, index, source, turns);
  if (!hasString) return undefined;
  return { text: await joinInTurns(lines, '\n', turns), metadata: { item: index, ...toMetadata(metadata) } };
}

/**
 * The text of an item without a text field may be this many times the size of its JSON (plus
 * FALLBACK_TEXT_SLACK): every line repeats its path, which is what lets a chunk cut from the middle
 * still say what each value is, but a long key above many values would repeat without end (a 1 MB key
 * over 10,000 fields: 10 GB). Real records stay far below: `data.children[12].data.ups: 5` for
 * `"ups":5,` is 3.75 times. With the 50 MB file limit the text stays below V8's longest string.
 */
const FALLBACK_TEXT_FACTOR = 8;
const FALLBACK_TEXT_SLACK = 64 * 1024;
/** Values visited between two looks at the clock (EventLoopTurns). */
const VALUES_BETWEEN_TURNS = 1024;
const PARTS_PER_JOIN = 4096;

interface Frame {
  /** The path of the object or array, `''` for the item itself. */
  path: string;
  value: Record<string, unknown> | unknown[];
  /** The keys (for an array, the indexes of its objects and arrays) still to visit. */
  keys: string[];
  at: number;
  /** Inside an array: every scalar is written to the text, nothing goes to the metadata. */
  inArray: boolean;
  /** For an array of the item's fields: the line count when it was opened. */
  linesBefore?: number;
}

interface ItemLines {
  lines: string[];
  hasString: boolean;
  /** The fields kept as metadata, with their dotted keys, in the item's order. */
  metadata: [string, unknown][];
}

/**
 * An item without a text field as `key: value` lines, in the item's order (DESIGN §6: "every string
 * field as `key: value` lines"; spec: "Nested fields are flattened"), and the fields left for the
 * metadata, as flattenFields gives them:
 * - a non-empty string: `author.name: Ada` (not in the metadata);
 * - an array of scalars: one line listing them, `features: waterproof, shockproof`, when it holds a
 *   non-empty string; it stays in the metadata as well, where a filter can match its elements;
 * - an array holding objects or arrays: a line per value (numbers and booleans too), indexes in
 *   brackets, `reviews[0].comment: Great product`, so that the fields of one record stay together and
 *   read apart from a key named `0`. It leaves the metadata (unless it gave no line): its text is in the
 *   section already, a filter cannot match inside its objects, and a chunk's metadata is a copy of its
 *   section's, so a 1 MB `{"data": [...]}` export cut in 500 chunks would have stored it 500 times;
 * - anything else (numbers, booleans, null, blank strings, `{}`): metadata only, as before.
 * Refuses an item whose lines would exceed FALLBACK_TEXT_FACTOR times its size; takes turns of the
 * event loop on a large item.
 */
async function itemLines(
  item: Record<string, unknown>,
  index: number,
  source: string,
  turns: EventLoopTurns,
): Promise<ItemLines> {
  const result: ItemLines = { lines: [], hasString: false, metadata: [] };
  /** An estimate of the item's JSON size, counted as it is visited: what the text is measured by. */
  let sourceChars = 2;
  let textChars = 0;
  let visited = 0;
  const write = (path: string, value: string) => {
    const line = `${path}: ${value}`;
    textChars += line.length + 1;
    if (textChars > FALLBACK_TEXT_FACTOR * sourceChars + FALLBACK_TEXT_SLACK) {
      throw new InvalidDocument(
        source,
        `item ${index} (0-based) has no "text", "content" or "body" field, and its fields written as "key: value" lines would be more than ${FALLBACK_TEXT_FACTOR} times its size (long keys above many values); give it a "text" field.`,
      );
    }
    result.lines.push(line);
  };
  const stack: Frame[] = [];
  /** Pushes an array's frame after writing the line of its scalars (if it has a string, or inArray). */
  const openArray = async (path: string, array: unknown[], inArray: boolean, linesBefore?: number) => {
    sourceChars += 2 + array.length;
    const scalars: string[] = [];
    const containers: string[] = [];
    let hasString = false;
    for (const [i, element] of array.entries()) {
      if (i % VALUES_BETWEEN_TURNS === VALUES_BETWEEN_TURNS - 1) await turns.take();
      if (typeof element === 'string') {
        sourceChars += element.length + 2;
        if (element.trim() === '') continue;
        hasString = true;
        scalars.push(element);
      } else if (typeof element === 'number' || typeof element === 'boolean') {
        const text = String(element);
        sourceChars += text.length;
        scalars.push(text);
      } else if (typeof element === 'object' && element !== null) {
        containers.push(String(i));
      } else sourceChars += 4;
    }
    if (scalars.length > 0 && (hasString || inArray)) {
      result.hasString ||= hasString;
      write(path, await joinInTurns(scalars, ', ', turns));
    }
    if (containers.length > 0)
      stack.push({ path, value: array, keys: containers, at: 0, inArray: true, linesBefore });
  };
  stack.push({ path: '', value: item, keys: Object.keys(item), at: 0, inArray: false });
  while (stack.length > 0) {
    const frame = stack.at(-1)!;
    if (frame.at === frame.keys.length) {
      stack.pop();
      // An array of the item's fields that gave no line (only nulls, blanks, `{}`) keeps its place.
      if (frame.linesBefore === result.lines.length) result.metadata.push([frame.path, frame.value]);
      continue;
    }
    if (++visited % VALUES_BETWEEN_TURNS === 0) await turns.take();
    const key = frame.keys[frame.at++]!;
    if (Array.isArray(frame.value)) {
      const element = frame.value[Number(key)] as object;
      const path = `${frame.path}[${key}]`;
      if (Array.isArray(element)) await openArray(path, element, true);
      else openObject(stack, path, element as Record<string, unknown>, true);
      sourceChars += 2;
      continue;
    }
    const value = frame.value[key];
    const path = frame.path === '' ? key : `${frame.path}.${key}`;
    sourceChars += key.length + 4;
    if (typeof value === 'string') {
      sourceChars += value.length;
      if (value.trim() !== '') {
        result.hasString = true;
        write(path, value);
      } else if (!frame.inArray) result.metadata.push([path, value]);
    } else if (Array.isArray(value)) {
      if (frame.inArray) await openArray(path, value, true);
      else if (value.some((element) => typeof element === 'object' && element !== null)) {
        await openArray(path, value, true, result.lines.length);
      } else {
        await openArray(path, value, false);
        result.metadata.push([path, value]);
      }
    } else if (isPlainObject(value) && Object.keys(value).length > 0) {
      openObject(stack, path, value, frame.inArray);
    } else if (frame.inArray) {
      if (typeof value === 'number' || typeof value === 'boolean') write(path, String(value));
      sourceChars += 4;
    } else {
      result.metadata.push([path, value]);
      sourceChars += 4;
    }
  }
  return result;
}

/** Joined a slice at a time: the 200,000 lines of a wrapped export took one join of 40 ms. */
async function joinInTurns(parts: string[], separator: string, turns: EventLoopTurns): Promise<string> {
  if (parts.length <= PARTS_PER_JOIN) return parts.join(separator);
  const joined: string[] = [];
  for (let start = 0; start < parts.length; start += PARTS_PER_JOIN) {
    joined.push(parts.slice(start, start + PARTS_PER_JOIN).join(separator));
    await turns.take();
  }
  return joined.join(separator);
}

function openObject(stack: Frame[], path: string, value: Record<string, unknown>, inArray: boolean): void {
  stack.push({ path, value, keys: Object.keys(value), at: 0, inArray });
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
