/** CSV records with trimmed cells, blank records left out (csvWorker.mjs); throws csv-parse's CsvError. */
export declare function readCsvRecords(text: string, delimiter: string): string[][];

/** Records packed for postMessage: every cell in `text`; the UTF-16 end of each cell, and the cell count after each record. */
export interface PackedCsvRecords {
  text: string;
  cellEnds: Uint32Array;
  recordEnds: Uint32Array;
}

export declare function packCsvRecords(records: string[][]): PackedCsvRecords;
