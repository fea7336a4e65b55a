import { parseDocument } from 'yaml';
import { InvalidDocument } from '../errors';
import type { Metadata } from '../types';
import { flattenFields, isPlainObject, MAX_NESTING, nestingDepth, toMetadata } from './flatten';

/** Alias expansions allowed while building the front matter; a "billion laughs" YAML is refused past it. */
const MAX_ALIAS_COUNT = 100;

const LANGUAGE_FENCE = /^---([A-Za-z][\w-]*)[ \t]*\r?\n/;
const CLOSING_FENCE = /^---[ \t]*\r?$/m;

/**
 * gray-matter's `---js` / `---coffee` front matter is code, run when read: it is refused, never evaluated.
 * `---yaml` / `---yml` is plain YAML and is rewritten to `---` so remark-frontmatter sees it (same line count).
 */
export function normalizeFrontMatterFence(text: string, source: string): string {
  const language = LANGUAGE_FENCE.exec(text)?.[1];
  if (language === undefined || !CLOSING_FENCE.test(text.slice(text.indexOf('\n') + 1))) return text;
  if (/^ya?ml$/i.test(language)) return text.replace(LANGUAGE_FENCE, (fence) => fence.replace(language, ''));
  throw new InvalidDocument(
    source,
    `front matter at line 1 is written in '${language}'; only YAML front matter ('---' ... '---') is supported.`,
  );
}

/**
 * YAML front matter → document metadata: scalars as they are (the core schema keeps dates as strings),
 * nested mappings flattened with dotted keys, lists kept as lists. `firstLine` is the file line of the
 * opening `---`, so errors name the line in the file.
 */
export function readFrontMatter(
  yaml: string,
  firstLine: number,
  source: string,
  warnings: string[],
): Metadata {
  // The yaml parser recurses per level and, after overflowing the stack on a huge nesting, can run out of memory.
  if (flowNesting(yaml) > MAX_NESTING) {
    throw new InvalidDocument(
      source,
      `front matter starting at line ${firstLine} nests more than ${MAX_NESTING} levels deep.`,
    );
  }
  const document = parseDocument(yaml, { prettyErrors: false, uniqueKeys: true });
  const fileLine = (offset: number) => firstLine + yaml.slice(0, offset).split('\n').length;
  const [error] = document.errors;
  if (error) {
    throw new InvalidDocument(
      source,
      `invalid YAML front matter at line ${fileLine(error.pos[0])}: ${error.message}.`,
    );
  }
  for (const warning of document.warnings) {
    warnings.push(`Front matter line ${fileLine(warning.pos[0])}: ${warning.message}.`);
  }
  let data: unknown;
  try {
    data = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new InvalidDocument(source, `front matter starting at line ${firstLine} was refused: ${reason}.`);
  }
  if (data === null || data === undefined) return {};
  if (nestingDepth(data) > MAX_NESTING) {
    throw new InvalidDocument(
      source,
      `front matter starting at line ${firstLine} nests more than ${MAX_NESTING} levels deep.`,
    );
  }
  if (!isPlainObject(data)) {
    throw new InvalidDocument(
      source,
      `front matter starting at line ${firstLine} must be a mapping of fields (key: value).`,
    );
  }
  return toMetadata(flattenFields(data));
}

/** The deepest nesting of flow collections (`[`, `{`) outside quoted scalars and comments. */
function flowNesting(yaml: string): number {
  let depth = 0;
  let deepest = 0;
  let quote: string | undefined;
  for (let i = 0; i < yaml.length; i++) {
    const char = yaml[i];
    if (quote) {
      if (char === '\\' && quote === '"') i++;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === '#' && (i === 0 || /\s/.test(yaml[i - 1] as string))) {
      const end = yaml.indexOf('\n', i);
      i = end === -1 ? yaml.length : end;
    } else if (char === '[' || char === '{') {
      deepest = Math.max(deepest, ++depth);
    } else if ((char === ']' || char === '}') && depth > 0) {
      depth--;
    }
  }
  return deepest;
}
