import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import userEvent from '@testing-library/user-event';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import { VERDICT_VALUES, VerdictBadge, VerdictSummary } from '../../src/components/Verdict';
import StatusPage from '../../src/features/files/components/StatusPage';
import DownloadPage from '../../src/features/files/components/DownloadPage';
import DashboardPage from '../../src/features/dashboard/components/DashboardPage';
import HistoryPage from '../../src/features/history/components/HistoryPage';
import { DownloadAllButton } from '../../src/features/files';
import { calls, renderApp, serve } from './harness';
import { aPlanTable, aUser } from './fixtures';

const adapter = apiClient.defaults.adapter;
let created: string[] = [];
let revoked: string[] = [];
beforeEach(() => {
  created = [];
  revoked = [];
  URL.createObjectURL = (() => {
    const url = `blob:test-${created.length + 1}`;
    created.push(url);
    return url;
  });
  URL.revokeObjectURL = ((url: string) => { revoked.push(url); });
});
afterEach(() => {
  cleanup(); // unmount (and revoke) while the URL stubs are in place
  apiClient.defaults.adapter = adapter;
  vi.useRealTimers();
});

const user = aUser({ id: 'u1', email: 'ada@example.org', firstName: 'Ada', role: 'USER' });
const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown) => ({ success: true, message: 'ok', data });
const counts = (extra = {}) => ({ threats: 0, hiddenData: 0, filesDropped: 0, contentDropped: 0, textLayerDropped: false, droppedFiles: [], encryptedHeld: 0, encryptedPassed: 0, ...extra });
const file = (status: string, extra = {}) => ({
  id: 'f1', originalName: 'bundle.zip', originalSize: 2048, sanitizedName: null, sanitizedSize: null, status, createdAt: '2026-01-01T00:00:00Z',
  expiresAt: '2099-01-02T00:00:00Z', downloadCount: 0, isExpired: false, verdict: null, verdictSummary: null, verdictCounts: null, ...extra,
});
const partial = file('COMPLETED', {
  sanitizedName: 'sanitized_bundle.zip', sanitizedSize: 1024, verdict: 'partial',
  verdictSummary: '3 threats removed, 1 file dropped: tool.exe',
  verdictCounts: counts({ threats: 3, filesDropped: 1, droppedFiles: ['tool.exe'], textLayerDropped: true }),
});
const png = new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' });
const statusRoute = (body: unknown) => ({ method: 'GET', url: /\/api\/process\/status\/f1$/, body: ok(body) });

describe('verdict badge and summary', () => {
  it('labels each verdict, and nothing while unfinished', () => {
    const labels = {
      clean: 'Clean – nothing found', cleaned: 'Cleaned',
      partial: 'Partially cleaned – some content was dropped', encrypted: 'Not inspected: encrypted',
      refused: 'Refused',
    };
    expect(VERDICT_VALUES).toEqual(['clean', 'cleaned', 'partial', 'encrypted', 'refused']);
    for (const v of VERDICT_VALUES) {
      const { unmount } = render(<VerdictBadge verdict={v} />);
      expect(screen.getByTestId('verdict-badge')).toHaveTextContent(labels[v]);
      expect(screen.getByTestId('verdict-badge')).toHaveAttribute('data-verdict', v);
      unmount();
    }
    const { container } = render(<VerdictBadge verdict={null} />);
    expect(container).toBeEmptyDOMElement();
  });

  it('says "Your file is clean" only for clean, and shows the server sentence as given', () => {
    for (const v of VERDICT_VALUES) {
      const { unmount } = render(<VerdictSummary file={{ verdict: v, verdictSummary: `sentence for ${v}`, verdictCounts: counts() }} />);
      expect(screen.getByTestId('verdict-sentence')).toHaveTextContent(`sentence for ${v}`);
      if (v === 'clean') expect(screen.getByText('Your file is clean')).toBeInTheDocument();
      else expect(screen.queryByText(/clean$/i, { selector: 'p' })).not.toBeInTheDocument();
      unmount();
    }
  });
});

