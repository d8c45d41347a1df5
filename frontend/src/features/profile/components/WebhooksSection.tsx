import { useEffect, useState } from 'react';
import { toast } from 'react-toastify';
import { Alert, Spinner } from '../../../components/ui';
import { ApiError, messageOf } from '../../../lib/api-client';
import {
  useCreateWebhook, useDeleteWebhook, useSendTestEvent, useUpdateWebhook, useWebhooks,
  type CreatedWebhook, type NewWebhook, type Webhook,
} from '../api';
import { isPlanRequired } from '../../../lib/plans';
import { PlanGatedSection } from './PlanGatedSection';
import { SecretShownOnce } from './SecretShownOnce';
import { WebhookForm, saveProblem, type FormResult } from './WebhookForm';
import { WebhookList } from './WebhookList';

/** The account's webhooks: register an endpoint (its signing secret shown once), list them,
 * switch one on or off, change, delete and test it, and read its delivery log. On a plan
 * without webhooks it names the plans that have them instead. Self-contained. */
export function WebhooksSection() {
  return (
    <PlanGatedSection capability="webhooks" feature={{ name: 'Webhooks', plural: true }} id="webhooks-heading" testId="webhooks-section" title="Webhooks"
      intro={<>A webhook tells your own program when one of your files is ready, was refused or has expired, so it does not have
        to keep asking. Sanitas sends a signed <code className="text-xs">POST</code> to the URL you give.</>}
      noticeTestId="webhooks-plan-notice" upgradeFor="to have Sanitas notify your own programs when files are done.">
      {(onPlanRequired) => <WebhooksManager onPlanRequired={onPlanRequired} />}
    </PlanGatedSection>
  );
}

function WebhooksManager({ onPlanRequired }: { onPlanRequired: () => void }) {
  const webhooks = useWebhooks();
  const create = useCreateWebhook();
  const update = useUpdateWebhook();
  const remove = useDeleteWebhook();
  const test = useSendTestEvent();
  const [created, setCreated] = useState<CreatedWebhook | null>(null);

  useEffect(() => {
    if (isPlanRequired(webhooks.error)) onPlanRequired();
  }, [webhooks.error, onPlanRequired]);

  const onCreate = async (body: NewWebhook): Promise<FormResult> => {
    try {
      const answer = await create.mutateAsync(body);
      setCreated(answer);
      toast.success('Webhook created');
      return { ok: true };
    } catch (error) {
      if (isPlanRequired(error)) onPlanRequired();
      const problem = saveProblem(error, 'Failed to create the webhook');
      toast.error(problem.message);
      return { ok: false, urlError: problem.url };
    }
  };

  const onSave = async (webhook: Webhook, body: NewWebhook): Promise<FormResult> => {
    try {
      await update.mutateAsync({ id: webhook.id, ...body, enabled: webhook.enabled });
      toast.success('Webhook updated');
      return { ok: true };
    } catch (error) {
      const problem = saveProblem(error, 'Failed to update the webhook');
      toast.error(problem.message);
      return { ok: false, urlError: problem.url };
    }
  };

  const onToggle = async (webhook: Webhook) => {
    const enabled = !webhook.enabled;
    try {
      await update.mutateAsync({ id: webhook.id, url: webhook.url, events: webhook.events, enabled });
      toast.success(enabled ? 'Webhook enabled' : 'Webhook disabled');
    } catch (error) {
      toast.error(messageOf(error, enabled ? 'Failed to enable the webhook' : 'Failed to disable the webhook'));
    }
  };

  const onDelete = async (webhook: Webhook) => {
    try {
      await remove.mutateAsync(webhook.id);
      if (created?.webhook.id === webhook.id) setCreated(null);
      toast.success('Webhook deleted');
      return true;
    } catch (error) {
      toast.error(messageOf(error, 'Failed to delete the webhook'));
      return false;
    }
  };

  const onTest = async (webhook: Webhook) => {
    try {
      await test.mutateAsync(webhook.id);
      toast.success('Test event queued: it is sent within seconds');
      return true;
    } catch (error) {
      const tooMany = error instanceof ApiError && error.status === 429;
      toast.error(tooMany
        ? messageOf(error, 'Too many test events for this webhook: wait a minute and try again.')
        : messageOf(error, 'Failed to send the test event'));
      return false;
    }
  };

  return (
    <>
      {created && (
        <SecretShownOnce id="new-webhook-heading" testId="new-webhook" secretTestId="webhook-secret" noun="secret"
          heading={<>Signing secret for {created.webhook.url}</>} secret={created.secret} onDone={() => setCreated(null)}
          why={<>Your program uses it to check that a request really comes from Sanitas. If you lose it, delete the webhook and add it again.</>} />
      )}

      <div className="space-y-4 rounded-xl border border-slate-200 p-4">
        <h3 id="new-webhook-form-heading" className="text-sm font-semibold text-slate-900">Add an endpoint</h3>
        <WebhookForm labelledBy="new-webhook-form-heading" idPrefix="webhook" submitLabel="Add webhook" busyLabel="Adding the webhook"
          busy={create.isPending} onSubmit={onCreate} resetOnSuccess />
      </div>

      <div className="space-y-3">
        <h3 className="text-sm font-semibold text-slate-900">Your endpoints</h3>
        {webhooks.isPending ? <div className="flex justify-center py-6 text-brand-700"><Spinner label="Loading webhooks" className="h-6 w-6" /></div>
          : webhooks.isError ? (
            <Alert tone="error" title="Failed to load your webhooks">
              {messageOf(webhooks.error, '')} <button type="button" className="link" onClick={() => void webhooks.refetch()}>Retry</button>
            </Alert>
          ) : (
            <WebhookList webhooks={webhooks.data} onToggle={onToggle} onSave={onSave} onDelete={onDelete} onTest={onTest}
              busyId={update.isPending ? update.variables.id : remove.isPending ? remove.variables : null}
              testingId={test.isPending ? test.variables : null} />
          )}
      </div>

      <p className="text-xs text-slate-500">
        Each request carries the Standard Webhooks headers <code>webhook-id</code>, <code>webhook-timestamp</code> and{' '}
        <code>webhook-signature</code>; check the signature with the endpoint’s signing secret. A failed delivery is tried again
        for about a day.
      </p>
    </>
  );
}

