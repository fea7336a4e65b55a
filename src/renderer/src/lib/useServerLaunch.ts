import { useEffect, useState } from 'react';
import { onServerRestarted } from './studioToken';

/**
 * A number that changes each time the page finds the studio server was started again: for effects
 * that read the server outside react-query (a view's jobs), as a dependency that runs them again.
 */
export function useServerLaunch(): number {
  const [launch, setLaunch] = useState(0);
  useEffect(() => onServerRestarted(() => setLaunch((n) => n + 1)), []);
  return launch;
}
