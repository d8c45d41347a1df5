import { afterEach, describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { AxiosAdapter, InternalAxiosRequestConfig } from 'axios';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import AdminPage from '../../src/features/admin/components/AdminPage';
import type { AdminFileDetail, AdminFileSummary } from '../../src/features/admin/api';
import { renderApp, serve, type Route_ } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown) => ({ success: true, message: 'ok', data });
const pagination = (total: number) => ({ page: 1, limit: 25, total, pages: 1, hasPrev: false, hasNext: false });

/** Serves `routes` and records each call's URL and query parameters. */
function serveWithParams(routes: Route_[]) {
  serve(routes);
  const answer = apiClient.defaults.adapter as AxiosAdapter;
  const seen: { url: string; params: Record<string, unknown> }[] = [];
  apiClient.defaults.adapter = (config: InternalAxiosRequestConfig) => {
    seen.push({ url: config.url ?? '', params: { ...(config.params as Record<string, unknown> | undefined) } });
    return answer(config);
  };
  return seen;
}

const ada = aUser({ id: 'u7', email: 'ada@example.org', firstName: 'Ada', lastName: 'Lovelace' });
const adam = aUser({ id: 'u8', email: 'adam@example.org' });

describe('admin audit tab: user picker', () => {
  it('searches users by email and filters the log by the picked one', async () => {
    storeAuth(aUser({ id: 'a1', role: 'ADMIN' }), tokens);
    const seen = serveWithParams([
      { method: 'GET', url: /\/api\/audit$/, body: ok({ entries: [], pagination: pagination(0) }) },
      { method: 'GET', url: /\/api\/users$/, body: ok({ users: [ada, adam], pagination: pagination(2) }) },
    ]);
    renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
    await userEvent.click(await screen.findByRole('tab', { name: 'Audit' }));
    const box = await screen.findByRole('combobox', { name: 'User' });
    await userEvent.type(box, 'ada');
    const list = await screen.findByRole('listbox');
    await waitFor(() => expect(within(list).getAllByRole('option')).toHaveLength(2));
    const search = seen.filter((c) => c.url === '/api/users').at(-1);
    expect(search?.params).toMatchObject({ search: 'ada', page: 1 });
    expect(within(list).getAllByRole('option')[0]).toHaveTextContent('Ada Lovelace');

    // Keyboard: down to the second match, Enter picks it.
    await userEvent.keyboard('{ArrowDown}{Enter}');
    expect(await screen.findByTestId('picked-user')).toHaveTextContent('adam@example.org');
    await waitFor(() => expect(seen.filter((c) => c.url === '/api/audit').at(-1)?.params).toMatchObject({ userId: 'u8', page: 1 }));

    await userEvent.click(screen.getByRole('button', { name: 'Any user' }));
    await waitFor(() => expect(seen.filter((c) => c.url === '/api/audit').at(-1)?.params).not.toHaveProperty('userId'));
    const again = await screen.findByRole('combobox', { name: 'User' });
    await userEvent.type(again, 'ada');
    // The mouse picks too.
    await userEvent.click(await screen.findByRole('option', { name: /ada@example\.org/ }));
    await waitFor(() => expect(seen.filter((c) => c.url === '/api/audit').at(-1)?.params).toMatchObject({ userId: 'u7' }));
    expect(screen.getByTestId('picked-user')).toHaveTextContent('ada@example.org');
  });

  it('says when no user matches', async () => {
    storeAuth(aUser({ id: 'a1', role: 'ADMIN' }), tokens);
    serveWithParams([
      { method: 'GET', url: /\/api\/audit$/, body: ok({ entries: [], pagination: pagination(0) }) },
      { method: 'GET', url: /\/api\/users$/, body: ok({ users: [], pagination: pagination(0) }) },
    ]);
    renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
    await userEvent.click(await screen.findByRole('tab', { name: 'Audit' }));
    await userEvent.type(await screen.findByRole('combobox', { name: 'User' }), 'zed');
    expect(await screen.findByText('No user matches “zed”')).toBeInTheDocument();
  });
});

describe('admin file detail: hashes and policy', () => {
  const file: AdminFileSummary = {
    id: 'f1', originalName: 'clean.docx', originalSize: 2048, status: 'COMPLETED', detectedType: 'docx', mode: null,
    createdAt: '2026-03-01T10:00:00Z', expiresAt: '2099-01-01T00:00:00Z', downloadCount: 0, isExpired: false,
    userId: 'u7', userEmail: 'ada@example.org', policy: { id: 'p1', name: 'No hyperlinks', version: 3 },
  };
  const original = 'a'.repeat(64);
  const sanitized = 'b'.repeat(64);

  it('shows both SHA-256 digests and the policy with its version', async () => {
    storeAuth(aUser({ id: 'a1', role: 'ADMIN' }), tokens);
    const detail: AdminFileDetail = { file: { ...file, sha256Original: original, sha256Sanitized: sanitized, report: null }, job: null };
    serve([
      { method: 'GET', url: /\/api\/admin\/files$/, body: ok({ files: [file], types: ['docx'], pagination: pagination(1) }) },
      { method: 'GET', url: /\/api\/admin\/files\/f1$/, body: ok(detail) },
    ]);
    renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
    await userEvent.click(await screen.findByRole('tab', { name: 'File Management' }));
    await userEvent.click((await screen.findAllByRole('button', { name: 'Details of clean.docx' }))[0]);
    const dialog = await screen.findByRole('dialog');
    expect(await within(dialog).findByTestId('hash-original')).toHaveTextContent(original);
    expect(within(dialog).getByTestId('hash-sanitized')).toHaveTextContent(sanitized);
    expect(within(dialog).getByTestId('admin-file-policy')).toHaveTextContent('No hyperlinks');
    expect(dialog).toHaveTextContent('(version 3)');
  });

  it('shows the mode and a dash for digests a file does not have yet', async () => {
    storeAuth(aUser({ id: 'a1', role: 'ADMIN' }), tokens);
    const pending = { ...file, status: 'PENDING' as const, policy: null, mode: 'basic' as const };
    serve([
      { method: 'GET', url: /\/api\/admin\/files$/, body: ok({ files: [pending], types: ['docx'], pagination: pagination(1) }) },
      { method: 'GET', url: /\/api\/admin\/files\/f1$/, body: ok({ file: { ...pending, sha256Original: original, sha256Sanitized: null, report: null }, job: null }) },
    ]);
    renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
    await userEvent.click(await screen.findByRole('tab', { name: 'File Management' }));
    await userEvent.click((await screen.findAllByRole('button', { name: 'Details of clean.docx' }))[0]);
    const dialog = await screen.findByRole('dialog');
    expect(await within(dialog).findByTestId('hash-original')).toHaveTextContent(original);
    expect(within(dialog).queryByTestId('hash-sanitized')).not.toBeInTheDocument();
    expect(within(dialog).queryByTestId('admin-file-policy')).not.toBeInTheDocument();
    expect(dialog).toHaveTextContent('basic');
  });
});
