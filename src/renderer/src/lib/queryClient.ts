import { QueryClient } from '@tanstack/react-query';
import { StudioApiError } from './studioApi';

/** Retries only when the server could not be reached; an answer (even an error) is final. */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  return error instanceof StudioApiError && error.code === 'network_error' && failureCount < 2;
}

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: shouldRetry, staleTime: 5_000 },
      mutations: { retry: false },
    },
  });
}

export const queryKeys = {
  info: ['info'] as const,
  listings: ['listings'] as const,
  keys: ['keys'] as const,
  wallets: ['wallets'] as const,
};
