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
      // What older Chromium (and Electron's own docs) look at instead: any non-empty returnValue.
      event.returnValue = true;
    };
    window.addEventListener('beforeunload', ask);
    return () => window.removeEventListener('beforeunload', ask);
  }, [active]);
}
