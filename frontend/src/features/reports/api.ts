/**
 * Compliance reports (/api/reports): ask for one (a period, CSV or PDF, whose files), list them
 * (polled while one is being generated), download one when it is ready.
 */
import { keepPreviousData, queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type ApiBody } from '../../lib/api';
import type { components } from '../../lib/api-schema';
import { downloadAttachment } from '../../lib/download';

export type Report = components['schemas']['ReportOut'];
export type ReportStatus = components['schemas']['ReportStatus'];
export type ReportFormat = components['schemas']['ReportFormat'];
export type ReportRequest = ApiBody<'/api/reports', 'post'>;

export const REPORTS_PAGE_SIZE = 20;
/** How often the list is fetched again while a report is still being generated. */
export const REPORT_POLL_MS = 2000;

export const reportKeys = {
  all: ['reports'] as const,
  list: (page: number) => [...reportKeys.all, 'list', page] as const,
};

export const isReportActive = (status: ReportStatus) => status === 'PENDING' || status === 'PROCESSING';

export const fetchReports = async (page: number) =>
  (await api('get', '/api/reports', { query: { page, limit: REPORTS_PAGE_SIZE } })).data;

/** One page of reports, polled while any of them is pending or being generated. */
export const reportsQuery = (page: number) => queryOptions({
  queryKey: reportKeys.list(page),
  queryFn: () => fetchReports(page),
  placeholderData: keepPreviousData,
  staleTime: 0,
  refetchInterval: (query) => (query.state.data?.reports.some((r) => isReportActive(r.status)) ? REPORT_POLL_MS : false),
});
export const useReports = (page: number, enabled = true) => useQuery({ ...reportsQuery(page), enabled });

export const requestReport = async (body: ReportRequest) => (await api('post', '/api/reports', { body })).data;

export function useRequestReport() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: requestReport,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: reportKeys.all }),
  });
}

export const downloadReport = (r: Pick<Report, 'id' | 'format'>) =>
  downloadAttachment('/api/reports/{report_id}/download', `sanitas-report-${r.id}.${r.format}`, { params: { report_id: r.id } });

/** The local calendar day `days` from today, as YYYY-MM-DD (the date inputs' format). */
export function isoDay(days = 0, now = new Date()): string {
  const d = new Date(now.getFullYear(), now.getMonth(), now.getDate() + days);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** A report's period as the days it covers ("1 Nov 2026 – 23 Nov 2026"): the end is exclusive
 * and the server reads plain dates as UTC days, so the last day is the one before the end, in UTC. */
export function formatPeriod(start: string, end: string): string {
  const day = (ms: number) => (Number.isNaN(ms) ? '—'
    : new Date(ms).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' }));
  const from = Date.parse(start);
  const to = Date.parse(end) - 1;
  return `${day(from)} – ${day(Math.max(from, to))}`;
}
