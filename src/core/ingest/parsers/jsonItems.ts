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
const COLON = 0x3a;
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
  const scan = new Scan(text, turns);
  scan.skipSpace();
  if (scan.code() !== OPEN_BRACKET) return undefined;
  const items = await scan.arrayItems();
  scan.skipSpace();
  return items && scan.atEnd() ? items : undefined;
}

/** A member of a top-level object: its key's JSON text, and its value's, or its items' for an array. */
export interface MemberTexts {
  key: string;
  value: string;
  /** The texts of the value's items, when the value is an array (`value` is then empty). */
  items?: string[];
}

/**
 * The members of a top-level JSON object, an array's value split into the texts of its items as
 * arrayItemTexts splits a top-level array; undefined when the text is not one object. A record list
 * wrapped in an object (`{"data": [...]}`, an export's usual form) is then parsed an item at a time
 * too. Like arrayItemTexts, the scan does not check the syntax.
 */
export async function objectMemberTexts(
  text: string,
  turns: EventLoopTurns,
): Promise<MemberTexts[] | undefined> {
  const scan = new Scan(text, turns);
  scan.skipSpace();
  if (scan.code() !== OPEN_BRACE) return undefined;
  scan.at++;
  const members: MemberTexts[] = [];
  scan.skipSpace();
  if (scan.code() === CLOSE_BRACE) {
    scan.at++;
    scan.skipSpace();
    return scan.atEnd() ? members : undefined;
  }
  for (;;) {
    scan.skipSpace();
    if (scan.code() !== QUOTE) return undefined;
    const keyStart = scan.at;
    scan.skipString();
    if (scan.atEnd()) return undefined;
    const key = text.slice(keyStart, ++scan.at);
    scan.skipSpace();
    if (scan.code() !== COLON) return undefined;
    scan.at++;
    scan.skipSpace();
    if (scan.code() === OPEN_BRACKET) {
      const items = await scan.arrayItems();
      if (!items) return undefined;
      members.push({ key, value: '', items });
    } else {
      const valueStart = scan.at;
      if (!(await scan.toDelimiter())) return undefined;
      members.push({ key, value: text.slice(valueStart, scan.at) });
    }
    scan.skipSpace();
    const code = scan.code();
    scan.at++;
    if (code === CLOSE_BRACE) break;
    if (code !== COMMA) return undefined;
  }
  scan.skipSpace();
  return scan.atEnd() ? members : undefined;
}

/** A position in a JSON text, moved by the scans below; turns are taken as it goes. */
class Scan {
  at = 0;
  private nextTurn = CHARS_BETWEEN_TURNS;

  constructor(
    private readonly text: string,
    private readonly turns: EventLoopTurns,
  ) {}

  code(): number {
    return this.text.charCodeAt(this.at);
  }

  atEnd(): boolean {
    return this.at >= this.text.length;
  }

  skipSpace(): void {
    while (this.at < this.text.length && isSpace(this.text.charCodeAt(this.at))) this.at++;
  }

  /** From an opening quote to its closing quote, past escaped characters (to the end if none). */
  skipString(): void {
    const { text } = this;
    for (this.at++; this.at < text.length; this.at++) {
      const c = text.charCodeAt(this.at);
      if (c === BACKSLASH) this.at++;
      else if (c === QUOTE) return;
    }
  }

  /**
   * From the start of a value to the comma, `]` or `}` after it at its own level (the position left on
   * it); `]` at that level ends an array's items. False when the text ends first.
   */
  async toDelimiter(): Promise<boolean> {
    const { text } = this;
    const length = text.length;
    // A local index in the loop: the scan of a large file is the hot path.
    let i = this.at;
    let depth = 0;
    for (; i < length; i++) {
      if (i >= this.nextTurn) {
        await this.turns.take();
        this.nextTurn = i + CHARS_BETWEEN_TURNS;
      }
      const code = text.charCodeAt(i);
      if (code === QUOTE) {
        for (i++; i < length; i++) {
          const c = text.charCodeAt(i);
          if (c === BACKSLASH) i++;
          else if (c === QUOTE) break;
        }
      } else if (code === OPEN_BRACKET || code === OPEN_BRACE) depth++;
      else if (depth > 0) {
        if (code === CLOSE_BRACKET || code === CLOSE_BRACE) depth--;
      } else if (code === COMMA || code === CLOSE_BRACKET || code === CLOSE_BRACE) {
        this.at = i;
        return true;
      }
    }
    this.at = i;
    return false;
  }

  /**
   * From an array's `[` past its `]`: the texts of its items; undefined when the text ends first or a
   * `}` closes it. `[]` has no item; `[1,]` has an empty one, which fails its parse as it should.
   */
  async arrayItems(): Promise<string[] | undefined> {
    const items: string[] = [];
    let start = ++this.at;
    for (;;) {
      if (!(await this.toDelimiter())) return undefined;
      const code = this.code();
      const item = this.text.slice(start, this.at);
      this.at++;
      if (code === COMMA) {
        items.push(item);
        start = this.at;
      } else if (code === CLOSE_BRACKET) {
        if (items.length > 0 || item.trim() !== '') items.push(item);
        return items;
      } else return undefined;
    }
  }
}