describe('status page', () => {
  it('shows a partial verdict with the dropped file and the lost text layer, never an all-clear', async () => {
    storeAuth(user, tokens);
    serve([statusRoute({ file: partial, job: { id: 'j', state: 'completed', progress: 100, attempts: 1 }, queuePaused: false }),
      { method: 'GET', url: /\/api\/process\/preview\/f1$/, body: png }]);
    renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    const summary = await screen.findByTestId('verdict-summary');
    expect(summary).toHaveAttribute('data-verdict', 'partial');
    expect(summary).toHaveTextContent('Partially cleaned – some content was dropped');
    expect(summary).toHaveTextContent('3 threats removed, 1 file dropped: tool.exe');
    expect(within(summary).getByText('tool.exe')).toBeInTheDocument();
    expect(summary).toHaveTextContent("Text can't be selected or searched (pages rebuilt as images)");
    expect(screen.queryByText('Your file is clean')).not.toBeInTheDocument();
    expect(screen.getByTestId('status-announcement')).toHaveTextContent('Processing finished: 3 threats removed, 1 file dropped: tool.exe.');
  });

  it('shows the preview of the sanitized file and revokes its URL on leaving', async () => {
    storeAuth(user, tokens);
    serve([statusRoute({ file: partial, job: null, queuePaused: false }), { method: 'GET', url: /\/api\/process\/preview\/f1$/, body: png }]);
    const view = renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    const img = await screen.findByRole('img', { name: 'Preview of the first page of the sanitized file sanitized_bundle.zip' });
    expect(img).toHaveAttribute('src', 'blob:test-1');
    expect(calls.find((c) => c.url.endsWith('/api/process/preview/f1'))?.auth).toBe('Bearer tok');
    view.unmount();
    expect(revoked).toEqual(['blob:test-1']);
  });

  it('shows no preview when there is none, and a short message when it fails', async () => {
    storeAuth(user, tokens);
    serve([statusRoute({ file: partial, job: null, queuePaused: false }),
      { method: 'GET', url: /\/api\/process\/preview\/f1$/, status: 404, body: { success: false, message: 'No preview for this file', error: 'preview_unavailable' } }]);
    const first = renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    await screen.findByTestId('verdict-summary');
    await waitFor(() => expect(calls.some((c) => c.url.endsWith('/preview/f1'))).toBe(true));
    await waitFor(() => expect(screen.queryByTestId('file-preview')).not.toBeInTheDocument());
    expect(screen.queryByRole('img')).not.toBeInTheDocument();
    first.unmount();

    serve([statusRoute({ file: partial, job: null, queuePaused: false }),
      { method: 'GET', url: /\/api\/process\/preview\/f1$/, status: 500, body: { success: false, message: 'boom', error: 'internal_error' } }]);
    renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    expect(await screen.findByTestId('preview-error')).toHaveTextContent('The preview could not be loaded.');
  });

  it('asks for no preview before the file is finished, and explains the wait', async () => {
    storeAuth(user, tokens);
    serve([statusRoute({ file: file('PENDING'), job: { id: 'j', state: 'waiting', progress: 0, attempts: 0, ahead: 4 }, queuePaused: false })]);
    const view = renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    expect(await screen.findByTestId('progress-state')).toHaveTextContent('Waiting in queue (4 ahead)');
    expect(screen.queryByTestId('verdict-summary')).not.toBeInTheDocument();
    expect(calls.some((c) => c.url.includes('/preview/'))).toBe(false);
    view.unmount();

    serve([statusRoute({ file: file('PENDING'), job: { id: 'j', state: 'waiting', progress: 0, attempts: 0, ahead: 0 }, queuePaused: true })]);
    renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    expect(await screen.findByTestId('progress-state')).toHaveTextContent('Paused by the administrator');
  });

  it('downloads in one click and reads the download count again', async () => {
    storeAuth(user, tokens);
    serve([statusRoute({ file: partial, job: null, queuePaused: false }),
      { method: 'GET', url: /\/api\/process\/preview\/f1$/, body: png },
      { method: 'GET', url: /\/api\/process\/download\/f1$/, body: new Blob(['zip']) }]);
    renderApp(<StatusPage />, { path: '/status/:fileId', at: '/status/f1' });
    await userEvent.click(await screen.findByRole('button', { name: 'Download Sanitized File' }));
    await waitFor(() => expect(calls.filter((c) => c.url.endsWith('/api/process/download/f1'))).toHaveLength(1));
    await waitFor(() => expect(calls.filter((c) => c.url.endsWith('/api/process/status/f1')).length).toBeGreaterThan(1));
    expect(screen.getByRole('link', { name: 'Download' })).toHaveAttribute('href', '/download/f1');
  });
});

