import type { JobJournal } from '../jobJournal';

/**
 * What the studio keeps on disk of each ingestion while it runs, so that one a stop cut short (a kill,
 * a crash, the app closed) is reported after the restart instead of vanishing with the server's memory.
 */

/** An ingestion of dropped files, or the re-ingestion of one document from its kept original. */
export type IngestJobKind = 'ingest' | 'reingest';

export interface IngestJobEntry {
  id: string;
  listingId: string;
  kind: IngestJobKind;
  /** The names the job was given, in order (a dropped ZIP is one name: its entries are read later). */
  sources: string[];
  startedAt: string;
}

export interface InterruptedIngestion extends IngestJobEntry {
  /**
   * Documents of the listing written after the job started, counted when the interruption was found:
   * 0 means nothing of the job was stored (an ingestion stores everything in one commit at its end);
   * more means it may have reached its commit just before the stop, or another job wrote them.
   */
  changedDocuments: number;
}

/** The journal of running ingestions (src/core/jobJournal.ts). */
export type IngestJobJournal = JobJournal<IngestJobEntry, InterruptedIngestion>;

/** What the creator reads about an interrupted ingestion: what was stored, and what to do now. */
export function interruptionMessage(job: InterruptedIngestion): string {
  const what =
    job.kind === 'reingest'
      ? `The studio stopped before the re-ingestion of '${job.sources[0] ?? 'the document'}' ended`
      : 'The studio stopped before this ingestion ended';
  if (job.changedDocuments === 0) {
    return job.kind === 'reingest'
      ? `${what}, so the document was left as it was. Re-ingest it again from Inspect.`
      : `${what}, so none of its files were stored (an ingestion stores them all at its end). Ingest them again.`;
  }
  const changed = job.changedDocuments === 1 ? '1 document' : `${job.changedDocuments} documents`;
  return `${what}. ${changed} of this listing changed after it started, so it may have stored its files just before the stop. Check the listing's documents, then ingest again what is missing: files already stored come back unchanged.`;
}
