/** CSV records with trimmed cells, blank records left out (csvWorker.mjs); throws csv-parse's CsvError. */
export declare function readCsvRecords(text: string, delimiter: string): string[][];
