import { useEffect, useSyncExternalStore } from 'react';

/**
 * Why leaving a view would cost something, and so what asks first:
 *
 * - `job`: in the desktop app, closing the window quits KB Studio and stops the jobs its server runs.
 *   While a job runs the page asks to stay (`beforeunload`); the main process then asks the creator
 *   whether to close anyway (`will-prevent-unload`, src/main/window.ts). In a browser
 *   (`kbstudio serve`) a closed tab stops nothing, and neither does going to another section: nothing
 *   is asked there.
 * - `unsaved`: changes not saved yet (Pricing) are lost by every way out, in the browser as in the
 *   desktop app. Going to another section (a link, or the back and forward buttons) or choosing
 *   another listing (`leaveThen`) asks in the page first: Discard or Stay (`LeaveGuardDialog`).
 *   Closing or reloading the window or tab gets the browser's own prompt (`beforeunload`).
 */
export type LeaveCost = 'job' | 'unsaved';

/** One entry per mounted view with unsaved changes. */
const unsavedViews = new Set<object>();
/** What leaving does once the creator chose to discard; null while nothing is asked. */
let pendingLeave: (() => void) | null = null;
/** A hash the page itself is moving to after Discard: let through, not asked about again. */
let allowedHash: string | null = null;
const listeners = new Set<() => void>();
const notify = () => listeners.forEach((listener) => listener());

function askBeforeUnload(event: BeforeUnloadEvent): void {
  event.preventDefault();
  // What older Chromium (and Electron's own docs) look at instead: any non-empty returnValue.
  event.returnValue = true;
}

export function useLeaveGuard(active: boolean, cost: LeaveCost = 'job'): void {
  useEffect(() => {
    if (!active || (cost === 'job' && !window.kbstudio)) return;
    const view = {};
    if (cost === 'unsaved') unsavedViews.add(view);
    window.addEventListener('beforeunload', askBeforeUnload);
    return () => {
      unsavedViews.delete(view);
      window.removeEventListener('beforeunload', askBeforeUnload);
    };
  }, [active, cost]);
}

/** Runs `leave` now, or once the creator chose to discard the unsaved changes of the open view. */
export function leaveThen(leave: () => void): void {
  if (unsavedViews.size === 0) {
    leave();
    return;
  }
  pendingLeave = leave;
  notify();
}

function goTo(hash: string): void {
  allowedHash = hash;
  window.location.hash = hash;
}

/** The question asked before leaving unsaved changes, for the dialog that asks it. */
export function usePendingLeave(): { asking: boolean; discard: () => void; stay: () => void } {
  const asking = useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => pendingLeave !== null,
  );
  return {
    asking,
    discard: () => {
      const leave = pendingLeave;
      pendingLeave = null;
      notify();
      leave?.();
    },
    stay: () => {
      pendingLeave = null;
      notify();
    },
  };
}

// Sections live in the URL hash (lib/sections.ts). Installed when the module loads, before React
// subscribes to `hashchange`, so a refused change is undone before any view reads the hash.
if (typeof window !== 'undefined') {
  // A link to another section: held before the address changes (no history entry is added).
  document.addEventListener(
    'click',
    (event) => {
      if (unsavedViews.size === 0 || event.defaultPrevented || event.button !== 0) return;
      if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      const link = event.target instanceof Element ? event.target.closest('a[href^="#"]') : null;
      const hash = link?.getAttribute('href');
      if (!hash || hash === window.location.hash) return;
      event.preventDefault();
      leaveThen(() => goTo(hash));
    },
    true,
  );
  // The back and forward buttons, or an address typed: the address is put back while the view asks.
  window.addEventListener('hashchange', (event) => {
    const hash = window.location.hash;
    if (hash === allowedHash) {
      allowedHash = null;
      return;
    }
    if (unsavedViews.size === 0) return;
    window.history.replaceState(window.history.state, '', new URL(event.oldURL).hash || '#');
    leaveThen(() => goTo(hash));
  });
}
