/** Messages between the fuzz harness and its child process. */
import type { CoverageDelta } from './coverage';

export const FUZZ_TARGETS = ['pdf', 'docx', 'html', 'markdown', 'json', 'csv', 'zip', 'jsonl'] as const;
export type FuzzTargetName = (typeof FUZZ_TARGETS)[number];

export interface ChildRequest {
  id: number;
  target: FuzzTargetName;
  /** The input, base64 (IPC messages are JSON). */
  bytes: string;
  source: string;
}

export type ChildOutcome =
  | { status: 'ok'; sections: number }
  | { status: 'refused'; code: string; message: string }
  | { status: 'crash'; name: string; message: string; stack: string };

export type ChildReply = ChildOutcome & {
  id: number;
  ms: number;
  /** The child's resident set size after the input, in bytes. */
  rss: number;
  /** Files the previous inputs left in the child's scratch folder (should stay 0). */
  scratchEntries: number;
  /** Parser code first covered (in this child process) by this input. */
  coverage: CoverageDelta;
};
