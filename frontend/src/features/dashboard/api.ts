import { queryOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../lib/api';
import { USAGE_HISTORY_MONTHS } from '../../lib/constants';
import type { UsageHistoryItem, UsageStats } from '../../lib/types';

export const usageKeys = {
  all: ['usage'] as const,
  stats: () => [...usageKeys.all, 'stats'] as const,
  history: () => [...usageKeys.all, 'history'] as const,
};

export const fetchUsageStats = async () => (await api('get', '/api/usage/stats')).data;
export const fetchUsageHistory = async () =>
  (await api('get', '/api/usage/history', { query: { months: USAGE_HISTORY_MONTHS }, inlineQuery: true })).data;

export const usageStatsQuery = () => queryOptions({ queryKey: usageKeys.stats(), queryFn: fetchUsageStats, staleTime: 0 });
export const usageHistoryQuery = () => queryOptions({ queryKey: usageKeys.history(), queryFn: fetchUsageHistory, staleTime: 0 });

export const useUsageStats = () => useQuery(usageStatsQuery());
export const useUsageHistory = () => useQuery(usageHistoryQuery());

export type QuotaState = 'unlimited' | 'normal' | 'near' | 'over';

/** Quota -1 is unlimited; otherwise over quota beats near quota (docs/product-rules.md, Quotas). */
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

export const resendVerification = () => api('post', '/api/auth/resend-verification');
