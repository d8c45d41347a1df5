import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type ApiBody } from '../../lib/api';
import type { components } from '../../lib/api-schema';

export const profileKeys = { detail: ['profile'] as const };

export const fetchProfile = async () => (await api('get', '/api/auth/profile')).data;
export const profileQuery = () => queryOptions({ queryKey: profileKeys.detail, queryFn: fetchProfile, staleTime: 0 });
export const useProfile = () => useQuery(profileQuery());

export const changePassword = (currentPassword: string, newPassword: string) =>
  api('put', '/api/auth/password', { body: { currentPassword, newPassword } });

// -- API keys (/api/keys): the account's own keys, for the file calls -------------------------
export type ApiKey = components['schemas']['ApiKeyOut'];
export type ApiKeyScope = components['schemas']['ApiKeyScope'];
export type NewApiKey = ApiBody<'/api/keys', 'post'>;
export type CreatedApiKey = components['schemas']['ApiKeyCreated'];

/** Every scope with the one line that says what it allows (a scope the API adds fails the type
 * check until it has one). */
export const API_KEY_SCOPES: Record<ApiKeyScope, string> = {
  'files:write': 'Upload files and sanitize them (uploads and /api/v1/sanitize).',
  'files:read': 'Read the status, report and history of files, and download sanitized copies.',
};
export const API_KEY_NAME_MAX = 100;

export const apiKeyKeys = { all: ['api-keys'] as const };
export const apiKeysQuery = () => queryOptions({
  queryKey: apiKeyKeys.all,
  queryFn: async () => (await api('get', '/api/keys')).data,
  staleTime: 0,
});
export const useApiKeys = (enabled = true) => useQuery({ ...apiKeysQuery(), enabled });

export const createApiKey = async (body: NewApiKey) => (await api('post', '/api/keys', { body })).data;
export const revokeApiKey = async (id: string) =>
  (await api('delete', '/api/keys/{key_id}', { path: { key_id: id } })).data;

/** Create a key; the list is fetched again afterwards. The answer holds the only copy of the secret. */
export function useCreateApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createApiKey,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeyKeys.all }),
  });
}

/** Revoke one of the account's keys; the list is fetched again afterwards. */
export function useRevokeApiKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: revokeApiKey,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: apiKeyKeys.all }),
  });
}

/** Whether a key's expiry has passed at `now`. */
export const isKeyExpired = (key: Pick<ApiKey, 'expiresAt'>, now: number = Date.now()) =>
  !!key.expiresAt && new Date(key.expiresAt).getTime() <= now;

/** The moment a key chosen to expire "on" a local calendar day (YYYY-MM-DD) stops working:
 * the end of that day, i.e. the start of the next one, as ISO 8601. */
export function expiryFromDay(day: string): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + 1).toISOString();
}

/** A local calendar day (YYYY-MM-DD), `days` from today: the date input's bounds. */
export function localDay(days = 0, from: Date = new Date()): string {
  const d = new Date(from.getFullYear(), from.getMonth(), from.getDate() + days);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** The "how to use" example: one file through /api/v1/sanitize with the key in X-API-Key. */
export function curlExample(origin: string): string {
  return [
    `curl -X POST "${origin}/api/v1/sanitize" \\`,
    '  -H "X-API-Key: $SANITAS_API_KEY" \\',
    '  -F "file=@report.docx" \\',
    '  -o report-clean.docx',
  ].join('\n');
}
