import { keepPreviousData, queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type ApiQuery } from '../../lib/api';
import { downloadAttachment } from '../../lib/download';
import type { components } from '../../lib/api-schema';
import { ADMIN_USERS_PAGE_SIZE } from '../../lib/constants';
import { statusRefetchInterval } from '../../lib/file-status';
import type { AdminAnalytics, Role, RoleFilter, StatusFilter, Timeframe, UserStatusFilter } from '../../lib/types';

type UsersQuery = ApiQuery<'/api/users', 'get'>;
export const USER_STATUSES: readonly UserStatusFilter[] = ['all', 'active', 'inactive', 'verified', 'unverified'];

export interface UserFilters {
  page: number;
  search: string;
  /** '' for every role. */
  role: RoleFilter;
  status: UserStatusFilter;
}

/** The users list's query: page, limit, status, and search and role only when set. */
export function userListParams(f: UserFilters): UsersQuery {
  const params: UsersQuery = { page: Math.max(1, f.page), limit: ADMIN_USERS_PAGE_SIZE, status: f.status };
  if (f.search.trim()) params.search = f.search.trim();
  if (f.role) params.role = f.role;
  return params;
}

export type AdminFilesQuery = ApiQuery<'/api/admin/files', 'get'>;
type MessagesQuery = ApiQuery<'/api/contact', 'get'>;
export const MESSAGES_PAGE_SIZE = 20;

/** Query keys of the admin console, defined once; `all` covers every one of them. */
export const adminKeys = {
  all: ['admin'] as const,
  users: (q: UsersQuery) => [...adminKeys.all, 'users', q] as const,
  analytics: (timeframe: Timeframe) => [...adminKeys.all, 'analytics', timeframe] as const,
  queue: () => [...adminKeys.all, 'queue'] as const,
  messages: (q: MessagesQuery) => [...adminKeys.all, 'messages', q] as const,
  audit: (q: AuditQuery) => [...adminKeys.all, 'audit', q] as const,
  userKeys: (userId: string) => [...adminKeys.all, 'user-keys', userId] as const,
  userPicker: (search: string) => [...adminKeys.all, 'user-picker', search] as const,
  files: {
    all: ['admin', 'files'] as const,
    list: (q: AdminFilesQuery) => [...adminKeys.files.all, 'list', q] as const,
    detail: (id: string) => [...adminKeys.files.all, 'detail', id] as const,
  },
};

// -- Users, analytics, queue -----------------------------------------------------------------
export const fetchUsers = async (f: UserFilters) => (await api('get', '/api/users', { query: userListParams(f) })).data;
export const fetchAnalytics = async (timeframe: Timeframe) =>
  (await api('get', '/api/usage/analytics', { query: { timeframe }, inlineQuery: true })).data;
export const fetchQueueStats = async () => (await api('get', '/api/process/queue/stats')).data;

/** One page of users; the previous page stays on screen while the next loads. */
export const usersQuery = (f: UserFilters) => {
  const params = userListParams(f);
  return queryOptions({
    queryKey: adminKeys.users(params),
    queryFn: () => fetchUsers(f),
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
};
export const analyticsQuery = (timeframe: Timeframe) =>
  queryOptions({ queryKey: adminKeys.analytics(timeframe), queryFn: () => fetchAnalytics(timeframe), staleTime: 0 });
export const queueStatsQuery = () => queryOptions({ queryKey: adminKeys.queue(), queryFn: fetchQueueStats, staleTime: 0 });

export const useUsers = (f: UserFilters, enabled = true) => useQuery({ ...usersQuery(f), enabled });
export const useAnalytics = (timeframe: Timeframe) => useQuery(analyticsQuery(timeframe));
export const useQueueStats = () => useQuery(queueStatsQuery());

export const updateUserRole = (id: string, role: Role) =>
  api('put', '/api/users/{user_id}', { path: { user_id: id }, body: { role } });
export const updateUserActive = (id: string, isActive: boolean) =>
  api('put', '/api/users/{user_id}', { path: { user_id: id }, body: { isActive } });
export const resetQuota = (id: string) => api('post', '/api/usage/reset-quota/{user_id}', { path: { user_id: id } });

// -- A user's API keys (admins) -------------------------------------------------------------
export type ApiKey = components['schemas']['ApiKeyOut'];

export const userApiKeysQuery = (userId: string) => queryOptions({
  queryKey: adminKeys.userKeys(userId),
  queryFn: async () => (await api('get', '/api/users/{user_id}/keys', { path: { user_id: userId } })).data,
  staleTime: 0,
});
export const useUserApiKeys = (userId: string) => useQuery(userApiKeysQuery(userId));

export const revokeUserApiKey = async ({ userId, keyId }: { userId: string; keyId: string }) =>
  (await api('delete', '/api/users/{user_id}/keys/{key_id}', { path: { user_id: userId, key_id: keyId } })).data;

/** Revoke one of a user's keys; that user's key list is fetched again afterwards. */
export function useRevokeUserApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeUserApiKey,
    onSuccess: (_data, { userId }) => queryClient.invalidateQueries({ queryKey: adminKeys.userKeys(userId) }),
  });
}

