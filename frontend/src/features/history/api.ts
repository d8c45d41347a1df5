import { keepPreviousData, queryOptions, skipToken, useQuery } from '@tanstack/react-query';
import { api, type ApiQuery } from '../../lib/api';
import { HISTORY_PAGE_SIZE } from '../../lib/constants';
import type { StatusFilter } from '../../lib/types';

type HistoryQuery = ApiQuery<'/api/users/{user_id}/files', 'get'>;

export const STATUS_FILTERS: readonly StatusFilter[] = ['ALL', 'COMPLETED', 'PROCESSING', 'PENDING', 'FAILED'];
export const SORT_FIELDS = [
  { value: 'createdAt', label: 'Upload date' },
  { value: 'originalName', label: 'File name' },
  { value: 'originalSize', label: 'File size' },
  { value: 'status', label: 'Status' },
] as const satisfies readonly { value: NonNullable<HistoryQuery['sortBy']>; label: string }[];

export interface HistoryFilters {
  page: number;
  status: StatusFilter;
  sortBy: NonNullable<HistoryQuery['sortBy']>;
  sortOrder: NonNullable<HistoryQuery['sortOrder']>;
  search: string;
  /** '' for every verdict */
  verdict: NonNullable<HistoryQuery['verdict']> | '';
}

export const DEFAULT_FILTERS: HistoryFilters = { page: 1, status: 'ALL', sortBy: 'createdAt', sortOrder: 'desc', search: '', verdict: '' };

/** Query parameters: page, limit=20, status, sortBy, sortOrder, and search only when not blank. */
export function historyParams(f: HistoryFilters): HistoryQuery {
  const params: HistoryQuery = {
    page: Math.max(1, Math.floor(f.page) || 1), limit: HISTORY_PAGE_SIZE, status: f.status, sortBy: f.sortBy, sortOrder: f.sortOrder,
  };
  const search = f.search.trim();
  if (search) params.search = search;
  if (f.verdict) params.verdict = f.verdict;
  return params;
}

/** Any filter away from its default: decides which empty message shows. */
export function hasActiveFilters(f: HistoryFilters): boolean {
  return f.status !== 'ALL' || f.search.trim() !== '' || f.verdict !== '';
}

export function emptyHistoryMessage(f: HistoryFilters): string {
  return hasActiveFilters(f) ? 'No files match your current filters.' : "You haven't uploaded any files yet.";
}

export const historyKeys = {
  all: ['history'] as const,
  list: (userId: string | undefined, params: HistoryQuery) => [...historyKeys.all, userId, params] as const,
};

export const fetchHistory = async (userId: string, f: HistoryFilters) =>
  (await api('get', '/api/users/{user_id}/files', { path: { user_id: userId }, query: historyParams(f) })).data;

/** One page of a user's files; the previous page stays on screen while the next loads. */
export function historyQuery(userId: string | undefined, f: HistoryFilters) {
  return queryOptions({
    queryKey: historyKeys.list(userId, historyParams(f)),
    queryFn: userId ? () => fetchHistory(userId, f) : skipToken,
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
}

export const useHistory = (userId: string | undefined, f: HistoryFilters) => useQuery(historyQuery(userId, f));
