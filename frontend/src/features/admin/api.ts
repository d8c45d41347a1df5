import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { get, post, put } from '../../lib/api-client';
import { ADMIN_USERS_PAGE_SIZE } from '../../lib/constants';
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
