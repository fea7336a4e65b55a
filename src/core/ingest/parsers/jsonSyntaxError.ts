import { parse as parseTolerant, type ParseError } from 'jsonc-parser';

export interface JsonSyntaxError {
  line: number;
  column: number;
  reason: string;
}

/**
 * Where JSON.parse failed, as a 1-based line and column. V8 usually says "... at position N"; when it
 * does not ("Unexpected token '}', ... is not valid JSON") jsonc-parser, run in strict mode, finds the
 * offset of the first error.
 */
export function locateJsonSyntaxError(text: string, error: unknown): JsonSyntaxError {
  const message = error instanceof Error ? error.message : String(error);
  const reason = message
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/ of JSON input$/, ' of input');
  const position = /at position (\d+)/.exec(message)?.[1];
  const located = position !== undefined ? Number(position) : firstErrorOffset(text);
  if (located === undefined) {
    return { ...lineAndColumn(text, text.length), reason: `${reason} (nested too deeply to locate exactly)` };
  }
  return { ...lineAndColumn(text, located), reason };
}

function firstErrorOffset(text: string): number | undefined {
  const errors: ParseError[] = [];
  try {
    parseTolerant(text, errors, {
      disallowComments: true,
      allowTrailingComma: false,
      allowEmptyContent: false,
    });
  } catch (error) {
    // jsonc-parser recurses once per nesting level: thousands of levels overflow the stack.
    if (!(error instanceof RangeError)) throw error;
    return errors[0]?.offset;
  }
  return errors[0]?.offset ?? text.length;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.min(offset, text.length));
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}
