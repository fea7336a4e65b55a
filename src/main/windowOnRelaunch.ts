/** What launching the app again (or clicking its Dock icon) does with this instance's window. */
export type RelaunchAction = 'open' | 'restore' | 'focus' | 'none';

export interface ExistingWindow {
  isMinimized(): boolean;
}

/**
 * A window is brought back (restored if minimized) and focused; with none, one is opened on the running
 * studio, so a relaunch always shows something. With no studio yet (still starting: it opens its window
 * once up) or any more (quitting), there is nothing to open.
 */
export function relaunchAction(window: ExistingWindow | undefined, studioRunning: boolean): RelaunchAction {
  if (window) return window.isMinimized() ? 'restore' : 'focus';
  return studioRunning ? 'open' : 'none';
}
