import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../lib/api';
import type { components } from '../../lib/api-schema';
import type { Timeframe } from '../../lib/types';

/** The periods the analytics screens offer (the dashboard's charts and the admin's Analytics tab). */
export const TIMEFRAMES: { value: Timeframe; label: string }[] = [
  { value: 'day', label: 'Last 24 hours' }, { value: 'week', label: 'Last 7 days' }, { value: 'month', label: 'Last 30 days' },
];

/** The charts' series (GET /api/usage/charts): whose files (`own`, or `all` for admins). */
export type AnalyticsCharts = components['schemas']['AnalyticsCharts'];
export type ChartScope = components['schemas']['ChartScope'];
export type FilesInBucket = components['schemas']['FilesInBucket'];

export const chartKeys = {
  all: ['charts'] as const,
  of: (timeframe: Timeframe, scope: ChartScope) => [...chartKeys.all, scope, timeframe] as const,
};

export const fetchCharts = async (timeframe: Timeframe, scope: ChartScope) =>
  (await api('get', '/api/usage/charts', { query: { timeframe, scope }, inlineQuery: true })).data;

export const chartsQuery = (timeframe: Timeframe, scope: ChartScope) =>
  queryOptions({ queryKey: chartKeys.of(timeframe, scope), queryFn: () => fetchCharts(timeframe, scope), staleTime: 0 });
export const useCharts = (timeframe: Timeframe, scope: ChartScope) => useQuery(chartsQuery(timeframe, scope));

/** The four results a file can have, in the order the stacked bars show them. */
export const RESULTS = [
  { key: 'cleaned', label: 'Cleaned', color: '#16a34a' },
  { key: 'rejected', label: 'Rejected', color: '#d97706' },
  { key: 'failed', label: 'Failed', color: '#dc2626' },
  { key: 'inProgress', label: 'In progress', color: '#2563eb' },
] as const satisfies readonly { key: keyof FilesInBucket; label: string; color: string }[];

/** The engine's families (engine/formats.py) as people call them. */
const FAMILY_LABELS: Record<string, string> = {
  pdf: 'PDF', image: 'Images', svg: 'SVG', text: 'Text and HTML', epub: 'EPUB', archive: 'ZIP archives',
  ooxml: 'Office (OOXML)', odf: 'OpenDocument', legacy_office: 'Office 97-2003 and RTF', unknown: 'Unknown type',
};

export function familyLabel(family: string): string {
  return FAMILY_LABELS[family] ?? humanize(family);
}

/** 'refused_macros' → 'Refused macros'. */
export function humanize(code: string): string {
  return code.replace(/[_-]+/g, ' ').replace(/^\w/, (c) => c.toUpperCase());
}

/** A bucket's start, in UTC (the buckets are UTC hours or days): '14:00' or 'Nov 23'. */
export function bucketLabel(start: string, bucket: AnalyticsCharts['bucket']): string {
  const d = new Date(start);
  if (Number.isNaN(d.getTime())) return start;
  return bucket === 'hour'
    ? d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' })
    : d.toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

/** Seconds as people read them: '850 ms', '2.4 s', '1 min 5 s'. */
export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return '—';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${(Math.round(seconds * 10) / 10).toString()} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}
