import { afterEach, describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { AxiosAdapter, InternalAxiosRequestConfig } from 'axios';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import ReportsPage from '../../src/features/reports/components/ReportsPage';
import AdminPage from '../../src/features/admin/components/AdminPage';
import { AUDIT_PAGE_SIZE, auditParams, type AuditEntry } from '../../src/features/admin/api';
import { formatPeriod, type Report } from '../../src/features/reports/api';
import { calls, renderApp, serve, type Route_ } from './harness';
import { aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
const { createObjectURL } = URL as { createObjectURL: (blob: Blob) => string };
afterEach(() => {
  apiClient.defaults.adapter = adapter;
  URL.createObjectURL = createObjectURL;
});

const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown, message = 'ok') => ({ success: true, message, data });
const page = (total: number, p = 1, limit = 20) =>
  ({ page: p, limit, total, pages: Math.max(1, Math.ceil(total / limit)), hasPrev: p > 1, hasNext: p * limit < total });

/** Serves `routes` and records each call's query parameters; a blob download answers text. */
function serveWithParams(routes: Route_[]) {
  serve(routes);
  const answer = apiClient.defaults.adapter as AxiosAdapter;
  const params: { url: string; params: Record<string, unknown> }[] = [];
  apiClient.defaults.adapter = async (config: InternalAxiosRequestConfig) => {
    params.push({ url: config.url ?? '', params: { ...(config.params as Record<string, unknown> | undefined) } });
    const res = await answer(config);
    if (config.responseType === 'blob') {
      return { ...res, data: new Blob([String(res.data)]), headers: { 'content-disposition': 'attachment; filename="out.csv"' } };
    }
    return res;
  };
  URL.createObjectURL = () => 'blob:test';
  return params;
}

function aReport(overrides: Partial<Report> = {}): Report {
  return {
    id: 'r1', status: 'PENDING', format: 'csv', scope: 'own', userId: 'e1', fileCount: null, size: null, errorMessage: null,
    periodStart: '2026-11-01T00:00:00Z', periodEnd: '2026-11-24T00:00:00Z', createdAt: '2026-11-23T10:00:00Z', completedAt: null,
    expiresAt: '2026-12-23T10:00:00Z', ...overrides,
  };
}

describe('reports page', () => {
  it('refuses accounts whose plan has no reports', async () => {
    storeAuth(aUser({ role: 'USER' }), tokens);
    serve([]);
    renderApp(<ReportsPage />, { path: '/reports', at: '/reports' });
    expect(await screen.findByText('Compliance reports are not part of your plan.')).toBeInTheDocument();
    expect(calls.some((c) => c.url === '/api/reports')).toBe(false);
  });

  it('requests a report, polls while it is generated, then downloads it', async () => {
    storeAuth(aUser({ id: 'e1', role: 'ENTERPRISE' }), tokens);
    let lists = 0;
    const routes: Route_[] = [
      { method: 'POST', url: /\/api\/reports$/, status: 202, body: ok({ report: { id: 'r1', status: 'PENDING' } }) },
      { method: 'GET', url: /\/api\/reports\/r1\/download$/, body: 'file,user\n' },
    ];
    const params = serveWithParams(routes);
    const answer = apiClient.defaults.adapter as AxiosAdapter;
    apiClient.defaults.adapter = async (config) => {
      if (config.method === 'get' && config.url === '/api/reports') {
        lists += 1;
        const reports = lists === 1 ? [] : lists === 2 ? [aReport()] : [aReport({ status: 'COMPLETED', fileCount: 3, size: 2048 })];
        return { data: ok({ reports, pagination: page(reports.length) }), status: 200, statusText: '', headers: {}, config };
      }
      return answer(config);
    };
    renderApp(<ReportsPage />, { path: '/reports', at: '/reports' });
    expect(await screen.findByText('No reports yet.')).toBeInTheDocument();
    expect(screen.queryByLabelText('Files of')).not.toBeInTheDocument();
    await userEvent.clear(screen.getByLabelText('From'));
    await userEvent.type(screen.getByLabelText('From'), '2026-11-01');
    await userEvent.clear(screen.getByLabelText('To'));
    await userEvent.type(screen.getByLabelText('To'), '2026-11-23');
    await userEvent.click(screen.getByRole('button', { name: 'Request report' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST')).toBe(true));
    expect(JSON.parse(calls.find((c) => c.method === 'POST')!.data as string)).toEqual({ from: '2026-11-01', to: '2026-11-23', format: 'csv', scope: 'own' });

    const row = await screen.findByTestId('report-row');
    expect(row).toHaveAttribute('data-status', 'PENDING');
    expect(within(row).getByText('Generating…')).toBeInTheDocument();
    expect(row).toHaveTextContent(formatPeriod('2026-11-01T00:00:00Z', '2026-11-24T00:00:00Z'));
    expect(formatPeriod('2026-11-01T00:00:00Z', '2026-11-24T00:00:00Z')).toMatch(/1.*2026.*23.*2026|2026.*1.*2026.*23/);
    // Polled every 2 s while pending: it becomes COMPLETED without a reload.
    await waitFor(() => expect(screen.getByTestId('report-row')).toHaveAttribute('data-status', 'COMPLETED'), { timeout: 5000 });
    await userEvent.click(within(screen.getByTestId('report-row')).getByRole('button', { name: /Download CSV report/ }));
    await waitFor(() => expect(params.some((p) => p.url === '/api/reports/r1/download')).toBe(true));
  });

  it('lets an admin choose everyone or one user', async () => {
    storeAuth(aUser({ id: 'a1', role: 'ADMIN' }), tokens);
    serve([
      { method: 'GET', url: /\/api\/reports$/, body: ok({ reports: [], pagination: page(0) }) },
      { method: 'GET', url: /\/api\/users$/, body: ok({ users: [aUser({ id: 'u7', email: 'bob@example.org' })], pagination: page(1) }) },
      { method: 'POST', url: /\/api\/reports$/, status: 202, body: ok({ report: { id: 'r2', status: 'PENDING' } }) },
    ]);
    renderApp(<ReportsPage />, { path: '/reports', at: '/reports' });
    await userEvent.selectOptions(await screen.findByLabelText('Files of'), 'user');
    await userEvent.click(screen.getByRole('radio', { name: 'PDF' }));
    // One user is picked the way the admin screens pick one: type part of the address, choose.
    await userEvent.type(screen.getByRole('combobox', { name: 'User' }), 'bob');
    await userEvent.click(await screen.findByRole('option', { name: /bob@example.org/ }));
    expect(await screen.findByTestId('picked-user')).toHaveTextContent('bob@example.org');
    await userEvent.click(screen.getByRole('button', { name: 'Request report' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST')).toBe(true));
    expect(JSON.parse(calls.find((c) => c.method === 'POST')!.data as string)).toMatchObject({ format: 'pdf', scope: 'u7' });
  });
});

describe('admin audit tab', () => {
  const entry = (id: number, overrides: Partial<AuditEntry> = {}): AuditEntry => ({
    id, action: 'policy.created', actorId: 'e1', actorEmail: 'erin@example.org', createdAt: '2026-11-23T10:00:00Z',
    ip: '127.0.0.1', targetType: 'policy', targetId: 'p1', detail: { name: 'No links', version: 1 }, ...overrides,
  });

  it('sends only the filters that are set, with the whole last day', () => {
    const q = auditParams({ page: 2, action: 'auth.sign_in', userId: ' u1 ', from: '2026-11-01', to: '2026-11-02' });
    expect(q).toMatchObject({ page: 2, limit: AUDIT_PAGE_SIZE, action: 'auth.sign_in', userId: 'u1' });
    expect(new Date(q.to!).getTime() - new Date(q.from!).getTime()).toBe(2 * 24 * 3600 * 1000);
    expect(auditParams({ page: 1, action: '', userId: '', from: '', to: '' })).toEqual({ page: 1, limit: AUDIT_PAGE_SIZE });
  });

  it('lists, filters, pages and exports the log', async () => {
    storeAuth(aUser({ id: 'a1', role: 'ADMIN' }), tokens);
    const params = serveWithParams([
      { method: 'GET', url: /\/api\/audit$/, body: ok({ entries: [entry(1), entry(2, { action: 'auth.sign_in_failed', actorId: null, actorEmail: 'x@example.org', detail: null, targetType: null, targetId: null })], pagination: page(60, 1, AUDIT_PAGE_SIZE) }) },
      { method: 'GET', url: /\/api\/audit\/export$/, body: 'id,action\n' },
    ]);
    renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
    await userEvent.click(await screen.findByRole('tab', { name: 'Audit' }));
    const rows = await screen.findAllByTestId('audit-row');
    expect(rows[0]).toHaveTextContent('Policy created');
    expect(rows[0]).toHaveTextContent('name: No links');
    expect(rows[1]).toHaveTextContent('Failed sign-in');
    expect(screen.getByText('Page 1 of 3 · 60 entries')).toBeInTheDocument();

    await userEvent.selectOptions(screen.getByLabelText('Action'), 'policy.created');
    await waitFor(() => expect(params.at(-1)?.params).toMatchObject({ action: 'policy.created', page: 1 }));
    await userEvent.click(within(rows[0]).getByRole('button', { name: 'erin@example.org' }));
    await waitFor(() => expect(params.at(-1)?.params).toMatchObject({ action: 'policy.created', userId: 'e1' }));
    await userEvent.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(() => expect(params.at(-1)?.params).toMatchObject({ page: 2 }));

    await userEvent.click(screen.getByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(params.some((p) => p.url === '/api/audit/export')).toBe(true));
    expect(params.find((p) => p.url === '/api/audit/export')?.params).toEqual({ action: 'policy.created', userId: 'e1' });
  });
});
