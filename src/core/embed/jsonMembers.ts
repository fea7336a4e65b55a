/**
 * Streams the members of a JSON object whose text is too large to parse at once. Every top-level member
 * is handed over as its raw JSON text, except members named in `expand` whose value is an object: those
 * are entered and their own members are handed over one by one, with the parent's key. A generic
 * token-level streaming parser would call back once per number (34 million for the GloVe package) and
 * take minutes; slicing whole values and `JSON.parse`-ing each keeps the memory bounded by the largest
 * single value and the speed close to one `JSON.parse` of the whole text.
 */
export type MemberHandler = (parent: string | undefined, key: string, rawValue: string) => void;

export class JsonSyntaxError extends Error {}

const enum Byte {
  Quote = 0x22,
  Backslash = 0x5c,
  Comma = 0x2c,
  Colon = 0x3a,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
  OpenBracket = 0x5b,
  CloseBracket = 0x5d,
}

type State =
  'open' | 'keyOrEnd' | 'key' | 'keyText' | 'colon' | 'valueStart' | 'value' | 'commaOrEnd' | 'done';

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

export class JsonMemberStream {
  private state: State = 'open';
  private parent: string | undefined;
  private key = '';
  /** Bytes of the key or value being collected that arrived in earlier chunks. */
  private carried: Buffer[] = [];
  private depth = 0;
  private inString = false;
  private escaped = false;
  private offset = 0;

  constructor(
    private readonly onMember: MemberHandler,
    private readonly expand: ReadonlySet<string> = new Set(),
  ) {}

  push(chunk: Buffer): void {
    let start = this.state === 'keyText' || this.state === 'value' ? 0 : -1;
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      const c = chunk[i]!;
      switch (this.state) {
        case 'open':
          if (!isSpace(c)) {
            if (c !== Byte.OpenBrace) this.fail('expected "{" at the start of the document', i);
            this.state = 'keyOrEnd';
          }
          i++;
          break;
        case 'keyOrEnd':
        case 'key':
          if (!isSpace(c)) {
            if (c === Byte.CloseBrace && this.state === 'keyOrEnd') this.closeObject();
            else if (c === Byte.Quote) {
              this.state = 'keyText';
              this.inString = true;
              this.escaped = false;
              start = i;
            } else this.fail('expected a member name', i);
          }
          i++;
          break;
        case 'keyText':
          i = this.scanString(chunk, i);
          if (!this.inString) {
            this.key = JSON.parse(this.collect(chunk, start, i)) as string;
            this.state = 'colon';
          }
          break;
        case 'colon':
          if (!isSpace(c)) {
            if (c !== Byte.Colon) this.fail('expected ":"', i);
            this.state = 'valueStart';
          }
          i++;
          break;
        case 'valueStart':
          if (isSpace(c)) {
            i++;
          } else if (c === Byte.OpenBrace && this.parent === undefined && this.expand.has(this.key)) {
            this.parent = this.key;
            this.state = 'keyOrEnd';
            i++;
          } else {
            this.state = 'value';
            this.depth = 0;
            this.inString = false;
            this.escaped = false;
            start = i;
          }
          break;
        case 'value': {
          const end = this.scanValue(chunk, i);
          if (end < 0) {
            i = n;
          } else {
            this.onMember(this.parent, this.key, this.collect(chunk, start, end));
            this.state = 'commaOrEnd';
            i = end;
          }
          break;
        }
        case 'commaOrEnd':
          if (!isSpace(c)) {
            if (c === Byte.Comma) this.state = 'key';
            else if (c === Byte.CloseBrace) this.closeObject();
            else this.fail('expected "," or "}"', i);
          }
          i++;
          break;
        case 'done':
          if (!isSpace(c)) this.fail('unexpected text after the end of the document', i);
          i++;
          break;
      }
    }
    if (this.state === 'keyText' || this.state === 'value')
      this.carried.push(chunk.subarray(Math.max(start, 0)));
    this.offset += n;
  }

  /** Call after the last chunk. */
  end(): void {
    if (this.state !== 'done') this.fail('the document ends before its closing "}"', 0);
  }

  private closeObject(): void {
    if (this.parent !== undefined) {
      this.parent = undefined;
      this.state = 'commaOrEnd';
    } else this.state = 'done';
  }

  /** Advances through a key's text (after its opening quote); returns the index after the closing quote, or the chunk length. */
  private scanString(chunk: Buffer, i: number): number {
    for (; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.escaped) this.escaped = false;
      else if (c === Byte.Backslash) this.escaped = true;
      else if (c === Byte.Quote) {
        this.inString = false;
        return i + 1;
      }
    }
    return i;
  }

  /**
   * Finds where the value that started earlier ends: after its closing bracket or quote, or (numbers,
   * literals) before the delimiter that follows it. Returns -1 when the chunk ends first.
   */
  private scanValue(chunk: Buffer, i: number): number {
    for (; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === Byte.Backslash) this.escaped = true;
        else if (c === Byte.Quote) {
          this.inString = false;
          if (this.depth === 0) return i + 1;
        }
      } else if (c === Byte.Quote) this.inString = true;
      else if (c === Byte.OpenBrace || c === Byte.OpenBracket) this.depth++;
      else if (c === Byte.CloseBrace || c === Byte.CloseBracket) {
        if (this.depth === 0) return i;
        if (--this.depth === 0) return i + 1;
      } else if (this.depth === 0 && (c === Byte.Comma || isSpace(c))) return i;
    }
    return -1;
  }

  private collect(chunk: Buffer, start: number, end: number): string {
    const tail = chunk.subarray(Math.max(start, 0), end);
    if (this.carried.length === 0) return tail.toString('utf8');
    const text = Buffer.concat([...this.carried, tail]).toString('utf8');
    this.carried = [];
    return text;
  }

  private fail(message: string, index: number): never {
    throw new JsonSyntaxError(`${message} (byte ${this.offset + index})`);
  }
}
