import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, render, screen, waitFor } from '@testing-library/react';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import { ErrorBoundary } from '../../src/components/ErrorBoundary';
import StatusPage from '../../src/features/files/components/StatusPage';
import DashboardPage from '../../src/features/dashboard/components/DashboardPage';
import { calls, renderApp, serve } from './harness';
import { aPlanTable, aUser, planOf } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => {
  apiClient.defaults.adapter = adapter;
  vi.useRealTimers();
});

const user = aUser({ id: 'u1', email: 'ada@example.org', firstName: 'Ada', role: 'USER' });
const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown) => ({ success: true, message: 'ok', data });
const file = (status: string, extra = {}) => ({
  id: 'f1', originalName: 'a.docm', originalSize: 2048, sanitizedName: null, sanitizedSize: null, status, createdAt: '2026-01-01T00:00:00Z',
  expiresAt: '2026-01-02T00:00:00Z', downloadCount: 0, isExpired: false, ...extra,
});

describe('status screen polling', () => {
  it('re-fetches every 3 s while PROCESSING and stops at COMPLETED', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    storeAuth(user, tokens);
    const answers = [
      ok({ file: file('PENDING'), job: { state: 'queued', progress: 0 } }),
      ok({ file: file('PROCESSING'), job: { state: 'running', progress: 140 } }),
      ok({ file: file('COMPLETED', { sanitizedName: 'a.docx', sanitizedSize: 1024, report: { findings: [{ kind: 'macro', location: 'word/vbaProject.bin', action: 'removed', detail: 'VBA project' }] } }), job: { state: 'completed', progress: 100 } }),
    ];
    let n = 0;
    serve([{ method: 'GET', url: /\/api\/process\/status\/f1$/, get body() { return answers[Math.min(n++, answers.length - 1)]; } }]);
    renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    expect((await screen.findAllByText('PENDING', { selector: '[data-testid="status-badge"]' }, { timeout: 3000 })).length).toBeGreaterThan(0);
    expect(screen.queryByRole('link', { name: 'Download' })).not.toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(3000));
    expect(await screen.findAllByText('PROCESSING')).not.toHaveLength(0);
    expect(screen.getByTestId('progress-percent')).toHaveTextContent('100%'); // 140 is capped
    await act(() => vi.advanceTimersByTimeAsync(3000));
    expect(await screen.findByRole('link', { name: 'Download' })).toHaveAttribute('href', '/download/f1');
    expect(screen.getByTestId('status-announcement')).toHaveTextContent('Processing finished: the sanitized file is ready to download.');
    expect(screen.getAllByText('VBA project').length).toBeGreaterThan(0);
    const fetched = calls.filter((c) => c.url.endsWith('/status/f1')).length;
    await act(() => vi.advanceTimersByTimeAsync(10_000));
    expect(calls.filter((c) => c.url.endsWith('/status/f1')).length).toBe(fetched);
  });

  it('says a file waits in the queue (not "Processing 0%") and announces the outcome', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    storeAuth(user, tokens);
    const answers = [
      ok({ file: file('PENDING'), job: { state: 'waiting', progress: 0 } }),
      ok({ file: file('FAILED', { errorMessage: 'The file is damaged.' }), job: { state: 'failed', progress: 0 } }),
    ];
    let n = 0;
    serve([{ method: 'GET', url: /\/api\/process\/status\/f1$/, get body() { return answers[Math.min(n++, answers.length - 1)]; } }]);
    renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    expect(await screen.findByTestId('progress-state')).toHaveTextContent('Waiting in queue');
    expect(screen.queryByTestId('progress-percent')).not.toBeInTheDocument();
    const live = screen.getByTestId('status-announcement');
    expect(live).toHaveAttribute('aria-live', 'polite');
    expect(live).toHaveTextContent(/^$/);
    await act(() => vi.advanceTimersByTimeAsync(3000));
    await waitFor(() => expect(live).toHaveTextContent('Processing failed: The file is damaged.'));
    // The same element: a live region that existed before its text changed is read out.
    expect(screen.getByTestId('status-announcement')).toBe(live);
  });

  it('shows the error message of a FAILED file and no Download', async () => {
    storeAuth(user, tokens);
    serve([{ method: 'GET', url: /\/api\/process\/status\/f1$/, body: ok({ file: file('FAILED', { errorMessage: 'The file is encrypted.', errorCode: 'encrypted' }), job: null }) }]);
    renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    expect((await screen.findAllByText('The file is encrypted.')).length).toBeGreaterThan(0);
    expect(screen.getByText('encrypted', { selector: 'code' })).toBeInTheDocument();
    expect(screen.queryByRole('link', { name: 'Download' })).not.toBeInTheDocument();
  });

  it('goes home when the status cannot be loaded', async () => {
    storeAuth(user, tokens);
    serve([{ method: 'GET', url: /\/api\/process\/status\/f1$/, status: 404, body: { success: false, message: 'File not found', error: 'not_found' } }]);
    renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    expect(await screen.findByText('Failed to load file status')).toBeInTheDocument();
    await waitFor(() => expect(screen.getAllByTestId('location')[0]).toHaveTextContent(/^\/$/));
  });
});