// -- A user picker: the first users whose email, username or name matches ----------------------
export const USER_PICKER_LIMIT = 8;
export const userPickerQuery = (search: string) => queryOptions({
  queryKey: adminKeys.userPicker(search.trim()),
  queryFn: async () => (await api('get', '/api/users', {
    query: { page: 1, limit: USER_PICKER_LIMIT, status: 'all', search: search.trim() },
  })).data.users,
  staleTime: 30_000,
});
export const useUserPicker = (search: string) => useQuery({ ...userPickerQuery(search), enabled: search.trim().length > 0 });

export type QueueAction = 'pause' | 'resume' | 'clear-completed' | 'clear-failed';
export const queueAction = (action: QueueAction) => api('post', `/api/process/queue/${action}`);

/** Overview success rate: completed files divided by recent files, as a percent (0 when none). */
export function overviewSuccessRate(a: Pick<AdminAnalytics, 'files'>): number {
  const recent = a.files.recent;
  if (!recent) return 0;
  return Math.round((a.files.recentCompleted / recent) * 1000) / 10;
}

// -- Messages sent through the contact page --------------------------------------------------
export type ContactMessage = components['schemas']['ContactOut'];

export const fetchContactMessages = async (page: number) =>
  (await api('get', '/api/contact', { query: { page, limit: MESSAGES_PAGE_SIZE } })).data;

export const contactMessagesQuery = (page: number) => queryOptions({
  queryKey: adminKeys.messages({ page, limit: MESSAGES_PAGE_SIZE }),
  queryFn: () => fetchContactMessages(page),
  placeholderData: keepPreviousData,
  staleTime: 0,
});
export const useContactMessages = (page: number) => useQuery(contactMessagesQuery(page));

// -- Mail: messages the mail filter handled (/api/admin/mail/held) ---------------------------
export type HeldMessage = components['schemas']['HeldMessageOut'];
export type HeldStatus = NonNullable<ApiQuery<'/api/admin/mail/held', 'get'>['status']>;
export const HELD_PAGE_SIZE = 20;
export const HELD_STATUSES: Record<HeldStatus, string> = {
  received: 'Being cleaned',
  delivered: 'Delivered',
  refused: 'Refused',
  deferred: 'Deferred (retried)',
  released: 'Original released',
};

export const fetchHeldMessages = async (page: number, status: HeldStatus | '') =>
  (await api('get', '/api/admin/mail/held', {
    query: status ? { page, limit: HELD_PAGE_SIZE, status } : { page, limit: HELD_PAGE_SIZE },
  })).data;

export const heldMessagesQuery = (page: number, status: HeldStatus | '') => queryOptions({
  queryKey: [...adminKeys.all, 'mail-held', page, status] as const,
  queryFn: () => fetchHeldMessages(page, status),
  placeholderData: keepPreviousData,
  staleTime: 0,
});
export const useHeldMessages = (page: number, status: HeldStatus | '') => useQuery(heldMessagesQuery(page, status));

/** Release an original to its recipients; the list is read again afterwards. */
export function useReleaseHeld() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) =>
      (await api('post', '/api/admin/mail/held/{held_id}/release', { path: { held_id: id } })).data,
    onSettled: () => client.invalidateQueries({ queryKey: [...adminKeys.all, 'mail-held'] }),
  });
}

// -- File Management: every user's files (/api/admin/files) ---------------------------------
export type AdminFileList = components['schemas']['AdminFileList'];
export type AdminFileSummary = components['schemas']['AdminFileSummary'];
export type AdminFileDetail = components['schemas']['AdminFileDetail'];
export const ADMIN_FILE_STATUSES: readonly StatusFilter[] = ['ALL', 'PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'];
export const ADMIN_FILES_PAGE_SIZE = 20;

