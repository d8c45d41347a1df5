import { useState } from 'react';
import { Spinner } from '../../../components/ui';
import { formatDateTime } from '../../../lib/format';
import type { NewWebhook, Webhook } from '../api';
import { DeliveryLog, DeliveryStateBadge, attemptOutcome } from './DeliveryLog';
import { WebhookForm, type FormResult } from './WebhookForm';

/**
 * The account's endpoints: URL, events, on/off switch and dates, and per endpoint the buttons
 * to change, test and delete it (deleting asks first) and to open its delivery log.
 */
export function WebhookList({ webhooks, onToggle, onSave, onDelete, onTest, busyId, testingId }: {
  webhooks: Webhook[];
  onToggle: (webhook: Webhook) => Promise<void>;
  onSave: (webhook: Webhook, body: NewWebhook) => Promise<FormResult>;
  /** Delete it; resolves true when it was deleted (the caller reports errors). */
  onDelete: (webhook: Webhook) => Promise<boolean>;
  /** Queue a test event; resolves true when it was queued. */
  onTest: (webhook: Webhook) => Promise<boolean>;
  /** The endpoint being changed or deleted. */
  busyId: string | null;
  testingId: string | null;
}) {
  if (webhooks.length === 0) {
    return (
      <p className="rounded-lg bg-slate-50 px-4 py-6 text-center text-sm text-slate-600" data-testid="webhooks-empty">
        No webhooks yet. Add an endpoint above to hear about your files as soon as they are done.
      </p>
    );
  }
  return (
    <ul className="divide-y divide-slate-100 rounded-xl border border-slate-200" aria-label="Webhooks">
      {webhooks.map((webhook) => (
        <WebhookRow key={webhook.id} webhook={webhook} onToggle={onToggle} onSave={onSave} onDelete={onDelete} onTest={onTest}
          busy={busyId === webhook.id} testing={testingId === webhook.id} />
      ))}
    </ul>
  );
}

