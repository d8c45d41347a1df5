import { useState } from 'react';
import { Spinner } from '../../../components/ui';
import { formatDateTime } from '../../../lib/format';
import { isKeyExpired, type ApiKey } from '../api';

/**
 * API keys as a list that reads at any width: name, prefix, scopes, dates, an "Expired" mark,
 * and a revoke button that asks first. Used by the profile (own keys) and the admin console
 * (a user's keys); `whose` names the owner in the confirmation ("your" / "ada@example.org's").
 */
export function ApiKeyList({ keys, onRevoke, revokingId, whose = 'your', emptyText }: {
  keys: ApiKey[];
  /** Revoke the key; resolves true when it was revoked (the caller reports errors). */
  onRevoke: (key: ApiKey) => Promise<boolean>;
  revokingId?: string | null;
  whose?: string;
  emptyText: string;
}) {
  const [confirming, setConfirming] = useState<string | null>(null);
  if (keys.length === 0) return <p className="rounded-lg bg-slate-50 px-4 py-6 text-center text-sm text-slate-600" data-testid="api-keys-empty">{emptyText}</p>;
  const now = Date.now();

  const revoke = async (key: ApiKey) => {
    if (await onRevoke(key)) setConfirming(null);
  };

  return (
    <ul className="divide-y divide-slate-100 rounded-xl border border-slate-200" aria-label="API keys">
      {keys.map((key) => {
        const expired = isKeyExpired(key, now);
        const busy = revokingId === key.id;
        return (
          <li key={key.id} className="space-y-3 p-4" data-testid="api-key-row" data-key-id={key.id} data-expired={expired}>
            <div className="flex flex-wrap items-start justify-between gap-2">
              <div className="min-w-0">
                <p className="break-words font-medium text-slate-900">
                  {key.name}
                  {expired && <span className="ml-2 rounded-full bg-red-100 px-2 py-0.5 text-xs font-semibold text-red-800" data-testid="api-key-expired">Expired</span>}
                </p>
                <p className="font-mono text-xs text-slate-600" title="The first characters of the key" data-testid="api-key-prefix">{key.prefix}…</p>
              </div>
              {confirming !== key.id && (
                <button type="button" className="btn-secondary px-3 py-1.5 text-red-700" disabled={busy}
                  onClick={() => setConfirming(key.id)} aria-label={`Revoke ${key.name}`}>Revoke</button>
              )}
            </div>
            <div className="flex flex-wrap gap-1" aria-label="Scopes">
              {key.scopes.map((s) => <code key={s} className="rounded bg-brand-50 px-2 py-0.5 text-xs text-brand-800">{s}</code>)}
            </div>
            <dl className="grid gap-x-4 gap-y-1 text-xs sm:grid-cols-3">
              <div><dt className="text-slate-500">Created</dt><dd className="text-slate-800">{formatDateTime(key.createdAt)}</dd></div>
              <div><dt className="text-slate-500">Last used</dt><dd className="text-slate-800" data-testid="api-key-last-used">{key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never'}</dd></div>
              <div><dt className="text-slate-500">{expired ? 'Expired' : 'Expires'}</dt>
                <dd className={expired ? 'font-medium text-red-700' : 'text-slate-800'}>{key.expiresAt ? formatDateTime(key.expiresAt) : 'Never'}</dd></div>
            </dl>
            {confirming === key.id && (
              <div role="group" aria-label={`Confirm revoking ${key.name}`} className="rounded-xl border border-red-200 bg-red-50 p-3">
                <p className="text-sm text-red-900">
                  Revoke {whose} key “{key.name}”? Programs that use it are refused from their next call. This cannot be undone.
                </p>
                <div className="mt-3 flex flex-wrap gap-2">
                  <button type="button" className="btn-primary bg-red-700 hover:bg-red-800" disabled={busy} onClick={() => void revoke(key)}>
                    {busy && <Spinner label="Revoking" className="h-4 w-4" />}Revoke key
                  </button>
                  <button type="button" className="btn-secondary" disabled={busy} onClick={() => setConfirming(null)}>Cancel</button>
                </div>
              </div>
            )}
          </li>
        );
      })}
    </ul>
  );
}
