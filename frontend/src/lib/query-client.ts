import { QueryClient } from '@tanstack/react-query';
import { ApiError } from './api-client';

export function makeQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        refetchOnWindowFocus: false,
        staleTime: 10_000,
        retry: (count, error) => {
          if (error instanceof ApiError && error.status && error.status < 500) return false;
          return count < 1;
        },
      },
      mutations: { retry: false },
    },
  });
}
