import type { ReactNode } from 'react';
import { render } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router-dom';
import { ToastContainer } from 'react-toastify';
import { AxiosError, type InternalAxiosRequestConfig } from 'axios';
import { apiClient } from '../../src/lib/api-client';
import { AuthProvider } from '../../src/lib/auth/AuthProvider';

export type Route_ = { method: string; url: RegExp; status?: number; body: unknown };
export const calls: { method: string; url: string; data: unknown; auth?: string }[] = [];

/** Answers API calls from a table, the way the backend would (no network). */
export function serve(routes: Route_[]) {
  calls.length = 0;
  apiClient.defaults.adapter = async (config: InternalAxiosRequestConfig) => {
    const method = (config.method ?? 'get').toUpperCase();
    const url = config.url ?? '';
    calls.push({ method, url, data: config.data, auth: config.headers.get('Authorization') as string | undefined });
    const route = routes.find((r) => r.method === method && r.url.test(url));
    const status = route ? route.status ?? 200 : 404;
    const data = route ? route.body : { success: false, message: `No route ${method} ${url}`, error: 'not_found' };
    const response = { data, status, statusText: '', headers: {}, config };
    if (status >= 400) throw new AxiosError('fail', 'ERR_BAD_RESPONSE', config, {}, response);
    return response;
  };
}

export function LocationProbe() {
  const location = useLocation();
  return <div data-testid="location" data-state={JSON.stringify(location.state ?? null)}>{location.pathname}</div>;
}

export function renderApp(ui: ReactNode, { path = '/', at = '/' }: { path?: string; at?: string } = {}) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  return render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[at]}>
        <AuthProvider>
          <Routes>
            <Route path={path} element={ui} />
            <Route path="*" element={<LocationProbe />} />
          </Routes>
          <LocationProbe />
        </AuthProvider>
      </MemoryRouter>
      <ToastContainer />
    </QueryClientProvider>,
  );
}
