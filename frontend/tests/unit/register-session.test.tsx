import { afterEach, describe, expect, it } from 'vitest';
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router-dom';
import { ToastContainer } from 'react-toastify';
import { apiClient } from '../../src/lib/api-client';
import { getStoredTokens, storeAuth } from '../../src/lib/auth/storage';
import { AuthProvider } from '../../src/lib/auth/AuthProvider';
import LoginPage from '../../src/features/auth/components/LoginPage';
import RegisterPage from '../../src/features/auth/components/RegisterPage';
import VerifyEmailPage from '../../src/features/auth/components/VerifyEmailPage';
import { calls, serve } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const user = aUser({ id: 'u1', email: 'ada@example.org', firstName: 'Ada', role: 'USER', isEmailVerified: false });
const tokens = { accessToken: 'new-access', refreshToken: 'new-refresh', expiresIn: 900 };
const ok = (data: unknown, message = 'ok') => ({ success: true, message, data });

function app(at: string) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[at]}>
        <AuthProvider>
          <Routes>
            <Route path="/register" element={<RegisterPage />} />
            <Route path="/login" element={<LoginPage />} />
            <Route path="/verify-email" element={<VerifyEmailPage />} />
          </Routes>
        </AuthProvider>
      </MemoryRouter>
      <ToastContainer />
    </QueryClientProvider>,
  );
}

describe('registration ends on the sign-in page, signed out', () => {
  it('toasts, opens the sign-in form without a session, and ends the session the server opened', async () => {
    serve([
      { method: 'POST', url: /\/api\/auth\/register$/, status: 201, body: ok({ user, tokens }) },
      { method: 'POST', url: /\/api\/auth\/logout$/, body: ok(null, 'Logged out successfully') },
    ]);
    app('/register');
    await userEvent.type(screen.getByLabelText(/^Email address/), 'ada@example.org');
    await userEvent.type(screen.getByLabelText(/^Password/), 'abcdef');
    await userEvent.type(screen.getByLabelText(/^Confirm password/), 'abcdef');
    await userEvent.click(screen.getByRole('button', { name: 'Create account' }));
    expect(await screen.findByText('Registration successful! Please check your email to verify your account.')).toBeInTheDocument();
    expect(await screen.findByRole('heading', { name: 'Sign in to your account' })).toBeInTheDocument();
    expect(screen.queryByText(/You are signed in as/)).not.toBeInTheDocument();
    expect(getStoredTokens()).toBeNull();
    await waitFor(() => expect(calls.some((c) => c.url === '/api/auth/logout')).toBe(true));
    const logout = calls.find((c) => c.url === '/api/auth/logout')!;
    expect(JSON.parse(String(logout.data))).toEqual({ refreshToken: 'new-refresh' });
    expect(logout.auth).toBeUndefined();
  });
});

describe('verification page', () => {
  it('offers the dashboard when signed in', async () => {
    serve([{ method: 'POST', url: /\/api\/auth\/verify-email/, body: ok({ ...user, isEmailVerified: true }, 'Email verified successfully.') },
      { method: 'GET', url: /\/api\/auth\/me$/, body: ok(user) }]);
    storeAuth(user, { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 });
    const signedIn = app('/verify-email?token=abc');
    expect(await screen.findByRole('link', { name: 'Go to your dashboard' })).toHaveAttribute('href', '/dashboard');
    expect(screen.queryByRole('link', { name: 'Go to sign in' })).not.toBeInTheDocument();
    signedIn.unmount();
  });
  it('offers the sign-in page when signed out', async () => {
    serve([{ method: 'POST', url: /\/api\/auth\/verify-email/, body: ok({ ...user, isEmailVerified: true }, 'Email verified successfully.') }]);
    app('/verify-email?token=abc');
    expect(await screen.findByRole('link', { name: 'Go to sign in' })).toHaveAttribute('href', '/login');
    expect(screen.queryByRole('link', { name: 'Go to your dashboard' })).not.toBeInTheDocument();
  });
});
