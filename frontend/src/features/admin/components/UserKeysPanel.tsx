import { toast } from 'react-toastify';
import { SidePanel } from '../../../components/Dialog';
import { Alert, Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { ApiKeyList } from '../../profile';
import { useRevokeUserApiKey, useUserApiKeys, type ApiKey } from '../api';

/** One user's API keys in a side panel; an admin may revoke any of them. */
export function UserKeysPanel({ userId, email, onClose }: { userId: string; email: string; onClose: () => void }) {
  const keys = useUserApiKeys(userId);
  const revoke = useRevokeUserApiKey();

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
    <SidePanel title={`API keys of ${email}`} onClose={onClose} testId="user-keys-panel">
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
    </SidePanel>
  );
}