describe('encrypted content', () => {
  const passed = file('COMPLETED', {
    originalName: 'figures.pdf', sanitizedName: 'sanitized_figures.pdf', sanitizedSize: 2048, verdict: 'encrypted',
    verdictSummary: 'Not inspected: encrypted (1 item delivered unchanged)', verdictCounts: counts({ encryptedPassed: 1 }),
  });
  const held = file('COMPLETED', {
    sanitizedName: 'sanitized_bundle.zip', sanitizedSize: 1024, verdict: 'encrypted',
    verdictSummary: 'Not inspected: encrypted (1 item held back): the PDF is password-protected',
    verdictCounts: counts({ encryptedHeld: 1 }),
  });

  it('says a file delivered unchanged was not inspected, never that it was sanitized', async () => {
    storeAuth(user, tokens);
    serve([statusRoute({ file: passed, job: null, queuePaused: false })]);
    renderApp(<DownloadPage />, { path: '/download/:fileId', at: '/download/f1' });
    expect(await screen.findByText('Encrypted content delivered unchanged')).toBeInTheDocument();
    const summary = screen.getByTestId('verdict-summary');
    expect(summary).toHaveAttribute('data-verdict', 'encrypted');
    expect(summary).toHaveTextContent('Not inspected: encrypted');
    expect(summary).toHaveTextContent('Not inspected: encrypted (1 item delivered unchanged)');
    expect(screen.queryByText('File sanitized successfully')).not.toBeInTheDocument();
    expect(screen.queryByText('Your file is clean')).not.toBeInTheDocument();
  });

  it('says what was held back of a copy that was sanitized', async () => {
    storeAuth(user, tokens);
    serve([statusRoute({ file: held, job: null, queuePaused: false })]);
    renderApp(<DownloadPage />, { path: '/download/:fileId', at: '/download/f1' });
    expect(await screen.findByText('File sanitized, with encrypted content held back')).toBeInTheDocument();
    expect(screen.getByTestId('verdict-sentence')).toHaveTextContent('1 item held back');
    expect(screen.queryByText('File sanitized successfully')).not.toBeInTheDocument();
  });
});

