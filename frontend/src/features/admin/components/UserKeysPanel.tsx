import { useEffect, useRef } from 'react';
import { toast } from 'react-toastify';
import { Alert, Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { ApiKeyList } from '../../profile';
import { useRevokeUserApiKey, useUserApiKeys, type ApiKey } from '../api';

/** One user's API keys in a side panel; an admin may revoke any of them. */
export function UserKeysPanel({ userId, email, onClose }: { userId: string; email: string; onClose: () => void }) {
  const keys = useUserApiKeys(userId);
  const revoke = useRevokeUserApiKey();
  const closeRef = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    closeRef.current?.focus();
    const onKey = (e: globalThis.KeyboardEvent) => { if (e.key === 'Escape') onClose(); };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onClose]);

  const onRevoke = async (key: ApiKey) => {
    try {
      await revoke.mutateAsync({ userId, keyId: key.id });
      toast.success(`API key revoked: ${key.name}`);
      return true;
    } catch (error) {
      toast.error(messageOf(error, 'Failed to revoke the API key'));
      return false;
    }
  };

  return (
    <div className="fixed inset-0 z-40 flex justify-end bg-slate-900/40">
      <div role="dialog" aria-modal="true" aria-labelledby="user-keys-heading" data-testid="user-keys-panel"
        className="flex h-full w-full max-w-xl flex-col overflow-y-auto bg-white shadow-xl">
        <div className="flex items-center justify-between gap-3 border-b border-slate-200 px-5 py-4">
          <h2 id="user-keys-heading" className="min-w-0 truncate text-lg font-semibold text-slate-900">API keys of {email}</h2>
          <button ref={closeRef} type="button" className="btn-ghost px-3 py-1.5" onClick={onClose}>Close</button>
        </div>
        <div className="space-y-4 p-5">
          <p className="text-sm text-slate-600">
            The user’s keys that are not revoked, expired ones included. Revoking one refuses its next call at once; the user
            sees it disappear from their profile.
          </p>
          {keys.isPending ? <div className="flex justify-center py-10 text-brand-700"><Spinner label="Loading API keys" className="h-8 w-8" /></div>
            : keys.isError ? <Alert tone="error" title="Failed to load the API keys">{messageOf(keys.error, '')}</Alert>
            : (
              <ApiKeyList keys={keys.data} onRevoke={onRevoke} whose={`${email}’s`}
                revokingId={revoke.isPending ? revoke.variables.keyId : null} emptyText="This user has no API keys." />
            )}
        </div>
      </div>
    </div>
  );
}
