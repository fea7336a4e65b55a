import { chunkingError, validChunking } from '../ingest/chunkPreview';
import { csvRequiredColumns, csvRowsError } from '../ingest/csvRows';
import type {
  ChunkingFormValues,
  ChunkingSettings,
  ChunkingStrategy,
  CsvRowsFormValues,
} from '../ingest/types';
import type { DocumentSummary } from './documentsApi';

const STRATEGIES: readonly string[] = ['recursive', 'sentence', 'markdown', 'fixed'];

/** What a document says of how it was ingested: its format (a CSV one has required columns) and metadata. */
type DocumentSettings = Pick<DocumentSummary, 'metadata'> & Partial<Pick<DocumentSummary, 'format'>>;

/**
 * The chunking a document was ingested with (its metadata), as the re-ingest form starts from; null
 * for documents ingested with their own embeddings (JSONL), which are stored again as they are.
 */
export function chunkingOfDocument(doc: Pick<DocumentSummary, 'metadata'>): ChunkingSettings | null {
  const c = doc.metadata.chunking as Record<string, unknown> | undefined;
  if (!c || typeof c.strategy !== 'string' || !STRATEGIES.includes(c.strategy)) return null;
  return {
    strategy: c.strategy as ChunkingStrategy,
    chunkSize: typeof c.chunkSize === 'number' ? c.chunkSize : 512,
    chunkOverlap: typeof c.chunkOverlap === 'number' ? c.chunkOverlap : 64,
  };
}

/**
 * The columns a CSV document's rows had to fill when it was ingested (`csvRequiredColumns` of its
 * chunking: none recorded is the default, every named column), as the CSV rows control holds them;
 * null for any other document.
 */
export function csvRowsOfDocument(doc: DocumentSettings): CsvRowsFormValues | null {
  if (doc.format !== 'csv') return null;
  const c = doc.metadata.chunking as Record<string, unknown> | undefined;
  const columns = Array.isArray(c?.csvRequiredColumns) ? c.csvRequiredColumns.map(String) : undefined;
  if (columns === undefined) return { rule: 'named', columns: [] };
  return columns.length === 0 ? { rule: 'none', columns: [] } : { rule: 'listed', columns };
}

/** "required columns: notes, title" / "…: every named column" / "…: none", as Inspect and Re-ingest say. */
export function requiredColumnsLabel(rows: CsvRowsFormValues): string {
  const columns = csvRequiredColumns(rows);
  if (rows.rule === 'named' || columns === undefined) return 'required columns: every named column';
  return `required columns: ${columns.length === 0 ? 'none' : columns.join(', ')}`;
}

/** The JSON body of POST /studio/documents/:id/reingest. */
export interface ReingestBody extends Partial<ChunkingSettings> {
  /** A CSV document's: the columns a row must fill, [] for none, null for every named column. */
  csvRequiredColumns?: string[] | null;
}

export interface ReingestPlan {
  /** What is sent (not while there is an `error`). */
  body: ReingestBody;
  /** Same bytes and same settings: the server will answer that nothing changed. */
  unchanged: boolean;
  /** Why the settings cannot be sent as they are. */
  error?: string;
}

/**
 * What re-ingesting `doc` with `settings` (and, for a CSV document, `csvRows`: its required columns)
 * sends, and whether it would change anything.
 */
export function reingestPlan(
  doc: DocumentSettings,
  settings: ChunkingFormValues | null,
  csvRows: CsvRowsFormValues | null = null,
): ReingestPlan {
  const current = chunkingOfDocument(doc);
  if (!settings || !current) return { body: {}, unchanged: true };
  const error = chunkingError(settings) ?? (csvRows ? csvRowsError(csvRows) : undefined);
  const currentRows = csvRowsOfDocument(doc);
  const rowsSent = csvRows && currentRows ? (csvRequiredColumns(csvRows) ?? null) : undefined;
  const rowsKept = currentRows ? (csvRequiredColumns(currentRows) ?? null) : undefined;
  const unchanged =
    settings.strategy === current.strategy &&
    settings.chunkSize === current.chunkSize &&
    settings.chunkOverlap === current.chunkOverlap &&
    (rowsSent === undefined || JSON.stringify(rowsSent) === JSON.stringify(rowsKept));
  return {
    body: { ...validChunking(settings), ...(rowsSent !== undefined ? { csvRequiredColumns: rowsSent } : {}) },
    unchanged,
    error,
  };
}
