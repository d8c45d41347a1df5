import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type ApiBody } from '../../lib/api';
import type { components } from '../../lib/api-schema';

export const profileKeys = { detail: ['profile'] as const };

export const fetchProfile = async () => (await api('get', '/api/auth/profile')).data;
export const profileQuery = () => queryOptions({ queryKey: profileKeys.detail, queryFn: fetchProfile, staleTime: 0 });
export const useProfile = () => useQuery(profileQuery());

/** The longest first or last name the server keeps. */
export const PROFILE_NAME_MAX = 100;

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

// -- Webhooks (/api/webhooks): the account's endpoints, their delivery log and the test event --
export type Webhook = components['schemas']['WebhookOut'];
export type WebhookEvent = components['schemas']['WebhookEvent'];
export type NewWebhook = ApiBody<'/api/webhooks', 'post'>;
export type CreatedWebhook = components['schemas']['WebhookCreated'];
export type Delivery = components['schemas']['DeliveryOut'];
export type DeliveryAttempt = components['schemas']['DeliveryAttempt'];
export type DeliveryState = components['schemas']['DeliveryState'];

/** Every event an endpoint can subscribe to, with what it means (an event the API adds fails
 * the type check until it has one). */
export const WEBHOOK_EVENTS: Record<WebhookEvent, string> = {
  'file.completed': 'A file was cleaned and its sanitized copy can be downloaded.',
  'file.failed': 'A file was refused or could not be processed.',
  'file.expired': 'A file’s copies were deleted when it expired.',
};
/** The longest URL the API accepts. */
export const WEBHOOK_URL_MAX = 2048;
/** How many deliveries the log shows (the API keeps at most 200, newest first). */
export const DELIVERIES_SHOWN = 50;
/** While a delivery is still pending, the log is fetched again this often. */
export const DELIVERY_POLL_MS = 2000;

export const webhookKeys = {
  all: ['webhooks'] as const,
  deliveries: (id: string) => ['webhooks', id, 'deliveries'] as const,
};
export const webhooksQuery = () => queryOptions({
  queryKey: webhookKeys.all,
  queryFn: async () => (await api('get', '/api/webhooks')).data,
  staleTime: 0,
});
/** The endpoints, fetched again every couple of seconds while one's newest delivery is pending
 * (its "Last delivery" line follows it). */
export const useWebhooks = (enabled = true) => useQuery({
  ...webhooksQuery(),
  enabled,
  refetchInterval: (query) => (query.state.data?.some((w) => w.lastDelivery?.state === 'pending') ? DELIVERY_POLL_MS : false),
});

export const deliveriesQuery = (id: string) => queryOptions({
  queryKey: webhookKeys.deliveries(id),
  queryFn: async () => (await api('get', '/api/webhooks/{webhook_id}/deliveries', {
    path: { webhook_id: id }, query: { limit: DELIVERIES_SHOWN },
  })).data,
  staleTime: 0,
});
/** The endpoint's delivery log, fetched again every couple of seconds while one is pending. */
export const useDeliveries = (id: string) => useQuery({
  ...deliveriesQuery(id),
  refetchInterval: (query) => (query.state.data?.some((d) => d.state === 'pending') ? DELIVERY_POLL_MS : false),
});

export const createWebhook = async (body: NewWebhook) => (await api('post', '/api/webhooks', { body })).data;
export const updateWebhook = async ({ id, ...body }: NewWebhook & { id: string }) =>
  (await api('put', '/api/webhooks/{webhook_id}', { path: { webhook_id: id }, body })).data;
export const deleteWebhook = async (id: string) =>
  (await api('delete', '/api/webhooks/{webhook_id}', { path: { webhook_id: id } })).data;
export const sendTestEvent = async (id: string) =>
  api('post', '/api/webhooks/{webhook_id}/test', { path: { webhook_id: id } });

/** Create an endpoint; the list is fetched again afterwards. The answer holds the only copy of
 * the signing secret. */
export function useCreateWebhook() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: createWebhook,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: webhookKeys.all, exact: true }),
  });
}

/** Replace an endpoint's URL, events and enabled state (the secret stays). */
export function useUpdateWebhook() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: updateWebhook,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: webhookKeys.all, exact: true }),
  });
}

/** Delete an endpoint with its delivery log. */
export function useDeleteWebhook() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: deleteWebhook,
    onSuccess: (_data, id) => {
      queryClient.removeQueries({ queryKey: webhookKeys.deliveries(id) });
      return queryClient.invalidateQueries({ queryKey: webhookKeys.all, exact: true });
    },
  });
}

/** Queue a `webhook.test` delivery; the endpoint's log and the list are fetched again (and then
 * follow it). */
export function useSendTestEvent() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: sendTestEvent,
    onSuccess: (_data, id) => Promise.all([
      queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(id) }),
      queryClient.invalidateQueries({ queryKey: webhookKeys.all, exact: true }),
    ]),
  });
}

/** The server's reason for refusing a URL without its "url: " field prefix, for showing by the
 * URL field: "url: must start with https://" -> "Must start with https://". */
export function urlProblem(message: string): string {
  const text = message.replace(/^url:\s*/i, '');
  return text.charAt(0).toUpperCase() + text.slice(1);
}
