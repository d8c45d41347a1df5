import { Alert, Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { formatDateTime } from '../../../lib/format';
import { DELIVERIES_SHOWN, useDeliveries, type Delivery, type DeliveryAttempt, type DeliveryState } from '../api';

/** One look per delivery state (a state the API adds fails the type check until it has one). */
const STATES: Record<DeliveryState, { label: string; className: string }> = {
  pending: { label: 'Pending', className: 'bg-yellow-100 text-yellow-800' },
  succeeded: { label: 'Delivered', className: 'bg-green-100 text-green-800' },
  failed: { label: 'Failed', className: 'bg-red-100 text-red-800' },
};

/** A delivery's state as a coloured badge. */
export function DeliveryStateBadge({ state, testId }: { state: DeliveryState; testId: string }) {
  const look = STATES[state];
  return <span className={`rounded-full px-2 py-0.5 text-xs font-semibold ${look.className}`} data-testid={testId}>{look.label}</span>;
}

/** What an attempt got back: the HTTP status, or why there was none. */
export function attemptOutcome(attempt: Pick<DeliveryAttempt, 'statusCode' | 'error'>): string {
  if (attempt.statusCode != null) return attempt.error ? `HTTP ${attempt.statusCode}: ${attempt.error}` : `HTTP ${attempt.statusCode}`;
  return attempt.error ?? 'No answer';
}

/** An endpoint's deliveries, newest first, each with its attempts; followed on its own while
 * one is still pending. */
export function DeliveryLog({ webhookId }: { webhookId: string }) {
  const deliveries = useDeliveries(webhookId);
  return (
    <section className="space-y-3 rounded-xl border border-slate-200 bg-slate-50 p-3" aria-label="Delivery log" data-testid="delivery-log">
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h4 className="text-sm font-semibold text-slate-900">Delivery log</h4>
        <button type="button" className="link text-sm" disabled={deliveries.isFetching} onClick={() => void deliveries.refetch()}>
          {deliveries.isFetching && !deliveries.isPending ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
      {deliveries.isPending ? <div className="flex justify-center py-4 text-brand-700"><Spinner label="Loading the delivery log" className="h-5 w-5" /></div>
        : deliveries.isError ? (
          <Alert tone="error" title="Failed to load the delivery log">{messageOf(deliveries.error, '')}</Alert>
        ) : deliveries.data.length === 0 ? (
          <p className="py-3 text-center text-sm text-slate-600" data-testid="deliveries-empty">
            Nothing sent yet. Events appear here when your files finish; send a test event to try the endpoint now.
          </p>
        ) : (
          <>
            <ul className="space-y-2">
              {deliveries.data.map((d) => <DeliveryItem key={d.id} delivery={d} />)}
            </ul>
            {deliveries.data.length >= DELIVERIES_SHOWN && (
              <p className="text-xs text-slate-500">The latest {DELIVERIES_SHOWN} deliveries are shown.</p>
            )}
          </>
        )}
    </section>
  );
}

function DeliveryItem({ delivery }: { delivery: Delivery }) {
  const attempts = delivery.attemptLog ?? [];
  return (
    <li className="space-y-2 rounded-lg border border-slate-200 bg-white p-3 text-sm" data-testid="delivery"
      data-state={delivery.state} data-event-type={delivery.eventType}>
      <div className="flex flex-wrap items-center gap-2">
        <code className="font-mono text-slate-900" data-testid="delivery-event">{delivery.eventType}</code>
        <DeliveryStateBadge state={delivery.state} testId="delivery-state" />
        <span className="text-xs text-slate-500">{formatDateTime(delivery.createdAt)}</span>
      </div>
      <dl className="grid gap-x-4 gap-y-1 text-xs sm:grid-cols-3">
        <div><dt className="text-slate-500">Attempts</dt><dd className="text-slate-800">{delivery.attempts}</dd></div>
        {delivery.state === 'pending' ? (
          <div><dt className="text-slate-500">Next attempt</dt><dd className="text-slate-800" data-testid="delivery-next">{formatDateTime(delivery.nextAttemptAt)}</dd></div>
        ) : (
          <div><dt className="text-slate-500">Finished</dt><dd className="text-slate-800">{formatDateTime(delivery.finishedAt)}</dd></div>
        )}
        <div className="min-w-0"><dt className="text-slate-500">Event id</dt><dd className="break-all font-mono text-slate-800">{delivery.eventId}</dd></div>
      </dl>
      {attempts.length > 0 ? (
        <ol className="space-y-1 border-t border-slate-100 pt-2 text-xs" aria-label={`Attempts of ${delivery.eventType}`}>
          {attempts.map((a) => (
            <li key={a.attempt} className="flex flex-wrap gap-x-3 gap-y-0.5" data-testid="delivery-attempt" data-status={a.statusCode ?? ''}>
              <span className="font-medium text-slate-900">Attempt {a.attempt}</span>
              <span className="text-slate-600">{formatDateTime(a.at)}</span>
              <span className={`break-all ${a.statusCode != null && a.statusCode < 300 ? 'text-green-800' : 'text-red-800'}`}>{attemptOutcome(a)}</span>
              <span className="text-slate-500">{a.durationMs} ms</span>
            </li>
          ))}
        </ol>
      ) : (
        <p className="text-xs text-slate-500">Not sent yet.</p>
      )}
    </li>
  );
}
