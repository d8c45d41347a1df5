import { afterEach, describe, expect, it } from 'vitest';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import { useAuth } from '../../src/lib/auth/AuthProvider';
import { Header } from '../../src/components/Header';
import { calls, renderApp, serve } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const user = aUser({ id: 'u1', email: 'grace@example.org', firstName: '', role: 'ADMIN' });
const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };

function LogoutButton() {
  const { logout, isAuthenticated } = useAuth();
  return <button type="button" onClick={() => logout()}>{isAuthenticated ? 'signed-in' : 'signed-out'}</button>;
}

describe('logout', () => {
  it('calls the server only when tokens exist', async () => {
    serve([]);
    renderApp(<LogoutButton />, { path: '/x', at: '/x' });
    await userEvent.click(await screen.findByRole('button', { name: 'signed-out' }));
    await waitFor(() => expect(screen.getAllByTestId('location')[0]).toHaveTextContent('/login'));
    expect(calls.filter((c) => c.url === '/api/auth/logout')).toHaveLength(0);
  });
  it('clears local data and goes to /login even when the call fails', async () => {
    storeAuth(user, tokens);
    serve([{ method: 'POST', url: /\/api\/auth\/logout$/, status: 500, body: { success: false, message: 'down', error: 'internal_error' } }]);
    renderApp(<LogoutButton />, { path: '/x', at: '/x' });
    await userEvent.click(await screen.findByRole('button', { name: 'signed-in' }));
    await waitFor(() => expect(screen.getAllByTestId('location')[0]).toHaveTextContent('/login'));
    const call = calls.find((c) => c.url === '/api/auth/logout')!;
    expect(JSON.parse(call.data as string)).toEqual({ refreshToken: 'ref' });
    expect(localStorage.getItem('sanitas.tokens')).toBeNull();
    expect(localStorage.getItem('sanitas.user')).toBeNull();
  });
});

describe('header', () => {
  it('shows the email initial and local part, the Admin link, and signs out to / with a toast', async () => {
    storeAuth(user, tokens);
    serve([{ method: 'POST', url: /\/api\/auth\/logout$/, body: { success: true, message: 'Logged out successfully', data: null } }]);
    renderApp(<Header />, { path: '/dashboard', at: '/dashboard' });
    expect(await screen.findByTestId('user-menu-name')).toHaveTextContent('grace');
    expect(screen.getByRole('navigation', { name: 'Main' })).toHaveTextContent('Admin');
    await userEvent.click(screen.getByRole('button', { name: /^grace\b.*user menu/i }));
    expect(screen.getByRole('menuitem', { name: 'File History' })).toBeInTheDocument();
    expect(screen.getByRole('menuitem', { name: 'Profile Settings' })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('menuitem', { name: 'Sign out' }));
    expect(await screen.findByText('Logged out successfully')).toBeInTheDocument();
    await waitFor(() => expect(screen.getAllByTestId('location')[0]).toHaveTextContent(/^\/$/));
  });
  it('toasts Error logging out when the server call fails', async () => {
    storeAuth(user, tokens);
    serve([{ method: 'POST', url: /\/api\/auth\/logout$/, status: 500, body: { success: false, message: 'down', error: 'internal_error' } }]);
    renderApp(<Header />, { path: '/dashboard', at: '/dashboard' });
    await userEvent.click(await screen.findByRole('button', { name: /user menu/i }));
    await userEvent.click(screen.getByRole('menuitem', { name: 'Sign out' }));
    expect(await screen.findByText('Error logging out')).toBeInTheDocument();
    await waitFor(() => expect(screen.getAllByTestId('location')[0]).toHaveTextContent('/login'));
  });
});

describe('logout after the server already ended the session', () => {
  it('treats a 401 from /api/auth/logout as signed out', async () => {
    storeAuth(user, tokens);
    serve([{ method: 'POST', url: /\/api\/auth\/logout$/, status: 401, body: { success: false, message: 'Authentication required. Please sign in.', error: 'unauthorized' } }]);
    renderApp(<Header />, { path: '/dashboard', at: '/dashboard' });
    await userEvent.click(await screen.findByRole('button', { name: /user menu/i }));
    await userEvent.click(screen.getByRole('menuitem', { name: 'Sign out' }));
    expect(await screen.findByText('Logged out successfully')).toBeInTheDocument();
    await waitFor(() => expect(screen.getAllByTestId('location')[0]).toHaveTextContent(/^\/$/));
    expect(localStorage.getItem('sanitas.tokens')).toBeNull();
  });
});
