import type { SuiteResult, Table } from './suite';

/** A plain-text table, columns padded, numbers right-aligned. */
export function renderTable(table: Table): string {
  const cells = [table.columns, ...table.rows.map((row) => row.map((c) => String(c)))];
  const widths = table.columns.map((_c, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  const numeric = table.columns.map((_c, i) => table.rows.every((row) => typeof row[i] === 'number'));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [
    table.title,
    line(cells[0]!),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.slice(1).map(line),
  ].join('\n');
}

export function renderSuite(name: string, description: string, result: SuiteResult): string {
  const parts = [`== ${name}: ${description}`];
  for (const table of result.tables) parts.push(renderTable(table));
  if (result.checks.length > 0) {
    parts.push(result.checks.map((c) => `${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}`).join('\n'));
  }
  if (result.notes.length > 0) parts.push(result.notes.map((note) => `- ${note}`).join('\n'));
  return parts.join('\n\n');
}
