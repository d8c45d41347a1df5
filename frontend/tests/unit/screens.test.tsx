import { afterEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import { ProtectedRoute } from '../../src/components/ProtectedRoute';
import LoginPage from '../../src/features/auth/components/LoginPage';
import RegisterPage from '../../src/features/auth/components/RegisterPage';
import AdminPage from '../../src/features/admin/components/AdminPage';
import UploadPage from '../../src/features/upload/components/UploadPage';
import HistoryPage from '../../src/features/history/components/HistoryPage';
import { calls, renderApp, serve } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const user = aUser({ id: 'u1', email: 'ada@example.org', firstName: 'Ada', role: 'USER' });
const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown, message = 'ok') => ({ success: true, message, data });

describe('protected routes', () => {
  it('redirect to /login, remembering where the user came from', async () => {
    serve([]);
    renderApp(<ProtectedRoute><p>secret</p></ProtectedRoute>, { path: '/history', at: '/history' });
    const probes = await screen.findAllByTestId('location');
    await waitFor(() => expect(probes[0]).toHaveTextContent('/login'));
    expect(screen.queryByText('secret')).not.toBeInTheDocument();
    expect((JSON.parse(screen.getAllByTestId('location')[0].dataset.state!) as { from: { pathname: string } }).from.pathname).toBe('/history');
  });
  it('render the page for a restored session', async () => {
    storeAuth(user, tokens);
    serve([]);
    renderApp(<ProtectedRoute><p>secret</p></ProtectedRoute>, { path: '/history', at: '/history' });
    expect(await screen.findByText('secret')).toBeInTheDocument();
  });
});

describe('login screen', () => {
  it('toasts when fields are missing and calls nothing', async () => {
    serve([]);
    renderApp(<LoginPage />, { path: '/login', at: '/login' });
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Please fill in all fields')).toBeInTheDocument();
    expect(calls.filter((c) => c.url.includes('/login'))).toHaveLength(0);
  });
  it('toasts a failed login', async () => {
    serve([{ method: 'POST', url: /\/api\/auth\/login$/, status: 401, body: { success: false, message: 'Invalid email or password', error: 'invalid_credentials' } }]);
    renderApp(<LoginPage />, { path: '/login', at: '/login' });
    await userEvent.type(screen.getByLabelText('Email address'), 'ada@example.org');
    await userEvent.type(screen.getByLabelText('Password'), 'wrong');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Login failed. Please check your credentials.')).toBeInTheDocument();
    expect(localStorage.getItem('sanitas.tokens')).toBeNull();
  });
  it('signs in, stores the session and goes to /dashboard', async () => {
    serve([{ method: 'POST', url: /\/api\/auth\/login$/, body: ok({ user, tokens }, 'Login successful!') }]);
    renderApp(<LoginPage />, { path: '/login', at: '/login' });
    await userEvent.type(screen.getByLabelText('Email address'), 'ada@example.org');
    await userEvent.type(screen.getByLabelText('Password'), 'right-password');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Login successful!')).toBeInTheDocument();
    await waitFor(() => expect(screen.getAllByTestId('location')[0]).toHaveTextContent('/dashboard'));
    expect(JSON.parse(localStorage.getItem('sanitas.tokens')!)).toEqual(tokens);
  });
  it('shows ?error= messages', async () => {
    serve([]);
    renderApp(<LoginPage />, { path: '/login', at: '/login?error=access_denied' });
    expect(await screen.findByText('Google sign-in was cancelled.')).toBeInTheDocument();
  });
});

describe('register screen', () => {
  it('validates, then sends only filled fields and goes to /login', async () => {
    serve([{ method: 'POST', url: /\/api\/auth\/register$/, status: 201, body: ok({ user, tokens }) }]);
    renderApp(<RegisterPage />, { path: '/register', at: '/register' });
    await userEvent.type(screen.getByLabelText(/^Email address/), 'ada@example.org');
    await userEvent.type(screen.getByLabelText(/^Password/), 'abcdef');
    await userEvent.type(screen.getByLabelText(/^Confirm password/), 'abcdeg');
    await userEvent.click(screen.getByRole('button', { name: 'Create account' }));
    expect(await screen.findByText('Passwords do not match')).toBeInTheDocument();
    await userEvent.clear(screen.getByLabelText(/^Confirm password/));
    await userEvent.type(screen.getByLabelText(/^Confirm password/), 'abcdef');
    await userEvent.click(screen.getByRole('button', { name: 'Create account' }));
    expect(await screen.findByText('Registration successful! Please check your email to verify your account.')).toBeInTheDocument();
    const call = calls.find((c) => c.url === '/api/auth/register')!;
    expect(JSON.parse(call.data as string)).toEqual({ email: 'ada@example.org', password: 'abcdef' });
    await waitFor(() => expect(screen.getAllByTestId('location')[0]).toHaveTextContent('/login'));
  });
  it('toasts the server message on failure', async () => {
    serve([{ method: 'POST', url: /\/api\/auth\/register$/, status: 409, body: { success: false, message: 'An account with this email already exists', error: 'email_taken' } }]);
    renderApp(<RegisterPage />, { path: '/register', at: '/register' });
    await userEvent.type(screen.getByLabelText(/^Email address/), 'ada@example.org');
    await userEvent.type(screen.getByLabelText(/^Password/), 'abcdef');
    await userEvent.type(screen.getByLabelText(/^Confirm password/), 'abcdef');
    await userEvent.click(screen.getByRole('button', { name: 'Create account' }));
    expect(await screen.findByText('An account with this email already exists')).toBeInTheDocument();
  });
});

