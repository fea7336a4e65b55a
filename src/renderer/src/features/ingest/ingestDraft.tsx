import { createContext, useContext, useMemo, useState, type ReactNode, type SetStateAction } from 'react';
import { DEFAULT_CSV_ROWS } from './csvRows';
import type { ChunkingFormValues, CsvRowsFormValues, QueuedFile } from './types';

export const DEFAULT_CHUNKING: ChunkingFormValues = {
  strategy: 'recursive',
  chunkSize: 512,
  chunkOverlap: 64,
};

/**
 * What the creator prepared on Ingest and has not ingested yet: the queued files, the chunking
 * settings, the CSV row rule and the document previewed. It lives above the sections, so going to Inspect and back keeps
 * it, for as long as the page is open (File objects cannot be stored, so a reload starts over). It is
 * one for the session, not one per listing: the listing picker chooses where the queue goes, and
 * choosing another listing must not put the queued files out of sight.
 */
export interface IngestDraft {
  queue: QueuedFile[];
  setQueue: (queue: SetStateAction<QueuedFile[]>) => void;
  settings: ChunkingFormValues;
  setSettings: (settings: ChunkingFormValues) => void;
  /** Which columns a CSV row must fill to be kept. */
  csvRows: CsvRowsFormValues;
  setCsvRows: (csvRows: CsvRowsFormValues) => void;
  previewPath: string | null;
  setPreviewPath: (path: string | null) => void;
  /** The paths of the last ingestion sent from this page, in order: its outcome rows name their origin. */
  sent: SentIngestion | undefined;
  setSent: (sent: SentIngestion) => void;
}

export interface SentIngestion {
  jobId: string;
  paths: string[];
}

const IngestDraftContext = createContext<IngestDraft | null>(null);

export function IngestDraftProvider({ children }: { children: ReactNode }) {
  const [queue, setQueue] = useState<QueuedFile[]>([]);
  const [settings, setSettings] = useState(DEFAULT_CHUNKING);
  const [csvRows, setCsvRows] = useState(DEFAULT_CSV_ROWS);
  const [previewPath, setPreviewPath] = useState<string | null>(null);
  const [sent, setSent] = useState<SentIngestion>();
  const draft = useMemo(
    () => ({
      queue,
      setQueue,
      settings,
      setSettings,
      csvRows,
      setCsvRows,
      previewPath,
      setPreviewPath,
      sent,
      setSent,
    }),
    [queue, settings, csvRows, previewPath, sent],
  );
  return <IngestDraftContext.Provider value={draft}>{children}</IngestDraftContext.Provider>;
}

export function useIngestDraft(): IngestDraft {
  const draft = useContext(IngestDraftContext);
  if (!draft) throw new Error('useIngestDraft needs an IngestDraftProvider above it (see App.tsx).');
  return draft;
}
