import { createParser } from 'eventsource-parser';
import { JobRows, type RowDeltas } from '../../../shared/jobRows';
import { StudioApiError } from './studioApi';
import { studioFetch, studioJson } from './studioFetch';

/**
 * Follows a studio job's server-sent events (`<path>/events`: `progress` snapshots, then `done`) and
 * resolves with the final snapshot. The stream can end without `done` (the server stopped): the
 * snapshot at `<path>` then says where the job is. A stream cut mid-read (the server killed) is a
 * `network_error`, as a request that cannot reach the server is.
 */
export async function followJobEvents<Job>(
  path: string,
  onProgress: (job: Job) => void,
  signal?: AbortSignal,
): Promise<Job> {
  const response = await studioFetch(`${path}/events`, { signal });
  let final: Job | undefined;
  const rows = new JobRows();
  const parser = createParser({
    onEvent: (event) => {
      const job = rows.apply(JSON.parse(event.data) as Job & { delta?: RowDeltas }) as Job;
      if (event.event === 'done') final = job;
      onProgress(job);
    },
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    let piece: ReadableStreamReadResult<string>;
    try {
      piece = await reader.read();
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new StudioApiError({
        code: 'network_error',
        status: 0,
        message: `The connection to the studio server was lost (${(err as Error).message}).`,
      });
    }
    if (piece.done) break;
    parser.feed(piece.value);
  }
  return final ?? studioJson<Job>(path);
}
