import type { Rng } from '../../bench/prng';

const WORDS = [
  'alpha',
  'beta',
  'Gamma',
  'dé',
  'ünï',
  '漢字',
  'x_y',
  'snake_case_word',
  'a*b',
  '3.14',
  'end.',
  'f(x)',
  '#tag',
  'C++',
];

/**
 * Seeded Markdown documents that put CommonMark and GFM constructs side by side, often in odd places:
 * emphasis runs, code spans over lines, links, references, autolinks, images, inline and block HTML,
 * entities, escapes, hard and soft breaks, nested and empty list items, quotes, fenced and indented code,
 * tables (ragged, in paragraphs, in lists), rules, definitions and front matter. Used to compare
 * Markdown parsers on what a reader gets.
 */
export function seededMarkdownDocuments(rng: Rng, count: number): string[] {
  const { between, pick } = rng;
  const word = () => pick(WORDS);
  const inline = (): string =>
    pick<() => string>([
      word,
      () => `*${word()}*`,
      () => `_${word()}_`,
      () => `**${word()} ${word()}**`,
      () => `__${word()}__`,
      () => `\`${word()}\``,
      () => '`` a ` b ``',
      () => '`multi\nline`',
      () => `[${word()}](http://x.org/${word()} "t")`,
      () => `[ref ${word()}][r${between(1, 3)}]`,
      () => `[r${between(1, 3)}]`,
      () => `<http://example.com/${pick(['a', 'b_c', 'q?x=1'])}>`,
      () => '<me@example.org>',
      () => `![alt *${word()}* \`c\`](i.png)`,
      () => `<span class="x">${word()}</span>`,
      () => '<!-- c -->',
      () => pick(['&amp;', '&copy;', '&#65;', '&#x263A;', '&bogus;']),
      () => pick(['\\*', '\\_', '\\|', '\\\\', '\\[']),
      () => `${word()}  \n${word()}`,
      () => `${word()}\\\n${word()}`,
      () => `${word()}\n${word()}`,
      () => `https://t.me/${word()}_gov/${between(1, 99)}`,
      () => `www.example.com/${word()}`,
      () => pick(['*', '_', '**', '`', '<', '>', '&', '|', '[', ']', '!']),
      () => `***${word()}***`,
      () => '*a **b** c*',
      () => '_a_b_',
      () => `\t${word()}`,
      () => pick(['~', '~~gone~~', '~one~', '(~1 GB)', 'a~b', '~~', ' ~x', 'x~ ']),
      () =>
        pick([
          '`https://x.org/*a*`',
          '`[^1]`',
          '`@scope/pkg_x`',
          '`` `www.x.org/_a_` ``',
          '\\`https://x.org/_b_`',
        ]),
      () => pick(['first_last@example.org', '`x`@example.org_', 'a.b+c@x.org']),
    ])();
  const line = () => Array.from({ length: between(1, 6) }, inline).join(pick([' ', ' ', '', '  ']));
  const block = (depth: number): string =>
    pick<() => string>([
      line,
      () => `${line()}\n${line()}`,
      () => `${'#'.repeat(between(1, 7))} ${line()}${pick(['', ' ##', ' #'])}`,
      () => `${line()}\n${pick(['===', '---', '-', '= ='])}`,
      () =>
        '```' +
        pick(['', 'js', 'py extra', 'c\\+\\+', 'a&amp;b', ' spaced']) +
        `\n${line()}\n\n  ${word()}\n` +
        pick(['```', '````', '', '``` x']),
      () => `    code ${word()}\n    more\n\n    after blank\n`,
      () => '\tTabbed code',
      () =>
        depth > 2
          ? line()
          : Array.from(
              { length: between(1, 4) },
              () =>
                `${pick(['-', '*', '+'])} ${depth > 1 ? line() : block(depth + 1).replace(/\n/g, '\n  ')}`,
            ).join(pick(['\n', '\n\n'])),
      () =>
        depth > 2
          ? line()
          : Array.from(
              { length: between(1, 4) },
              (_, i) =>
                `${between(0, 12) + i}${pick(['.', ')'])} ${depth > 1 ? line() : block(depth + 1).replace(/\n/g, '\n   ')}`,
            ).join(pick(['\n', '\n\n'])),
      () => `-\n  ${line()}`,
      () => '1.\n',
      () => `- \n- ${line()}`,
      () => (depth > 2 ? line() : `> ${block(depth + 1).replace(/\n/g, pick(['\n> ', '\n']))}`),
      () =>
        `| ${word()} | ${word()} |\n|${pick(['---', ':--', ':-:', '--:'])}|---|\n` +
        `| ${line().replace(/\n/g, ' ')} | ${pick(['`a|b`', 'a \\| b', 'x', ''])} |` +
        (between(0, 3) === 0 ? '\n| ragged |' : '') +
        (between(0, 3) === 0 ? '\n| a | b | c |' : ''),
      () => `${word()} | ${word()}\n---|---\n${word()} | ${word()}`,
      () => `${line()}\n| a | b |\n|---|---|\n| 1 | 2 |`,
      () => `| a |\n|---|\n| 1 |\n${pick(['', 'lazy line', '> q', '- item'])}`,
      () => pick(['***', '---', '___', '* * *']),
      () => `[r${between(1, 3)}]: http://ref.example/${between(1, 9)} "title"`,
      () => `<div>\n${line()}\n</div>`,
      () => '<div>\n\n*md inside*\n\n</div>',
      () => `<!--\ncomment ${word()}\n-->`,
      () => '<script>\nvar a = "<b>";\n</script>',
      () => '<?php echo 1; ?>',
      () => '<br/>',
      () => `<details><summary>${word()}</summary>\n\n${line()}\n\n</details>`,
      () => `~~~${pick(['', 'sh'])}\n${line()}\n~~~`,
      () => `Note[^${between(1, 2)}] ${line()}\n\n[^${between(1, 2)}]: ${line()}`,
      () => `- [${pick([' ', 'x', 'X'])}] ${line()}`,
    ])();
  return Array.from({ length: count }, () => {
    const front =
      between(0, 4) === 0
        ? `---\ntitle: ${word()}\n${pick(['', 'tags: [a, b]\n'])}---\n${pick(['', '\n'])}`
        : '';
    const blocks = Array.from({ length: between(1, 10) }, () => block(0));
    return front + blocks.join(pick(['\n\n', '\n\n', '\n', '\n\n\n'])) + pick(['', '\n']);
  });
}

