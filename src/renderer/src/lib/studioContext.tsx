import { createContext, useContext, type ReactNode } from 'react';
import type { StudioApi } from './studioApi';

const StudioApiContext = createContext<StudioApi | null>(null);

export function StudioApiProvider({ api, children }: { api: StudioApi; children: ReactNode }) {
  return <StudioApiContext.Provider value={api}>{children}</StudioApiContext.Provider>;
}

export function useStudioApi(): StudioApi {
  const api = useContext(StudioApiContext);
  if (!api) throw new Error('useStudioApi needs a <StudioApiProvider> above it.');
  return api;
}
