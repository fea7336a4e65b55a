import type { EventLoopTurns } from '../eventLoopTurns';

/** Characters scanned between two looks at the clock (EventLoopTurns). */
const CHARS_BETWEEN_TURNS = 64 * 1024;

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

const isSpace = (code: number) => code === SPACE || code === LF || code === CR || code === TAB;

/**
 * The texts of the items of a top-level JSON array, found by a scan that follows strings and nesting,
 * in turns with the thread's other work; undefined when the text is not one array. Each item's text is
 * then parsed on its own: `JSON.parse` of a whole 6.8 MB file held the server's thread 50–80 ms in one
 * go. The scan does not check the syntax: a text it splits wrongly fails an item's parse, and the caller
 * parses it whole for the error (or the value).
 */
export async function arrayItemTexts(text: string, turns: EventLoopTurns): Promise<string[] | undefined> {
  const length = text.length;
  let i = 0;
  while (i < length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN_BRACKET) return undefined;
  i++;
  const items: string[] = [];
  let depth = 0;
  let start = i;
  let nextTurn = i + CHARS_BETWEEN_TURNS;
  for (; i < length; i++) {
    if (i >= nextTurn) {
      await turns.take();
      nextTurn = i + CHARS_BETWEEN_TURNS;
    }
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      // To the closing quote, past escaped characters.
      for (i++; i < length; i++) {
        const c = text.charCodeAt(i);
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) break;
      }
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      depth++;
    } else if (depth > 0) {
      if (code === CLOSE_BRACKET || code === CLOSE_BRACE) depth--;
    } else if (code === COMMA) {
      items.push(text.slice(start, i));
      start = i + 1;
    } else if (code === CLOSE_BRACKET) {
      const last = text.slice(start, i);
      // `[]` has no item; `[1,]` has an empty one, which fails its parse as it should.
      if (items.length > 0 || last.trim() !== '') items.push(last);
      for (i++; i < length; i++) if (!isSpace(text.charCodeAt(i))) return undefined;
      return items;
    }
  }
  return undefined;
}
