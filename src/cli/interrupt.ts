/** The signals that stop a long command: Ctrl-C in a terminal, or a service manager's stop. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/** 128 + the signal's number, as a shell reports a process the signal ended. */
export const exitCodeOf = (signal: StopSignal): number => (signal === 'SIGINT' ? 130 : 143);

export interface SignalAbort {
  /** Aborted once SIGINT or SIGTERM arrives. */
  signal: AbortSignal;
  /** The signal that aborted it, if one did. */
  interruptedBy(): StopSignal | undefined;
  /** Stops listening: a signal after this ends the process as usual. */
  dispose(): void;
}

/**
 * Until `dispose`, SIGINT or SIGTERM aborts the returned signal, after `onStop` (a progress bar giving
 * the terminal its cursor back at once, while the cancel is under way). Each is handled once: a second
 * Ctrl-C, with the handler gone, ends the process.
 */
export function abortOnStopSignals(onStop?: () => void): SignalAbort {
  const controller = new AbortController();
  let by: StopSignal | undefined;
  const onSignal = (signal: StopSignal) => {
    by = signal;
    onStop?.();
    controller.abort(new Error(`Interrupted by ${signal}`));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    interruptedBy: () => by,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