/**
 * Copies of a few lines of real Markdown with a few edits each: a character of markup or a line break
 * inserted, a character deleted, a line repeated elsewhere. They stay close to what people write.
 */
export function mutatedMarkdown(rng: Rng, sources: string[], count: number): string[] {
  const { between, pick } = rng;
  const marks = [
    '*',
    '_',
    '`',
    '[',
    ']',
    '(',
    ')',
    '<',
    '>',
    '|',
    '-',
    '#',
    '\n',
    '\n\n',
    ' ',
    '    ',
    '1. ',
    '- ',
    '> ',
    '!',
    '\\',
    '&',
    '"',
    ':',
  ];
  return Array.from({ length: count }, () => {
    const lines = pick(sources).split('\n');
    const from = between(0, lines.length - 1);
    let text = lines.slice(from, from + between(1, 25)).join('\n');
    for (let edits = between(1, 6); edits > 0; edits--) {
      const at = between(0, text.length);
      const edit = between(0, 2);
      if (edit === 0) text = text.slice(0, at) + pick(marks) + text.slice(at);
      else if (edit === 1) text = text.slice(0, at) + text.slice(at + 1);
      else {
        const all = text.split('\n');
        all.splice(between(0, all.length - 1), 0, pick(all));
        text = all.join('\n');
      }
    }
    return text;
  });
}