describe('dashboard quota states', () => {
  const stats = (used: number, quota: number, near: boolean, over: boolean, role = 'USER') => ok({
    user: { role, memberSince: '2026-01-01T00:00:00Z' },
    currentPeriod: { uploadsUsed: used, uploadQuota: quota, quotaUtilization: quota > 0 ? (used / quota) * 100 : 0, start: '2026-01-01T00:00:00Z' },
    limits: { isOverQuota: over, isNearQuota: near, daysUntilReset: 4 },
    overall: { totalFiles: used, totalStorageUsed: 1048576, storageQuota: 5368709120, storageUtilization: 0.02 },
    verdicts: { clean: 1, cleaned: 2, partial: 3, refused: 4 },
  });
  const history = ok([{ month: '2026-01', uploads: 4, successful: 3, totalSize: 2048 }]);
  const plansRoute = { method: 'GET', url: /\/api\/plans$/, body: ok(aPlanTable()) };

  for (const [label, body, expected] of [
    ['near', stats(85, 100, true, false), 'Approaching Limit'],
    ['over', stats(100, 100, true, true), 'Quota Exceeded'],
  ] as const) {
    it(`labels the ${label} state`, async () => {
      storeAuth(user, tokens);
      serve([{ method: 'GET', url: /\/api\/usage\/stats$/, body }, { method: 'GET', url: /\/api\/usage\/history/, body: history }, plansRoute]);
      renderApp(<DashboardPage />, { path: '/dashboard', at: '/dashboard' });
      expect(await screen.findByTestId('quota-label')).toHaveTextContent(expected);
      expect(screen.getByText('75%')).toBeInTheDocument();
      expect(await screen.findByText('Upgrade to Enterprise')).toBeInTheDocument();
      expect(calls.find((c) => c.url.includes('/api/usage/history'))!.url).toContain('months=6');
    });
  }

  it('shows no warning for a normal or unlimited quota, and no teaser for admins', async () => {
    storeAuth({ ...user, role: 'ADMIN', plan: planOf('ADMIN') }, tokens);
    serve([{ method: 'GET', url: /\/api\/usage\/stats$/, body: stats(7, -1, false, false, 'ADMIN') }, { method: 'GET', url: /\/api\/usage\/history/, body: history }, plansRoute]);
    renderApp(<DashboardPage />, { path: '/dashboard', at: '/dashboard' });
    expect(await screen.findByTestId('quota-usage')).toHaveTextContent('7 / Unlimited');
    expect(screen.queryByTestId('quota-label')).not.toBeInTheDocument();
    expect(screen.queryByText('Upgrade to Enterprise')).not.toBeInTheDocument();
  });
});

describe('error boundary', () => {
  it('shows the general error screen with Reload Page', () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    const Boom = () => { throw new Error('boom'); };
    render(<ErrorBoundary><Boom /></ErrorBoundary>);
    expect(screen.getByText('Oops! Something went wrong')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Reload Page' })).toBeInTheDocument();
    spy.mockRestore();
  });
});

describe('dashboard verification banner', () => {
  it('offers to resend the verification email to an unverified user', async () => {
    storeAuth({ ...user, isEmailVerified: false }, tokens);
    serve([
      { method: 'GET', url: /\/api\/usage\/stats$/, body: ok({ user: { role: 'USER', memberSince: '2026-01-01T00:00:00Z' }, currentPeriod: { uploadsUsed: 0, uploadQuota: 100, quotaUtilization: 0, start: '' }, limits: { isOverQuota: false, isNearQuota: false, daysUntilReset: 3 }, overall: { totalFiles: 0, totalStorageUsed: 0, storageQuota: -1, storageUtilization: 0 }, verdicts: { clean: 0, cleaned: 0, partial: 0, refused: 0 } }) },
      { method: 'GET', url: /\/api\/usage\/history/, body: ok([]) },
      { method: 'POST', url: /\/api\/auth\/resend-verification$/, body: { success: true, message: 'A new verification email has been sent.', data: null } },
    ]);
    renderApp(<DashboardPage />, { path: '/dashboard', at: '/dashboard' });
    const { default: userEvent } = await import('@testing-library/user-event');
    await userEvent.click(await screen.findByRole('button', { name: 'Resend verification email' }));
    expect(await screen.findByText('A new verification email has been sent.')).toBeInTheDocument();
    expect(calls.some((c) => c.url === '/api/auth/resend-verification' && c.method === 'POST')).toBe(true);
  });
});
