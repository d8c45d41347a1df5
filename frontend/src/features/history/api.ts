import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { get } from '../../lib/api-client';
import { HISTORY_PAGE_SIZE } from '../../lib/constants';
import type { FileHistory } from '../../lib/types';

export const STATUS_FILTERS = ['ALL', 'COMPLETED', 'PROCESSING', 'PENDING', 'FAILED'] as const;
export const SORT_FIELDS = [
  { value: 'createdAt', label: 'Upload date' },
  { value: 'originalName', label: 'File name' },
  { value: 'originalSize', label: 'File size' },
  { value: 'status', label: 'Status' },
] as const;

export interface HistoryFilters {
  page: number;
  status: (typeof STATUS_FILTERS)[number];
  sortBy: 'createdAt' | 'originalName' | 'originalSize' | 'status';
  sortOrder: 'asc' | 'desc';
  search: string;
}

export const DEFAULT_FILTERS: HistoryFilters = { page: 1, status: 'ALL', sortBy: 'createdAt', sortOrder: 'desc', search: '' };

/** Query parameters: page, limit=20, status, sortBy, sortOrder, and search only when not blank. */
export function historyParams(f: HistoryFilters): Record<string, string | number> {
  const params: Record<string, string | number> = {
    page: Math.max(1, Math.floor(f.page) || 1), limit: HISTORY_PAGE_SIZE, status: f.status, sortBy: f.sortBy, sortOrder: f.sortOrder,
  };
  const search = f.search.trim();
  if (search) params.search = search;
  return params;
}

/** Any filter away from its default: decides which empty message shows. */
export function hasActiveFilters(f: HistoryFilters): boolean {
  return f.status !== 'ALL' || f.search.trim() !== '';
}

export function emptyHistoryMessage(f: HistoryFilters): string {
  return hasActiveFilters(f) ? 'No files match your current filters.' : "You haven't uploaded any files yet.";
}

export const fetchHistory = async (userId: string, f: HistoryFilters) =>
  (await get<FileHistory>(`/api/users/${encodeURIComponent(userId)}/files`, { params: historyParams(f) })).data;

export function useHistory(userId: string | undefined, f: HistoryFilters) {
  return useQuery({
    queryKey: ['history', userId, historyParams(f)],
    queryFn: () => fetchHistory(userId!, f),
    enabled: !!userId,
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
}
