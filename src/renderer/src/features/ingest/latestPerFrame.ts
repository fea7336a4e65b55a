/**
 * Passes on only the latest value pushed, at most once per animation frame. A job's event stream sends a
 * snapshot for each stage of each file: drawing every one of a 1,500-file ingestion held the page's
 * main thread for most of the job.
 */
export function latestPerFrame<T>(deliver: (value: T) => void): {
  push: (value: T) => void;
  cancel: () => void;
} {
  let latest: T;
  let frame: number | undefined;
  return {
    push(value) {
      latest = value;
      frame ??= requestAnimationFrame(() => {
        frame = undefined;
        deliver(latest);
      });
    },
    /** Drops the value waiting for its frame (the stream's end delivers the final one itself). */
    cancel() {
      if (frame !== undefined) cancelAnimationFrame(frame);
      frame = undefined;
    },
  };
}
