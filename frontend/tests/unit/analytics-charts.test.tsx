import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient } from '../../src/lib/api-client';
import { storeAuth } from '../../src/lib/auth/storage';
import { AnalyticsChartsView } from '../../src/features/analytics/components/Charts';
import type { AnalyticsCharts } from '../../src/features/analytics/api';
import { bucketLabel, formatSeconds } from '../../src/features/analytics/api';
import AdminPage from '../../src/features/admin/components/AdminPage';
import DashboardPage from '../../src/features/dashboard/components/DashboardPage';
import { calls, renderApp, serve } from './harness';
import { aUser } from './fixtures';

// jsdom has no layout: the charts' responsive containers need a ResizeObserver to exist.
beforeAll(() => {
  globalThis.ResizeObserver ??= class {
    observe() {}
    unobserve() {}
    disconnect() {}
  };
});
const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const read = (matched: number, read = matched, limit = 5000) => ({ matched, read, limit, capped: read < matched });
const day = (d: number) => `2026-11-${String(d).padStart(2, '0')}T00:00:00Z`;

function charts(overrides: Partial<AnalyticsCharts> = {}): AnalyticsCharts {
  return {
    timeframe: 'week', scope: 'all', bucket: 'day',
    period: { start: '2026-11-16T18:00:00Z', end: '2026-11-23T18:00:00Z' },
    filesOverTime: [16, 17, 18, 19, 20, 21, 22, 23].map((d) => ({ start: day(d), cleaned: 0, rejected: 0, failed: 0, inProgress: 0 })).map((p, i) =>
      i === 2 ? { ...p, cleaned: 3, rejected: 1 } : i === 7 ? { ...p, cleaned: 2, failed: 1, inProgress: 1 } : p),
    threatsByKind: [{ kind: 'javascript', count: 7 }, { kind: 'macro', count: 2 }],
    threatReports: read(5),
    rejectionsByCode: [{ code: 'executable', count: 1 }],
    topTypes: [{ type: 'pdf', label: 'PDF document', count: 6 }, { type: 'docx', label: 'Word document', count: 2 }],
    otherTypes: 1,
    processingTime: [{ family: 'pdf', files: 4, median: 1.25, p95: 3.5 }, { family: 'ooxml', files: 1, median: 0.4, p95: 0.4 }],
    timedFiles: read(5),
    ...overrides,
  };
}

const EMPTY = charts({
  filesOverTime: [{ start: day(23), cleaned: 0, rejected: 0, failed: 0, inProgress: 0 }],
  threatsByKind: [], threatReports: read(0), rejectionsByCode: [], topTypes: [], otherTypes: 0, processingTime: [], timedFiles: read(0),
});

/** The rows of a chart's text alternative (its visually hidden table), cell texts joined by '|'. */
function tableRows(name: string): string[] {
  const table = screen.getByRole('table', { name });
  expect(table.parentElement).toHaveClass('sr-only');
  return within(table).getAllByRole('row').slice(1).map((row) => Array.from(row.querySelectorAll('th, td'), (c) => c.textContent).join('|'));
}

describe('analytics charts', () => {
  it('gives every chart a heading, a summary and a table with its numbers', () => {
    const { container } = render(<AnalyticsChartsView data={charts()} />);
    for (const title of ['Files per day by result', 'Threats removed by kind', 'Rejections by reason', 'Top input types', 'Processing time by family']) {
      const heading = screen.getByRole('heading', { name: title, level: 3 });
      // the chart's region is named by its heading
      expect(heading.closest('section')).toHaveAccessibleName(title);
    }
    expect(tableRows('Files per day by result (UTC)')).toEqual([`${bucketLabel(day(18), 'day')}|3|1|0|0`, `${bucketLabel(day(23), 'day')}|2|0|1|1`]);
    expect(screen.getByText('8 files: 5 cleaned, 1 rejected, 1 failed, 1 in progress. Days in UTC.')).toBeInTheDocument();
    expect(tableRows('Threats removed by kind')).toEqual(['JavaScript|7', 'Macro|2']);
    expect(screen.getByText('9 items removed, converted or blocked, of 2 kinds.')).toBeInTheDocument();
    expect(tableRows('Rejections by reason')).toEqual(['Executable|executable|1']);
    expect(tableRows('Top input types')).toEqual(['PDF document|6', 'Word document|2', 'Other types|1']);
    expect(screen.getByText('9 files; the most frequent type is PDF document (6).')).toBeInTheDocument();
    expect(tableRows('Processing time by family')).toEqual(['PDF|4|1.3 s|3.5 s', 'Office (OOXML)|1|400 ms|400 ms']);
    // the pictures are there, hidden from assistive technology (the tables say the same)
    const pictures = container.querySelectorAll('[aria-hidden="true"] .recharts-responsive-container');
    expect(pictures).toHaveLength(5);
  });

  it('says so when the period has nothing, without empty charts or tables', () => {
    render(<AnalyticsChartsView data={EMPTY} />);
    expect(screen.getAllByText('No files in this period.')).toHaveLength(2);
    expect(screen.getByText('Nothing removed in this period.')).toBeInTheDocument();
    expect(screen.getByText('No file was refused in this period.')).toBeInTheDocument();
    expect(screen.getByText('No file was cleaned in this period.')).toBeInTheDocument();
    expect(screen.queryAllByRole('table')).toHaveLength(0);
    expect(screen.getAllByRole('heading', { level: 3 })).toHaveLength(5);
  });

  it('names hours for the last 24 hours and says when a series was read from fewer rows', () => {
    render(<AnalyticsChartsView data={charts({
      bucket: 'hour', filesOverTime: [{ start: '2026-11-23T14:00:00Z', cleaned: 1, rejected: 0, failed: 0, inProgress: 0 }],
      threatReports: read(5000 + 12, 5000), timedFiles: read(7, 3, 3),
    })} />);
    screen.getByRole('heading', { name: 'Files per hour by result' });
    expect(tableRows('Files per hour by result (UTC)')).toEqual([`${bucketLabel('2026-11-23T14:00:00Z', 'hour')}|1|0|0|0`]);
    expect(screen.getByText(/Counted from the newest 5000 of 5012 reports\./)).toBeInTheDocument();
    expect(screen.getByText(/Computed from the newest 3 of 7 files\./)).toBeInTheDocument();
  });

  it('formats durations', () => {
    expect(formatSeconds(0.0421)).toBe('42 ms');
    expect(formatSeconds(12.34)).toBe('12.3 s');
    expect(formatSeconds(75)).toBe('1 min 15 s');
  });
});