function WebhookRow({ webhook, onToggle, onSave, onDelete, onTest, busy, testing }: {
  webhook: Webhook;
  onToggle: (webhook: Webhook) => Promise<void>;
  onSave: (webhook: Webhook, body: NewWebhook) => Promise<FormResult>;
  onDelete: (webhook: Webhook) => Promise<boolean>;
  onTest: (webhook: Webhook) => Promise<boolean>;
  busy: boolean;
  testing: boolean;
}) {
  const [mode, setMode] = useState<'view' | 'edit' | 'confirm-delete'>('view');
  const [logOpen, setLogOpen] = useState(false);
  const logId = `webhook-log-${webhook.id}`;

  const save = async (body: NewWebhook) => {
    const result = await onSave(webhook, body);
    if (result.ok) setMode('view');
    return result;
  };
  const remove = async () => {
    if (await onDelete(webhook)) setMode('view');
  };
  const test = async () => {
    if (await onTest(webhook)) setLogOpen(true);
  };

  return (
    <li className="space-y-3 p-4" data-testid="webhook-row" data-webhook-id={webhook.id} data-enabled={webhook.enabled}>
      <div className="flex flex-wrap items-start justify-between gap-3">
        <p className="min-w-0 flex-1 break-all font-mono text-sm text-slate-900" data-testid="webhook-url">{webhook.url}</p>
        <div className="flex items-center gap-2">
          <button type="button" role="switch" aria-checked={webhook.enabled} disabled={busy}
            aria-label={`Send events to ${webhook.url}`} onClick={() => void onToggle(webhook)}
            className={`relative inline-flex h-6 w-11 shrink-0 items-center rounded-full transition-colors focus:outline-none focus:ring-2 focus:ring-brand-500 focus:ring-offset-2 disabled:opacity-50 ${webhook.enabled ? 'bg-brand-600' : 'bg-slate-300'}`}>
            <span aria-hidden="true" className={`inline-block h-5 w-5 rounded-full bg-white shadow transition-transform ${webhook.enabled ? 'translate-x-5' : 'translate-x-0.5'}`} />
          </button>
          <span className={`text-sm font-medium ${webhook.enabled ? 'text-green-800' : 'text-slate-600'}`} data-testid="webhook-state">
            {webhook.enabled ? 'Enabled' : 'Disabled'}
          </span>
        </div>
      </div>
      <div className="flex flex-wrap gap-1" aria-label="Events">
        {webhook.events.map((e) => <code key={e} className="rounded bg-brand-50 px-2 py-0.5 text-xs text-brand-800">{e}</code>)}
      </div>
      <dl className="grid gap-x-4 gap-y-1 text-xs sm:grid-cols-2">
        <div><dt className="text-slate-500">Created</dt><dd className="text-slate-800">{formatDateTime(webhook.createdAt)}</dd></div>
        <div><dt className="text-slate-500">Last changed</dt><dd className="text-slate-800">{formatDateTime(webhook.updatedAt)}</dd></div>
        <div className="sm:col-span-2" data-testid="webhook-last-delivery">
          <dt className="text-slate-500">Last delivery</dt>
          <dd className="flex flex-wrap items-center gap-2 text-slate-800">
            {webhook.lastDelivery ? (
              <>
                <DeliveryStateBadge state={webhook.lastDelivery.state} testId="webhook-last-delivery-state" />
                <code className="font-mono">{webhook.lastDelivery.eventType}</code>
                <span>{formatDateTime(webhook.lastDelivery.finishedAt ?? webhook.lastDelivery.createdAt)}</span>
                {(webhook.lastDelivery.lastStatusCode != null || webhook.lastDelivery.lastError) && (
                  <span className="text-slate-600">
                    {attemptOutcome({ statusCode: webhook.lastDelivery.lastStatusCode ?? null, error: webhook.lastDelivery.lastError ?? null })}
                  </span>
                )}
              </>
            ) : 'None yet'}
          </dd>
        </div>
      </dl>

      {mode === 'edit' ? (
        <div className="rounded-xl border border-slate-200 bg-slate-50 p-3">
          <WebhookForm initial={webhook} idPrefix={`edit-${webhook.id}`} submitLabel="Save changes" busyLabel="Saving the webhook"
            busy={busy} onSubmit={save} onCancel={() => setMode('view')} />
        </div>
      ) : mode === 'confirm-delete' ? (
        <div role="group" aria-label={`Confirm deleting the webhook for ${webhook.url}`} className="rounded-xl border border-red-200 bg-red-50 p-3">
          <p className="text-sm text-red-900">
            Delete the webhook for <span className="break-all font-mono">{webhook.url}</span>? Its delivery log goes with it and
            events still waiting to be sent are dropped. This cannot be undone.
          </p>
          <div className="mt-3 flex flex-wrap gap-2">
            <button type="button" className="btn-primary bg-red-700 hover:bg-red-800" disabled={busy} onClick={() => void remove()}>
              {busy && <Spinner label="Deleting" className="h-4 w-4" />}Delete webhook
            </button>
            <button type="button" className="btn-secondary" disabled={busy} onClick={() => setMode('view')}>Cancel</button>
          </div>
        </div>
      ) : (
        <div className="flex flex-wrap gap-2">
          <button type="button" className="btn-secondary px-3 py-1.5" disabled={testing} onClick={() => void test()}
            aria-label={`Send test event to ${webhook.url}`}>
            {testing && <Spinner label="Sending" className="h-4 w-4" />}Send test event
          </button>
          <button type="button" className="btn-secondary px-3 py-1.5" aria-expanded={logOpen} aria-controls={logId}
            onClick={() => setLogOpen((open) => !open)} aria-label={`Delivery log of ${webhook.url}`}>
            Delivery log<span aria-hidden="true" className="ml-1">{logOpen ? '▴' : '▾'}</span>
          </button>
          <button type="button" className="btn-secondary px-3 py-1.5" disabled={busy} onClick={() => setMode('edit')}
            aria-label={`Edit ${webhook.url}`}>Edit</button>
          <button type="button" className="btn-secondary px-3 py-1.5 text-red-700" disabled={busy} onClick={() => setMode('confirm-delete')}
            aria-label={`Delete ${webhook.url}`}>Delete</button>
        </div>
      )}

      {logOpen && <div id={logId}><DeliveryLog webhookId={webhook.id} /></div>}
    </li>
  );
}
