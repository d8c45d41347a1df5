import { keepPreviousData, queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { del, get, post, put } from '../../lib/api-client';
import type { components, paths } from '../../lib/api-schema';
import { ADMIN_USERS_PAGE_SIZE } from '../../lib/constants';
import { statusRefetchInterval } from '../../lib/file-status';
import type { AdminAnalytics, Pagination, User, UserList } from '../../lib/types';

export type Timeframe = 'day' | 'week' | 'month';
export const TIMEFRAMES: { value: Timeframe; label: string }[] = [
  { value: 'day', label: 'Last 24 hours' }, { value: 'week', label: 'Last 7 days' }, { value: 'month', label: 'Last 30 days' },
];
export const USER_STATUSES = ['all', 'active', 'inactive', 'verified', 'unverified'] as const;

export interface UserFilters {
  page: number;
  search: string;
  role: string;
  status: (typeof USER_STATUSES)[number];
}

export function userListParams(f: UserFilters): Record<string, string | number> {
  const params: Record<string, string | number> = { page: Math.max(1, f.page), limit: ADMIN_USERS_PAGE_SIZE, status: f.status };
  if (f.search.trim()) params.search = f.search.trim();
  if (f.role) params.role = f.role;
  return params;
}

export const fetchUsers = async (f: UserFilters) => (await get<UserList>('/api/users', { params: userListParams(f) })).data;
export const fetchAnalytics = async (timeframe: Timeframe) =>
  (await get<AdminAnalytics & { files: { recentCompleted?: number } }>(`/api/usage/analytics?timeframe=${timeframe}`)).data;

export const useUsers = (f: UserFilters) => useQuery({ queryKey: ['admin', 'users', userListParams(f)], queryFn: () => fetchUsers(f), placeholderData: keepPreviousData, staleTime: 0 });
export const useAnalytics = (timeframe: Timeframe) => useQuery({ queryKey: ['admin', 'analytics', timeframe], queryFn: () => fetchAnalytics(timeframe), staleTime: 0 });
export const useQueueStats = () => useQuery({ queryKey: ['admin', 'queue'], queryFn: async () => (await get<Record<string, unknown>>('/api/process/queue/stats')).data, staleTime: 0 });

export const updateUserRole = (id: string, role: string) => put<User>(`/api/users/${encodeURIComponent(id)}`, { role });
export const updateUserActive = (id: string, isActive: boolean) => put<User>(`/api/users/${encodeURIComponent(id)}`, { isActive });
export const resetQuota = (id: string) => post<unknown>(`/api/usage/reset-quota/${encodeURIComponent(id)}`);
export const queueAction = (action: 'pause' | 'resume' | 'clear-completed' | 'clear-failed') => post<unknown>(`/api/process/queue/${action}`);

/** Overview success rate: completed files divided by recent files, as a percent (0 when none). */
export function overviewSuccessRate(a: Pick<AdminAnalytics, 'files'>): number {
  const recent = a.files.recent;
  if (!recent) return 0;
  return Math.round((a.files.recentCompleted / recent) * 1000) / 10;
}

export interface ContactMessage { id: string; name: string; email: string; subject: string; message: string; userId: string | null; createdAt: string }
export const useContactMessages = (page: number) => useQuery({
  queryKey: ['admin', 'messages', page],
  queryFn: async () => (await get<{ messages: ContactMessage[]; pagination: Pagination }>('/api/contact', { params: { page, limit: 20 } })).data,
  placeholderData: keepPreviousData,
  staleTime: 0,
});

// -- File Management: every user's files (/api/admin/files) ---------------------------------
export type AdminFilesQuery = NonNullable<paths['/api/admin/files']['get']['parameters']['query']>;
export type AdminFileList = components['schemas']['AdminFileList'];
export type AdminFileSummary = components['schemas']['AdminFileSummary'];
export type AdminFileDetail = components['schemas']['AdminFileDetail'];
export type AdminFileStatus = NonNullable<AdminFilesQuery['status']>;
export const ADMIN_FILE_STATUSES: readonly AdminFileStatus[] = ['ALL', 'PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'];
export const ADMIN_FILES_PAGE_SIZE = 20;

export interface AdminFileFilters {
  page: number;
  user: string;
  userId: string;
  status: AdminFileStatus;
  type: string;
  /** Local calendar days (YYYY-MM-DD) from the date inputs; '' for no bound. */
  from: string;
  to: string;
}
export const DEFAULT_ADMIN_FILE_FILTERS: AdminFileFilters = { page: 1, user: '', userId: '', status: 'ALL', type: '', from: '', to: '' };

/** The start of a local calendar day (YYYY-MM-DD) as an ISO moment, `days` later. */
function localDayStart(day: string, days = 0): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days).toISOString();
}

/** The query of the list call: only the filters that are set; "to" includes its whole day. */
export function adminFilesParams(f: AdminFileFilters): AdminFilesQuery {
  const q: AdminFilesQuery = { page: Math.max(1, f.page), limit: ADMIN_FILES_PAGE_SIZE, status: f.status };
  if (f.user.trim()) q.user = f.user.trim();
  if (f.userId) q.userId = f.userId;
  if (f.type) q.type = f.type;
  const from = localDayStart(f.from);
  const before = localDayStart(f.to, 1);
  if (from) q.createdFrom = from;
  if (before) q.createdBefore = before;
  return q;
}

const fileUrl = (id: string) => `/api/admin/files/${encodeURIComponent(id)}`;

/** Query keys of the tab, defined once: the list per query, one file per id. */
export const adminFileKeys = {
  all: ['admin', 'files'] as const,
  list: (q: AdminFilesQuery) => [...adminFileKeys.all, 'list', q] as const,
  detail: (id: string) => [...adminFileKeys.all, 'detail', id] as const,
};

export const adminFilesQuery = (f: AdminFileFilters) => {
  const params = adminFilesParams(f);
  return queryOptions({
    queryKey: adminFileKeys.list(params),
    queryFn: async () => (await get<AdminFileList>('/api/admin/files', { params })).data,
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
};

export const adminFileQuery = (id: string) => queryOptions({
  queryKey: adminFileKeys.detail(id),
  queryFn: async () => (await get<AdminFileDetail>(fileUrl(id))).data,
  staleTime: 0,
});

export const useAdminFiles = (f: AdminFileFilters) => useQuery(adminFilesQuery(f));
/** One file, fetched again every few seconds while it waits or is processed (after a re-queue). */
export const useAdminFile = (id: string) => useQuery({
  ...adminFileQuery(id),
  refetchInterval: (query) => statusRefetchInterval(query.state.data?.file.status),
});

export const deleteAdminFile = async (id: string) =>
  (await del<components['schemas']['AdminFileDeleted']>(fileUrl(id))).data;
export const requeueAdminFile = async (id: string) =>
  (await post<AdminFileDetail>(`${fileUrl(id)}/requeue`)).data;

/** Delete a file (its blobs, job and row); the tab's queries are fetched again afterwards. */
export function useDeleteAdminFile() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteAdminFile,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: adminFileKeys.all }),
  });
}

/** Send a FAILED file back to the queue; the tab's queries are fetched again afterwards. */
export function useRequeueAdminFile() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: requeueAdminFile,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: adminFileKeys.all }),
  });
}
