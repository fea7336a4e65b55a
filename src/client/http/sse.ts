import { createParser, type EventSourceMessage } from 'eventsource-parser';

export type { EventSourceMessage };

/**
 * The events of a Server-Sent Events body, in order, as they arrive; comments (`: ping`) are
 * dropped. An event cut off before its closing blank line is not yielded (as the SSE standard says).
 * Stopping the iteration cancels the body.
 */
export async function* serverSentEvents(
  body: ReadableStream<Uint8Array>,
): AsyncGenerator<EventSourceMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  let ended = false;
  try {
    while (!ended) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        parser.feed(decoder.decode());
      } else {
        parser.feed(decoder.decode(value, { stream: true }));
      }
      while (pending.length > 0) yield pending.shift()!;
    }
  } finally {
    if (!ended) await reader.cancel().catch(() => {});
  }
}
