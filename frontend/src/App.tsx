import { useState } from 'react';
import { BrowserRouter } from 'react-router-dom';
import { QueryClientProvider } from '@tanstack/react-query';
import { ToastContainer } from 'react-toastify';
import { ErrorBoundary } from './components/ErrorBoundary';
import { AuthProvider } from './lib/auth/AuthProvider';
import { TOAST_AUTO_CLOSE_MS } from './lib/constants';
import { makeQueryClient } from './lib/query-client';
import { AppRoutes } from './routes/AppRoutes';

export function App() {
  const [queryClient] = useState(makeQueryClient);
  return (
    <ErrorBoundary>
      <QueryClientProvider client={queryClient}>
        <BrowserRouter>
          <AuthProvider>
            <AppRoutes />
          </AuthProvider>
        </BrowserRouter>
        <ToastContainer position="top-right" autoClose={TOAST_AUTO_CLOSE_MS} closeButton newestOnTop />
      </QueryClientProvider>
    </ErrorBoundary>
  );
}
