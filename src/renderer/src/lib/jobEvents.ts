import { createParser } from 'eventsource-parser';
import { studioFetch, studioJson } from './studioFetch';

/**
 * Follows a studio job's server-sent events (`<path>/events`: `progress` snapshots, then `done`) and
 * resolves with the final snapshot. The stream can end without `done` (the server stopped): the
 * snapshot at `<path>` then says where the job is.
 */
export async function followJobEvents<Job>(
  path: string,
  onProgress: (job: Job) => void,
  signal?: AbortSignal,
): Promise<Job> {
  const response = await studioFetch(`${path}/events`, { signal });
  let final: Job | undefined;
  const parser = createParser({
    onEvent: (event) => {
      const job = JSON.parse(event.data) as Job;
      if (event.event === 'done') final = job;
      onProgress(job);
    },
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
  return final ?? studioJson<Job>(path);
}
