export declare const PLAIN_TEXT: { disallowedSpecial: Set<string> };
export declare const MAX_RUN: number;
export declare function countTokens(text: string): number;
export declare function countTokensUpTo(text: string, limit: number): number | false;
export declare function tokenizerSegments(text: string): [number, number][];
export declare const isLowSurrogate: (code: number) => boolean;
export declare function cl100kPieces(text: string): string[];
/** cl100k counts of ASCII pieces, kept in a table of 2^bits slots that starts over when half full. */
export declare class AsciiPieceCounts {
  constructor(bits: number, charBytes: number);
  /** Tokens of the ASCII piece s[i, end). */
  count(s: string, i: number, end: number): number;
}
/** Counts ranges of one text from one pass of cl100k's pieces (counts equal countTokens of the slice). */
export declare class TokenRanges {
  /** The index of `text`, or null when its ranges must be counted as they are. */
  static of(text: string): TokenRanges | null;
  private constructor(text: string);
  readonly text: string;
  /** Tokens of text.slice(start, end). */
  count(start: number, end: number): number;
  /** The count when it is at most `limit`, else false. */
  countUpTo(start: number, end: number, limit: number): number | false;
}
