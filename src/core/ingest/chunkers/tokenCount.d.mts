export declare const PLAIN_TEXT: { disallowedSpecial: Set<string> };
export declare const MAX_RUN: number;
export declare function countTokens(text: string): number;
export declare function countTokensUpTo(text: string, limit: number): number | false;
export declare function tokenizerSegments(text: string): [number, number][];
export declare const isLowSurrogate: (code: number) => boolean;
export declare function cl100kPieces(text: string): string[];
