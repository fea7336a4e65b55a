import { useEffect } from 'react';

/**
 * In the desktop app, closing the window quits KB Studio and stops the jobs its server runs. While
 * `active`, the page asks to stay (`beforeunload`); the main process then asks the creator whether to
 * close anyway (`will-prevent-unload`, src/main/window.ts). In a browser (`kbstudio serve`) a closed
 * tab stops nothing, so nothing is asked there.
 */
export function useLeaveGuard(active: boolean): void {
  useEffect(() => {
    if (!active || !window.kbstudio) return;
    const ask = (event: BeforeUnloadEvent) => {
      event.preventDefault();
      // Older Chromium, and Electron, also look at returnValue.
      event.returnValue = '';
    };
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [active]);
}
