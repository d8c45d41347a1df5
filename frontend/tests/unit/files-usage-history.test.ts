import { describe, expect, it } from 'vitest';
import { jobPercent, statusRefetchInterval } from '../../src/features/files/api';
import { downloadName } from '../../src/lib/download';
import { QUOTA_LABEL, quotaState, successRate } from '../../src/features/dashboard/api';
import { DEFAULT_FILTERS, emptyHistoryMessage, hasActiveFilters, historyParams } from '../../src/features/history/api';
import { overviewSuccessRate, userListParams } from '../../src/features/admin/api';
import { displayInitial, displayName } from '../../src/lib/auth/AuthProvider';
import { formatBytes, formatKB } from '../../src/lib/format';
import type { UsageStats } from '../../src/lib/types';

describe('status polling', () => {
  it('polls every 3000 ms while PENDING or PROCESSING and stops otherwise', () => {
    expect(statusRefetchInterval('PENDING')).toBe(3000);
    expect(statusRefetchInterval('PROCESSING')).toBe(3000);
    expect(statusRefetchInterval('COMPLETED')).toBe(false);
    expect(statusRefetchInterval('FAILED')).toBe(false);
    expect(statusRefetchInterval(undefined)).toBe(false);
  });
  it('caps the progress at 0..100', () => {
    expect(jobPercent(140)).toBe(100);
    expect(jobPercent(-3)).toBe(0);
    expect(jobPercent(42.4)).toBe(42);
    expect(jobPercent(null)).toBe(0);
  });
});

describe('download file name', () => {
  it('prefers the RFC 6266 UTF-8 name, then the plain one', () => {
    expect(downloadName(`attachment; filename="r_sum_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`)).toBe('résumé.pdf');
    expect(downloadName('attachment; filename="clean.docx"')).toBe('clean.docx');
  });
  it('falls back to the sanitized name, then sanitized_ + original', () => {
    expect(downloadName(null, { sanitizedName: 'x.pdf', originalName: 'x.docm' })).toBe('x.pdf');
    expect(downloadName(undefined, { sanitizedName: null, originalName: 'x.docm' })).toBe('sanitized_x.docm');
  });
});

const stats = (used: number, quota: number, near: boolean, over: boolean): UsageStats => ({
  user: { role: 'USER', memberSince: '2026-01-01T00:00:00Z' },
  currentPeriod: { uploadsUsed: used, uploadQuota: quota, quotaUtilization: quota > 0 ? (used / quota) * 100 : 0, start: '', end: '' },
  limits: { isOverQuota: over, isNearQuota: near, daysUntilReset: 3, maxFileSize: 104857600, maxFiles: 10 },
  overall: { totalFiles: used, totalStorageUsed: 0, storageQuota: -1, storageUtilization: 0 },
  verdicts: { clean: 0, cleaned: 0, partial: 0, encrypted: 0, refused: 0 },
});

describe('quota states', () => {
  it('normal, near, over, unlimited', () => {
    expect(quotaState(stats(1, 100, false, false))).toBe('normal');
    expect(quotaState(stats(85, 100, true, false))).toBe('near');
    expect(quotaState(stats(100, 100, true, true))).toBe('over');
    expect(quotaState(stats(5000, -1, false, false))).toBe('unlimited');
  });
  it('label the warnings', () => {
    expect(QUOTA_LABEL.near).toBe('Approaching Limit');
    expect(QUOTA_LABEL.over).toBe('Quota Exceeded');
    expect(QUOTA_LABEL.normal).toBeNull();
  });
  it('monthly success rate', () => {
    expect(successRate({ uploads: 4, successful: 3 })).toBe('75%');
    expect(successRate({ uploads: 0, successful: 0 })).toBe('—');
  });
});

describe('history filters', () => {
  it('send page, limit 20, status, sort and order; search only when not blank', () => {
    expect(historyParams(DEFAULT_FILTERS)).toEqual({ page: 1, limit: 20, status: 'ALL', sortBy: 'createdAt', sortOrder: 'desc' });
    expect(historyParams({ page: 3, status: 'FAILED', sortBy: 'originalSize', sortOrder: 'asc', search: '  invoice ', verdict: '' }))
      .toEqual({ page: 3, limit: 20, status: 'FAILED', sortBy: 'originalSize', sortOrder: 'asc', search: 'invoice' });
    expect(historyParams({ ...DEFAULT_FILTERS, verdict: 'partial' })).toEqual({ page: 1, limit: 20, status: 'ALL', sortBy: 'createdAt', sortOrder: 'desc', verdict: 'partial' });
    expect(historyParams({ ...DEFAULT_FILTERS, page: 0, search: '   ' })).toEqual({ page: 1, limit: 20, status: 'ALL', sortBy: 'createdAt', sortOrder: 'desc' });
  });
  it('choose the empty message by whether filters are active', () => {
    expect(hasActiveFilters(DEFAULT_FILTERS)).toBe(false);
    expect(emptyHistoryMessage(DEFAULT_FILTERS)).toBe("You haven't uploaded any files yet.");
    expect(emptyHistoryMessage({ ...DEFAULT_FILTERS, status: 'PENDING' })).toBe('No files match your current filters.');
    expect(emptyHistoryMessage({ ...DEFAULT_FILTERS, search: 'x' })).toBe('No files match your current filters.');
    expect(emptyHistoryMessage({ ...DEFAULT_FILTERS, verdict: 'refused' })).toBe('No files match your current filters.');
    expect(emptyHistoryMessage({ ...DEFAULT_FILTERS, sortOrder: 'asc' })).toBe("You haven't uploaded any files yet.");
  });
});

describe('admin', () => {
  it('lists 10 users per page with optional search and role', () => {
    expect(userListParams({ page: 2, search: '', role: '', status: 'all' })).toEqual({ page: 2, limit: 10, status: 'all' });
    expect(userListParams({ page: 1, search: ' ada ', role: 'ADMIN', status: 'unverified' })).toEqual({ page: 1, limit: 10, status: 'unverified', search: 'ada', role: 'ADMIN' });
  });
  it('overview success rate is completed over recent files', () => {
    expect(overviewSuccessRate({ files: { total: 10, recent: 8, recentCompleted: 6, byStatus: { COMPLETED: 9 } } })).toBe(75);
    expect(overviewSuccessRate({ files: { total: 0, recent: 0, recentCompleted: 0, byStatus: {} } })).toBe(0);
  });
});

describe('user menu naming', () => {
  it('initial from firstName, else email; name from firstName, else email local part, else User', () => {
    expect(displayInitial({ firstName: 'ada', email: 'x@y.z' })).toBe('A');
    expect(displayInitial({ firstName: null, email: 'grace@y.z' })).toBe('G');
    expect(displayName({ firstName: 'Ada', email: 'x@y.z' })).toBe('Ada');
    expect(displayName({ firstName: '', email: 'grace@y.z' })).toBe('grace');
    expect(displayName({ firstName: null, email: '' })).toBe('User');
    expect(displayName(null)).toBe('User');
  });
});

describe('sizes use 1024 units', () => {
  it('formats', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(104857600)).toBe('100 MB');
    expect(formatKB(2048)).toBe('2.00 KB');
  });
});
