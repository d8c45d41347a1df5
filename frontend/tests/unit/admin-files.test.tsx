import { afterEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { AxiosAdapter, InternalAxiosRequestConfig } from 'axios';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import AdminPage from '../../src/features/admin/components/AdminPage';
import {
  DEFAULT_ADMIN_FILE_FILTERS, adminFilesParams, type AdminFileDetail, type AdminFileList, type AdminFileSummary,
} from '../../src/features/admin/api';
import { calls, renderApp, serve, type Route_ } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const admin = aUser({ id: 'a1', email: 'admin@example.org', role: 'ADMIN' });
const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown, message = 'ok') => ({ success: true, message, data });

function aFile(overrides: Partial<AdminFileSummary> = {}): AdminFileSummary {
  return {
    id: 'f1', originalName: 'broken.pdf', originalSize: 2048, status: 'FAILED', detectedType: 'pdf', mode: 'basic',
    createdAt: '2026-03-01T10:00:00Z', expiresAt: '2099-01-01T00:00:00Z', downloadCount: 0, isExpired: false,
    errorMessage: 'The PDF is damaged.', errorCode: 'damaged', userId: 'u1', userEmail: 'ada@example.org', ...overrides,
  };
}
const failed = aFile();
const done = aFile({ id: 'f2', originalName: 'clean.docx', status: 'COMPLETED', detectedType: 'docx', errorMessage: null, errorCode: null, userId: 'u2', userEmail: 'bob@example.org' });
const list = (files: AdminFileSummary[], total = files.length): AdminFileList => ({
  files, types: ['docx', 'pdf'],
  pagination: { page: 1, limit: 20, total, pages: Math.max(1, Math.ceil(total / 20)), hasPrev: false, hasNext: total > 20 },
});
const detail = (file: AdminFileSummary, report: Record<string, unknown> | null = null): AdminFileDetail => ({
  file: { ...file, report }, job: { id: 'j1', state: file.status === 'FAILED' ? 'failed' : 'completed', progress: 0, attempts: 1 },
});

/** Serves `routes` and records the query parameters of each call. */
function serveWithParams(routes: Route_[]) {
  serve(routes);
  const answer = apiClient.defaults.adapter as AxiosAdapter;
  const params: Record<string, unknown>[] = [];
  apiClient.defaults.adapter = (config: InternalAxiosRequestConfig) => {
    params.push({ ...(config.params as Record<string, unknown> | undefined) });
    return answer(config);
  };
  return params;
}

async function openTab() {
  storeAuth(admin, tokens);
  renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
  await userEvent.click(await screen.findByRole('tab', { name: 'File Management' }));
  expect(screen.queryByText('File management interface coming soon...')).not.toBeInTheDocument();
}