describe('admin screen', () => {
  it('denies a USER', async () => {
    storeAuth(user, tokens);
    serve([]);
    renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
    expect(await screen.findByRole('heading', { level: 1, name: 'Access Denied - You need admin privileges to access this page.' })).toBeInTheDocument();
  });
});

describe('history screen', () => {
  it('shows the never-uploaded message, then the filtered one', async () => {
    storeAuth(user, tokens);
    const empty = ok({ files: [], stats: { total: 0, completed: 0, processing: 0, pending: 0, failed: 0 }, pagination: { page: 1, limit: 20, total: 0, pages: 0, hasPrev: false, hasNext: false } });
    serve([{ method: 'GET', url: /\/api\/users\/u1\/files$/, body: empty }]);
    renderApp(<HistoryPage />, { path: '/history', at: '/history' });
    expect(await screen.findByText("You haven't uploaded any files yet.")).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Status'), { target: { value: 'FAILED' } });
    expect(await screen.findByText('No files match your current filters.')).toBeInTheDocument();
    const last = calls.filter((c) => c.url.endsWith('/files')).pop()!;
    expect(last.auth).toBe('Bearer tok');
  });
});

describe('upload screen', () => {
  const info = ok({ maxFiles: 2, maxFileSize: 1000, maxFileSizeMB: 0.001, supportedFormats: ['pdf', 'jpg'], modes: ['basic', 'advanced'] });

  it('rejects with the dropzone messages and uploads one call per accepted file', async () => {
    storeAuth(user, tokens);
    serve([
      { method: 'GET', url: /\/api\/upload\/info$/, body: info },
      { method: 'POST', url: /\/api\/upload\/single$/, status: 201, body: ok({ fileId: 'f1', originalName: 'a.pdf', size: 3, status: 'PENDING' }) },
    ]);
    const { container } = renderApp(<UploadPage />, { path: '/upload', at: '/upload' });
    await screen.findByText('Upload guidelines');
    const input = container.querySelector('input[type="file"]') as HTMLInputElement;
    expect(input.accept).toBe('.pdf,.jpg');

    await userEvent.upload(input, [new File(['1'], 'a.pdf'), new File(['2'], 'b.pdf'), new File(['3'], 'c.pdf')], { applyAccept: false });
    expect((await screen.findAllByText(/Too many files/)).length).toBeGreaterThan(0);

    await userEvent.upload(input, [new File(['x'.repeat(2000)], 'big.pdf'), new File(['x'], 'evil.exe'), new File(['abc'], 'a.pdf')], { applyAccept: false });
    expect((await screen.findAllByText(/File is larger than 1000 bytes/)).length).toBeGreaterThan(0);
    expect((await screen.findAllByText(/File type must be one of the supported kinds: documents and images\. \.exe files are not among them\./)).length).toBeGreaterThan(0);
    expect(await screen.findByText('Successfully uploaded 1 file(s). Files are being processed. You can check their status below.')).toBeInTheDocument();
    const uploads = calls.filter((c) => c.url === '/api/upload/single');
    expect(uploads).toHaveLength(1);
    const form = uploads[0].data as FormData;
    expect((form.get('file') as File).name).toBe('a.pdf');
    expect(form.get('mode')).toBe('basic');
    expect(screen.getByRole('link', { name: 'View Status' })).toHaveAttribute('href', '/status/f1');
  });

  it('accepts nothing while the configuration fails to load', async () => {
    storeAuth(user, tokens);
    serve([{ method: 'GET', url: /\/api\/upload\/info$/, status: 500, body: { success: false, message: 'boom', error: 'internal_error' } }]);
    const { container } = renderApp(<UploadPage />, { path: '/upload', at: '/upload' });
    expect((await screen.findAllByText('Failed to load upload configuration. Please refresh the page and try again.')).length).toBeGreaterThan(0);
    const input = container.querySelector('input[type="file"]') as HTMLInputElement;
    expect(input).toBeDisabled();
    fireEvent.change(input, { target: { files: [new File(['abc'], 'a.pdf')] } });
    await new Promise((r) => setTimeout(r, 50));
    expect(calls.filter((c) => c.url === '/api/upload/single')).toHaveLength(0);
  });

  it('toasts per-file failures with the server reason', async () => {
    storeAuth(user, tokens);
    serve([
      { method: 'GET', url: /\/api\/upload\/info$/, body: info },
      { method: 'POST', url: /\/api\/upload\/single$/, status: 403, body: { success: false, message: 'Monthly upload quota exceeded', error: 'quota_exceeded' } },
    ]);
    const { container } = renderApp(<UploadPage />, { path: '/upload', at: '/upload' });
    await screen.findByText('Upload guidelines');
    const input = container.querySelector('input[type="file"]') as HTMLInputElement;
    await userEvent.upload(input, [new File(['abc'], 'a.pdf')]);
    expect(await screen.findByText('Failed to upload a.pdf: Monthly upload quota exceeded')).toBeInTheDocument();
  });
});