describe('download all', () => {
  it('posts the ids and shows a refusal beside the button', async () => {
    storeAuth(user, tokens);
    serve([{ method: 'POST', url: /\/api\/process\/download-batch$/, status: 409,
      body: { success: false, message: 'Not ready for download: f2', error: 'not_ready' } }]);
    renderApp(<DownloadAllButton fileIds={['f1', 'f2']} />);
    await userEvent.click(screen.getByRole('button', { name: 'Download all (2)' }));
    const error = await screen.findByTestId('download-all-error');
    expect(error).toHaveTextContent('Not ready for download: f2');
    expect(error).toHaveAttribute('role', 'alert');
    expect(screen.getByTestId('download-all')).toHaveAttribute('aria-describedby', 'download-all-error');
    expect(JSON.parse(String(calls[0].data))).toEqual({ fileIds: ['f1', 'f2'] });
  });

  it('history: a verdict column and filter, and the selected files downloaded as one ZIP', async () => {
    storeAuth(user, tokens);
    const rows = [
      { ...partial, id: 'a1', originalName: 'a.zip' },
      { ...file('COMPLETED'), id: 'b2', originalName: 'b.pdf', verdict: 'clean', verdictSummary: 'Nothing found', verdictCounts: counts() },
      { ...file('PENDING'), id: 'c3', originalName: 'c.pdf' },
    ];
    const page = ok({ files: rows, stats: { total: 3, completed: 2, processing: 0, pending: 1, failed: 0 }, pagination: { page: 1, limit: 20, total: 3, pages: 1 } });
    serve([{ method: 'GET', url: /\/api\/users\/u1\/files/, body: page },
      { method: 'POST', url: /\/api\/process\/download-batch$/, body: new Blob(['PK']) }]);
    const params: unknown[] = [];
    const answer = apiClient.defaults.adapter as (config: InternalAxiosRequestConfig) => Promise<AxiosResponse>;
    apiClient.defaults.adapter = (config: InternalAxiosRequestConfig) => {
      params.push(config.params);
      return answer(config);
    };
    renderApp(<HistoryPage />, { path: '/history', at: '/history' });
    const table = await screen.findByRole('table');
    expect(within(table).getByRole('columnheader', { name: 'Verdict' })).toBeInTheDocument();
    expect(within(table).getAllByTestId('verdict-badge').map((b) => b.dataset.verdict)).toEqual(['partial', 'clean']);
    // Only completed files can be ticked; the boxes work from the keyboard.
    expect(within(table).queryByRole('checkbox', { name: 'Select c.pdf' })).not.toBeInTheDocument();
    const boxA = within(table).getByRole('checkbox', { name: 'Select a.zip' });
    boxA.focus();
    await userEvent.keyboard(' ');
    expect(boxA).toBeChecked();
    fireEvent.click(within(table).getByRole('checkbox', { name: 'Select b.pdf' }));
    await userEvent.click(screen.getByRole('button', { name: 'Download selected (2)' }));
    await waitFor(() => expect(calls.some((c) => c.url.endsWith('/download-batch'))).toBe(true));
    const post = calls.find((c) => c.url.endsWith('/download-batch'))!;
    expect(JSON.parse(String(post.data))).toEqual({ fileIds: ['a1', 'b2'] });
    // Counts are read again after the download.
    await waitFor(() => expect(calls.filter((c) => c.url.includes('/api/users/u1/files')).length).toBeGreaterThan(1));

    const select = screen.getByRole('combobox', { name: 'Verdict' });
    expect([...select.querySelectorAll('option')].map((o) => o.textContent)).toEqual(['All verdicts', 'Clean', 'Cleaned', 'Partial', 'Encrypted', 'Refused']);
    await userEvent.selectOptions(select, 'partial');
    await waitFor(() => expect(params).toContainEqual(expect.objectContaining({ verdict: 'partial', page: 1 })));
  });
});

describe('dashboard', () => {
  it('shows the five verdict figures', async () => {
    storeAuth(user, tokens);
    serve([
      { method: 'GET', url: /\/api\/usage\/stats$/, body: ok({
        user: { role: 'USER', memberSince: '2026-01-01T00:00:00Z' },
        currentPeriod: { uploadsUsed: 10, uploadQuota: 100, quotaUtilization: 10, start: '', end: '' },
        limits: { isOverQuota: false, isNearQuota: false, daysUntilReset: 4, maxFileSize: 1, maxFiles: 1 },
        overall: { totalFiles: 10, totalStorageUsed: 0, storageQuota: -1, storageUtilization: 0 },
        verdicts: { clean: 1, cleaned: 2, partial: 3, encrypted: 5, refused: 4 },
      }) },
      { method: 'GET', url: /\/api\/usage\/history/, body: ok([]) },
      { method: 'GET', url: /\/api\/plans$/, body: ok(aPlanTable()) },
    ]);
    renderApp(<DashboardPage />, { path: '/dashboard', at: '/dashboard' });
    const section = await screen.findByTestId('dashboard-verdicts');
    const figures = Object.fromEntries(['Clean', 'Cleaned', 'Partial', 'Encrypted', 'Refused'].map((label) => [
      label, within(section).getByText(label, { selector: 'p' }).nextElementSibling?.textContent,
    ]));
    expect(figures).toEqual({ Clean: '1', Cleaned: '2', Partial: '3', Encrypted: '5', Refused: '4' });
  });
});
