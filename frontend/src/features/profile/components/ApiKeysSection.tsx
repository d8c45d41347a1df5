import { useState, type FormEvent } from 'react';
import { toast } from 'react-toastify';
import { Alert, ScrollArea, Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import {
  API_KEY_NAME_MAX, API_KEY_SCOPES, curlExample, expiryFromDay, localDay, useApiKeys, useCreateApiKey, useRevokeApiKey,
  type ApiKey, type ApiKeyScope, type CreatedApiKey,
} from '../api';
import { ApiKeyList } from './ApiKeyList';
import { isPlanRequired } from '../../../lib/plans';
import { PlanGatedSection } from './PlanGatedSection';
import { SecretShownOnce } from './SecretShownOnce';

const SCOPES = Object.keys(API_KEY_SCOPES) as ApiKeyScope[];
/** The account's API keys: create one (its secret shown once), list them, revoke one. On a
 * plan without API keys it names the plans that have them instead. Self-contained. */
export function ApiKeysSection() {
  return (
    <PlanGatedSection capability="apiKeys" feature={{ name: 'API access' }} id="api-keys-heading" testId="api-keys-section" title="API keys"
      intro={<>Keys let your own programs and scripts upload files, follow their processing and download the clean copies without
        your password. They cannot change your account.</>}
      noticeTestId="api-keys-plan-notice" upgradeFor="to create API keys and sanitize files from your own programs.">
      {(onPlanRequired) => <ApiKeysManager onPlanRequired={onPlanRequired} />}
    </PlanGatedSection>
  );
}

function ApiKeysManager({ onPlanRequired }: { onPlanRequired: () => void }) {
  const keys = useApiKeys();
  const create = useCreateApiKey();
  const revoke = useRevokeApiKey();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<ApiKeyScope[]>(SCOPES);
  const [expiryDay, setExpiryDay] = useState('');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);

  const toggleScope = (scope: ApiKeyScope, on: boolean) =>
    setScopes((current) => SCOPES.filter((s) => (s === scope ? on : current.includes(s))));

  const onCreate = async (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) {
      toast.error('Give the key a name');
      return;
    }
    if (scopes.length === 0) {
      toast.error('Choose at least one scope');
      return;
    }
    const expiresAt = expiryFromDay(expiryDay);
    try {
      const answer = await create.mutateAsync({ name: name.trim(), scopes, ...(expiresAt ? { expiresAt } : {}) });
      setCreated(answer);
      setName('');
      setScopes(SCOPES);
      setExpiryDay('');
      toast.success('API key created');
    } catch (error) {
      if (isPlanRequired(error)) onPlanRequired();
      toast.error(messageOf(error, 'Failed to create the API key'));
    }
  };

  const onRevoke = async (key: ApiKey) => {
    try {
      await revoke.mutateAsync(key.id);
      if (created?.key.id === key.id) setCreated(null);
      toast.success('API key revoked');
      return true;
    } catch (error) {
      toast.error(messageOf(error, 'Failed to revoke the API key'));
      return false;
    }
  };

  return (
    <>
      {created && (
        <SecretShownOnce id="new-key-heading" testId="new-api-key" secretTestId="api-key-secret" noun="key"
          heading={<>Your new key “{created.key.name}”</>} secret={created.secret} onDone={() => setCreated(null)}
          why={<>Sanitas keeps only a fingerprint of the key, so nobody can show it to you later. If you lose it, revoke it and create a new one.</>} />
      )}

      <form onSubmit={onCreate} noValidate className="space-y-4 rounded-xl border border-slate-200 p-4" aria-labelledby="new-key-form-heading">
        <h3 id="new-key-form-heading" className="text-sm font-semibold text-slate-900">Create a key</h3>
        <div className="grid gap-4 sm:grid-cols-2">
          <div>
            <label htmlFor="api-key-name" className="label">Key name</label>
            <input id="api-key-name" className="input" maxLength={API_KEY_NAME_MAX} placeholder="e.g. Nightly import script"
              value={name} onChange={(e) => setName(e.target.value)} aria-describedby="api-key-name-hint" />
            <p id="api-key-name-hint" className="mt-1 text-xs text-slate-500">Say where it is used, to recognise it later.</p>
          </div>
          <div>
            <label htmlFor="api-key-expiry" className="label">Expires on (optional)</label>
            <input id="api-key-expiry" type="date" className="input" min={localDay(0)} value={expiryDay}
              onChange={(e) => setExpiryDay(e.target.value)} aria-describedby="api-key-expiry-hint" />
            <p id="api-key-expiry-hint" className="mt-1 text-xs text-slate-500">The key works until the end of that day. Leave empty for no expiry.</p>
          </div>
        </div>
        <fieldset>
          <legend className="label">Scopes</legend>
          <div className="space-y-2">
            {SCOPES.map((scope) => (
              <div key={scope} className="flex items-start gap-3">
                <input id={`scope-${scope}`} type="checkbox" className="mt-1 h-4 w-4" checked={scopes.includes(scope)}
                  onChange={(e) => toggleScope(scope, e.target.checked)} aria-describedby={`scope-${scope}-hint`} />
                <div>
                  <label htmlFor={`scope-${scope}`} className="font-mono text-sm text-slate-900">{scope}</label>
                  <p id={`scope-${scope}-hint`} className="text-xs text-slate-600">{API_KEY_SCOPES[scope]}</p>
                </div>
              </div>
            ))}
          </div>
        </fieldset>
        <button type="submit" className="btn-primary" disabled={create.isPending}>
          {create.isPending && <Spinner label="Creating the key" className="h-4 w-4" />}Create key
        </button>
      </form>

      <div className="space-y-3">
        <h3 className="text-sm font-semibold text-slate-900">Your keys</h3>
        {keys.isPending ? <div className="flex justify-center py-6 text-brand-700"><Spinner label="Loading API keys" className="h-6 w-6" /></div>
          : keys.isError ? (
            <Alert tone="error" title="Failed to load your API keys">
              {messageOf(keys.error, '')} <button type="button" className="link" onClick={() => void keys.refetch()}>Retry</button>
            </Alert>
          ) : (
            <ApiKeyList keys={keys.data} onRevoke={onRevoke} revokingId={revoke.isPending ? revoke.variables : null}
              emptyText="No API keys yet. Create one above to call the API from a program." />
          )}
      </div>

      <HowToUse />
    </>
  );
}

function HowToUse() {
  const example = curlExample(window.location.origin);
  return (
    <div className="space-y-2" data-testid="api-keys-how-to">
      <h3 className="text-sm font-semibold text-slate-900">How to use a key</h3>
      <p className="text-sm text-slate-600">
        Send it in the <code className="text-xs">X-API-Key</code> header (or as <code className="text-xs">Authorization: Bearer</code>).
        This sends one file and saves the sanitized copy. A refused file answers 422 with the reason; a file still being processed after 30 seconds answers 202 with a status link to follow.
      </p>
      <ScrollArea label="Example call" className="rounded-lg bg-slate-900"><pre className="p-3 text-xs leading-relaxed text-slate-100"><code>{example}</code></pre></ScrollArea>
    </div>
  );
}