describe('admin file management', () => {
  it('lists every user’s files and sends each filter to the API', async () => {
    const params = serveWithParams([
      { method: 'GET', url: /\/api\/admin\/files$/, body: ok(list([failed, done], 45)) },
    ]);
    await openTab();
    const table = await screen.findByRole('table');
    const rows = within(table).getAllByRole('row');
    expect(rows).toHaveLength(3);
    expect(rows[1]).toHaveTextContent('ada@example.org');
    expect(rows[1]).toHaveTextContent('broken.pdf');
    expect(within(rows[1]).getByTestId('status-badge')).toHaveAttribute('data-status', 'FAILED');
    expect(rows[1]).toHaveTextContent('2 KB');
    expect(rows[2]).toHaveTextContent('docx');
    expect(screen.getByText('Page 1 of 3 · 45 files')).toBeInTheDocument();
    const last = () => params[params.length - 1];
    expect(last()).toMatchObject({ page: 1, limit: 20, status: 'ALL' });

    fireEvent.change(screen.getByLabelText('File status'), { target: { value: 'FAILED' } });
    await waitFor(() => expect(last()).toMatchObject({ status: 'FAILED', page: 1 }));
    fireEvent.change(screen.getByLabelText('File type'), { target: { value: 'pdf' } });
    await waitFor(() => expect(last()).toMatchObject({ status: 'FAILED', type: 'pdf' }));
    await userEvent.type(screen.getByLabelText('User email'), 'ada@');
    await waitFor(() => expect(last()).toMatchObject({ user: 'ada@' }));
    fireEvent.change(screen.getByLabelText('Uploaded from'), { target: { value: '2026-03-01' } });
    fireEvent.change(screen.getByLabelText('Uploaded until'), { target: { value: '2026-03-02' } });
    await waitFor(() => expect(last()).toMatchObject({
      createdFrom: new Date(2026, 2, 1).toISOString(), createdBefore: new Date(2026, 2, 3).toISOString(),
    }));
    await userEvent.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(last()).toMatchObject({ page: 2, user: 'ada@', type: 'pdf' }));
    await userEvent.click(screen.getAllByRole('button', { name: 'Show only the files of ada@example.org' })[0]);
    await waitFor(() => expect(last()).toMatchObject({ userId: 'u1', page: 1 }));
    expect(screen.getByText('ada@example.org', { selector: 'strong' })).toBeInTheDocument();
    await userEvent.click(screen.getByRole('button', { name: 'Show every user' }));
    await waitFor(() => expect(last().userId).toBeUndefined());
    expect(calls.every((c) => c.auth === 'Bearer tok')).toBe(true);
  });

  it('says when nothing matches', async () => {
    serve([{ method: 'GET', url: /\/api\/admin\/files$/, body: ok(list([])) }]);
    await openTab();
    expect(await screen.findByTestId('admin-files-empty')).toHaveTextContent('No files match these filters.');
  });

  it('shows a completed file’s findings report', async () => {
    serve([
      { method: 'GET', url: /\/api\/admin\/files$/, body: ok(list([done])) },
      { method: 'GET', url: /\/api\/admin\/files\/f2$/, body: ok(detail(done, { findings: [{ kind: 'macro', location: 'word/vbaProject.bin', action: 'removed', detail: 'VBA project' }] })) },
    ]);
    await openTab();
    await userEvent.click((await screen.findAllByRole('button', { name: 'Details of clean.docx' }))[0]);
    const dialog = await screen.findByRole('dialog', { name: 'clean.docx' });
    const report = await within(dialog).findByTestId('findings-report');
    expect(report).toHaveTextContent('1 finding(s), 1 removed');
    expect(report).toHaveTextContent('Macro');
    expect(within(dialog).queryByRole('button', { name: 'Re-queue' })).not.toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Close' })).toHaveFocus();
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  });

  it('re-queues a FAILED file and shows the server’s refusal', async () => {
    serve([
      { method: 'GET', url: /\/api\/admin\/files$/, body: ok(list([failed])) },
      { method: 'GET', url: /\/api\/admin\/files\/f1$/, body: ok(detail(failed)) },
      { method: 'POST', url: /\/api\/admin\/files\/f1\/requeue$/, body: ok(detail({ ...failed, status: 'PENDING', errorMessage: null, errorCode: null })) },
    ]);
    await openTab();
    await userEvent.click((await screen.findAllByRole('button', { name: 'Details of broken.pdf' }))[0]);
    const dialog = await screen.findByRole('dialog', { name: 'broken.pdf' });
    expect(await within(dialog).findByText('The PDF is damaged.')).toBeInTheDocument();
    expect(within(dialog).getByText('damaged')).toBeInTheDocument();
    expect(within(dialog).getByTestId('no-report')).toHaveTextContent('No findings report');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Re-queue' }));
    expect(await screen.findByText('File queued for processing again')).toBeInTheDocument();
    const requeues = calls.filter((c) => c.method === 'POST' && c.url === '/api/admin/files/f1/requeue').length;
    expect(requeues).toBe(1);
    // The tab's queries are fetched again.
    await waitFor(() => expect(calls.filter((c) => c.url === '/api/admin/files').length).toBeGreaterThan(1));

    serve([
      { method: 'GET', url: /\/api\/admin\/files$/, body: ok(list([failed])) },
      { method: 'GET', url: /\/api\/admin\/files\/f1$/, body: ok(detail(failed)) },
      { method: 'POST', url: /\/requeue$/, status: 409, body: { success: false, message: 'The uploaded file has expired and was deleted; it cannot be processed again.', error: 'expired' } },
    ]);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Re-queue' }));
    expect(await screen.findByText('The uploaded file has expired and was deleted; it cannot be processed again.')).toBeInTheDocument();
  });

  it('deletes a file only after confirmation', async () => {
    serve([
      { method: 'GET', url: /\/api\/admin\/files$/, body: ok(list([failed])) },
      { method: 'GET', url: /\/api\/admin\/files\/f1$/, body: ok(detail(failed)) },
      { method: 'DELETE', url: /\/api\/admin\/files\/f1$/, body: ok({ id: 'f1' }) },
    ]);
    await openTab();
    await userEvent.click((await screen.findAllByRole('button', { name: 'Details of broken.pdf' }))[0]);
    const dialog = await screen.findByRole('dialog', { name: 'broken.pdf' });
    await userEvent.click(await within(dialog).findByRole('button', { name: 'Delete' }));
    const confirm = within(dialog).getByRole('group');
    expect(confirm).toHaveTextContent('Delete broken.pdf of ada@example.org, with its original and sanitized copies? This cannot be undone.');
    await userEvent.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(within(dialog).queryByRole('group')).not.toBeInTheDocument();
    expect(calls.filter((c) => c.method === 'DELETE')).toHaveLength(0);
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await userEvent.click(within(dialog).getByRole('button', { name: 'Delete file' }));
    expect(await screen.findByText('File deleted successfully')).toBeInTheDocument();
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual(['/api/admin/files/f1']);
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
  });
});

describe('adminFilesParams', () => {
  it('sends only the filters that are set, the "until" day whole', () => {
    expect(adminFilesParams(DEFAULT_ADMIN_FILE_FILTERS)).toEqual({ page: 1, limit: 20, status: 'ALL' });
    expect(adminFilesParams({ ...DEFAULT_ADMIN_FILE_FILTERS, page: 0, user: '  bob ', userId: 'u9', type: 'png', from: '2026-12-31', to: '2026-12-31' })).toEqual({
      page: 1, limit: 20, status: 'ALL', user: 'bob', userId: 'u9', type: 'png',
      createdFrom: new Date(2026, 11, 31).toISOString(), createdBefore: new Date(2027, 0, 1).toISOString(),
    });
    expect(adminFilesParams({ ...DEFAULT_ADMIN_FILE_FILTERS, from: 'not a day' })).not.toHaveProperty('createdFrom');
  });
});