export interface AdminFileFilters {
  page: number;
  user: string;
  userId: string;
  status: StatusFilter;
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

export const adminFilesQuery = (f: AdminFileFilters) => {
  const params = adminFilesParams(f);
  return queryOptions({
    queryKey: adminKeys.files.list(params),
    queryFn: async () => (await api('get', '/api/admin/files', { query: params })).data,
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
};

export const adminFileQuery = (id: string) => queryOptions({
  queryKey: adminKeys.files.detail(id),
  queryFn: async () => (await api('get', '/api/admin/files/{file_id}', { path: { file_id: id } })).data,
  staleTime: 0,
});

export const useAdminFiles = (f: AdminFileFilters) => useQuery(adminFilesQuery(f));
/** One file, fetched again every few seconds while it waits or is processed (after a re-queue). */
export const useAdminFile = (id: string) => useQuery({
  ...adminFileQuery(id),
  refetchInterval: (query) => statusRefetchInterval(query.state.data?.file.status),
});

export const deleteAdminFile = async (id: string) =>
  (await api('delete', '/api/admin/files/{file_id}', { path: { file_id: id } })).data;
export const requeueAdminFile = async (id: string) =>
  (await api('post', '/api/admin/files/{file_id}/requeue', { path: { file_id: id } })).data;

/** Delete a file (its blobs, job and row); the tab's queries are fetched again afterwards. */
export function useDeleteAdminFile() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteAdminFile,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: adminKeys.files.all }),
  });
}

/** Send a FAILED file back to the queue; the tab's queries are fetched again afterwards. */
export function useRequeueAdminFile() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: requeueAdminFile,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: adminKeys.files.all }),
  });
}

// -- Audit log (/api/audit) ------------------------------------------------------------------
export type AuditQuery = ApiQuery<'/api/audit', 'get'>;
export type AuditEntry = components['schemas']['AuditEntryOut'];
export type AuditAction = components['schemas']['AuditAction'];
export const AUDIT_PAGE_SIZE = 25;

/** Every action the log records, with its label (an action the API adds fails the type check
 * until it has one). */
export const AUDIT_ACTIONS: Record<AuditAction, string> = {
  'auth.sign_in': 'Sign-in',
  'auth.sign_in_failed': 'Failed sign-in',
  'auth.sign_out': 'Sign-out',
  'auth.password_changed': 'Password changed',
  'auth.password_reset': 'Password reset',
  'user.role_changed': 'Role changed',
  'user.activated': 'Account activated',
  'user.deactivated': 'Account deactivated',
  'user.quota_reset': 'Quota reset',
  'queue.paused': 'Queue paused',
  'queue.resumed': 'Queue resumed',
  'queue.cleared': 'Queue cleared',
  'file.deleted': 'File deleted',
  'policy.created': 'Policy created',
  'policy.updated': 'Policy changed',
  'policy.deleted': 'Policy deleted',
  'policy.default_changed': 'Default policy changed',
  'report.requested': 'Report requested',
  'audit.exported': 'Audit log exported',
  'api_key.created': 'API key created',
  'api_key.revoked': 'API key revoked',
  'webhook.created': 'Webhook created',
  'webhook.updated': 'Webhook changed',
  'webhook.deleted': 'Webhook deleted',
  'mail.released': 'Held mail released',
};

export interface AuditFilters {
  page: number;
  action: AuditAction | '';
  userId: string;
  /** Local calendar days (YYYY-MM-DD); '' for no bound. */
  from: string;
  to: string;
}
export const DEFAULT_AUDIT_FILTERS: AuditFilters = { page: 1, action: '', userId: '', from: '', to: '' };

/** The filters that are set, as the list and export calls take them ("to" includes its whole day). */
export function auditFilterParams(f: Omit<AuditFilters, 'page'>): Omit<AuditQuery, 'page' | 'limit'> {
  const q: Omit<AuditQuery, 'page' | 'limit'> = {};
  if (f.action) q.action = f.action;
  if (f.userId.trim()) q.userId = f.userId.trim();
  const from = localDayStart(f.from);
  const before = localDayStart(f.to, 1);
  if (from) q.from = from;
  if (before) q.to = before;
  return q;
}
export const auditParams = (f: AuditFilters): AuditQuery =>
  ({ page: Math.max(1, f.page), limit: AUDIT_PAGE_SIZE, ...auditFilterParams(f) });

export const auditQuery = (f: AuditFilters) => {
  const params = auditParams(f);
  return queryOptions({
    queryKey: adminKeys.audit(params),
    queryFn: async () => (await api('get', '/api/audit', { query: params })).data,
    placeholderData: keepPreviousData,
    staleTime: 0,
  });
};
export const useAudit = (f: AuditFilters) => useQuery(auditQuery(f));

/** The filtered log as CSV (every matching row, not only the page shown). */
export const exportAudit = (f: AuditFilters) => {
  const q = auditFilterParams(f);
  return downloadAttachment('/api/audit/export', 'sanitas-audit.csv', {
    query: { action: q.action ?? undefined, userId: q.userId ?? undefined, from: q.from ?? undefined, to: q.to ?? undefined },
  });
};
