import { useQuery } from '@tanstack/react-query';
import { get, post } from '../../lib/api-client';
import { USAGE_HISTORY_MONTHS } from '../../lib/constants';
import type { UsageHistoryItem, UsageStats } from '../../lib/types';

export const fetchUsageStats = async () => (await get<UsageStats>('/api/usage/stats')).data;
export const fetchUsageHistory = async () => (await get<UsageHistoryItem[]>(`/api/usage/history?months=${USAGE_HISTORY_MONTHS}`)).data;

export const useUsageStats = () => useQuery({ queryKey: ['usage', 'stats'], queryFn: fetchUsageStats, staleTime: 0 });
export const useUsageHistory = () => useQuery({ queryKey: ['usage', 'history'], queryFn: fetchUsageHistory, staleTime: 0 });

export type QuotaState = 'unlimited' | 'normal' | 'near' | 'over';

/** Quota -1 is unlimited; otherwise over quota beats near quota (SPEC sections 3 and 4). */
export function quotaState(stats: Pick<UsageStats, 'currentPeriod' | 'limits'> | undefined | null): QuotaState {
  if (!stats) return 'normal';
  if (stats.currentPeriod.uploadQuota < 0) return 'unlimited';
  if (stats.limits.isOverQuota) return 'over';
  if (stats.limits.isNearQuota) return 'near';
  return 'normal';
}

export const QUOTA_LABEL: Record<QuotaState, string | null> = {
  unlimited: null, normal: null, near: 'Approaching Limit', over: 'Quota Exceeded',
};

export function successRate(item: Pick<UsageHistoryItem, 'uploads' | 'successful'>): string {
  if (!item.uploads) return '—';
  return `${Math.round((item.successful / item.uploads) * 100)}%`;
}

export const resendVerification = () => post<null>('/api/auth/resend-verification');