const tokens = { accessToken: 'tok', refreshToken: 'ref', expiresIn: 900 };
const ok = (data: unknown) => ({ success: true, message: 'ok', data });
const stats = (role: string) => ok({
  user: { role, memberSince: '2026-01-01T00:00:00Z' },
  currentPeriod: { uploadsUsed: 3, uploadQuota: -1, quotaUtilization: 0, start: '2026-11-01T00:00:00Z' },
  limits: { isOverQuota: false, isNearQuota: false, daysUntilReset: 4 },
  overall: { totalFiles: 3, totalStorageUsed: 2048, storageQuota: -1, storageUtilization: 0 },
  verdicts: { clean: 1, cleaned: 2, partial: 0, refused: 0 },
});
const dashboardRoutes = (role: string) => [
  { method: 'GET', url: /\/api\/usage\/stats$/, body: stats(role) },
  { method: 'GET', url: /\/api\/usage\/history/, body: ok([]) },
  { method: 'GET', url: /\/api\/usage\/charts/, body: ok(charts({ scope: 'own' })) },
];

describe('charts on the dashboard and the admin analytics tab', () => {
  it('an ENTERPRISE dashboard shows the own-files charts for the chosen timeframe', async () => {
    storeAuth(aUser({ role: 'ENTERPRISE' }), tokens);
    serve(dashboardRoutes('ENTERPRISE'));
    renderApp(<DashboardPage />, { path: '/dashboard', at: '/dashboard' });
    const section = await screen.findByTestId('dashboard-charts');
    expect(within(section).getByRole('heading', { name: 'Analytics', level: 2 })).toBeInTheDocument();
    expect(await within(section).findByRole('table', { name: 'Top input types' })).toBeInTheDocument();
    const chartCalls = () => calls.filter((c) => c.url.includes('/api/usage/charts')).map((c) => c.url);
    expect(chartCalls()).toEqual([expect.stringMatching(/timeframe=month&scope=own$/)]);
    await userEvent.selectOptions(within(section).getByLabelText('Timeframe'), 'day');
    await waitFor(() => expect(chartCalls()).toHaveLength(2));
    expect(chartCalls()[1]).toMatch(/timeframe=day&scope=own$/);
    expect(screen.queryByText('Upgrade to Enterprise')).not.toBeInTheDocument();
  });

  it('a USER dashboard has no charts and does not ask for them', async () => {
    storeAuth(aUser({ role: 'USER' }), tokens);
    serve(dashboardRoutes('USER'));
    renderApp(<DashboardPage />, { path: '/dashboard', at: '/dashboard' });
    await screen.findByTestId('quota-usage');
    expect(screen.queryByTestId('dashboard-charts')).not.toBeInTheDocument();
    expect(calls.some((c) => c.url.includes('/api/usage/charts'))).toBe(false);
  });

  it('the admin analytics tab keeps its figures and adds everyone\'s charts', async () => {
    storeAuth(aUser({ role: 'ADMIN' }), tokens);
    const analytics = ok({
      timeframe: 'month', period: { start: '2026-10-24T18:00:00Z', end: '2026-11-23T18:00:00Z' },
      users: { total: 4, active: 2, byRole: { GUEST: 1, USER: 1, ENTERPRISE: 1, ADMIN: 1 } },
      files: { total: 9, recent: 9, recentCompleted: 5, byStatus: { PENDING: 1, PROCESSING: 0, COMPLETED: 5, FAILED: 3 } },
      storage: { totalUsed: 4096, averageFileSize: 512 },
    });
    serve([
      { method: 'GET', url: /\/api\/usage\/analytics/, body: analytics },
      { method: 'GET', url: /\/api\/usage\/charts/, body: ok(charts()) },
      { method: 'GET', url: /\/api\/process\/queue\/stats/, body: ok({}) },
    ]);
    renderApp(<AdminPage />, { path: '/admin', at: '/admin' });
    await userEvent.click(await screen.findByRole('tab', { name: 'Analytics' }));
    expect(await screen.findByRole('heading', { name: 'Files by status' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Users by role' })).toBeInTheDocument();
    expect(await screen.findByRole('table', { name: 'Threats removed by kind' })).toBeInTheDocument();
    const url = calls.find((c) => c.url.includes('/api/usage/charts'))?.url ?? '';
    expect(url).toMatch(/[?&]scope=all(&|$)/);
    expect(url).toMatch(/[?&]timeframe=month(&|$)/);
  });
});
