import { useId, useState, type FormEvent } from 'react';
import { Spinner } from '../../../components/ui';
import { ApiError, messageOf } from '../../../lib/api-client';
import { WEBHOOK_EVENTS, WEBHOOK_URL_MAX, urlProblem, type NewWebhook, type Webhook, type WebhookEvent } from '../api';

export const EVENTS = Object.keys(WEBHOOK_EVENTS) as WebhookEvent[];
/** The refusals that are about the URL: shown by the URL field. */
const URL_CODES = new Set(['invalid_webhook_url', 'webhook_url_not_allowed', 'webhook_url_unresolvable']);

/** What a failed save means for the form: a problem with the URL (shown by its field) or not. */
export function saveProblem(error: unknown, fallback: string): { url?: string; message: string } {
  const message = messageOf(error, fallback);
  const aboutUrl = error instanceof ApiError && error.status === 422 && !!error.serverMessage
    && (URL_CODES.has(error.code ?? '') || /^url\b/i.test(error.serverMessage));
  return aboutUrl ? { url: urlProblem(message), message } : { message };
}

export type FormResult = { ok: true } | { ok: false; urlError?: string };

/** URL and events of an endpoint, for adding one or changing it. The URL field shows what is
 * wrong with the URL (the server's reason when it refuses it). */
export function WebhookForm({ initial, idPrefix, labelledBy, submitLabel, busyLabel, busy, onSubmit, onCancel, resetOnSuccess = false }: {
  initial?: Pick<Webhook, 'url' | 'events'>;
  idPrefix: string;
  labelledBy?: string;
  submitLabel: string;
  busyLabel: string;
  busy: boolean;
  /** Save. The body says `enabled: true`; a caller changing an endpoint keeps its current state instead. */
  onSubmit: (body: NewWebhook) => Promise<FormResult>;
  onCancel?: () => void;
  resetOnSuccess?: boolean;
}) {
  const [url, setUrl] = useState(initial?.url ?? '');
  const [events, setEvents] = useState<WebhookEvent[]>(initial?.events ?? EVENTS);
  const [urlError, setUrlError] = useState<string | null>(null);
  const [eventsError, setEventsError] = useState<string | null>(null);
  const hintId = useId();

  const toggleEvent = (event: WebhookEvent, on: boolean) => {
    setEventsError(null);
    setEvents((current) => EVENTS.filter((e) => (e === event ? on : current.includes(e))));
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const trimmed = url.trim();
    const missingUrl = !trimmed;
    setUrlError(missingUrl ? 'Enter the URL that receives the events' : null);
    setEventsError(events.length === 0 ? 'Choose at least one event' : null);
    if (missingUrl || events.length === 0) return;
    const result = await onSubmit({ url: trimmed, events, enabled: true });
    if (result.ok) {
      if (resetOnSuccess) {
        setUrl('');
        setEvents(EVENTS);
      }
    } else {
      setUrlError(result.urlError ?? null);
    }
  };

  const urlId = `${idPrefix}-url`;
  return (
    <form onSubmit={submit} noValidate className="space-y-4" aria-labelledby={labelledBy}>
      <div>
        <label htmlFor={urlId} className="label">Endpoint URL</label>
        <input id={urlId} type="url" inputMode="url" className="input" placeholder="https://example.com/hooks/sanitas" maxLength={WEBHOOK_URL_MAX}
          value={url} onChange={(e) => { setUrl(e.target.value); setUrlError(null); }} aria-invalid={!!urlError}
          aria-describedby={urlError ? `${urlId}-error` : hintId} />
        {urlError
          ? <p id={`${urlId}-error`} className="mt-1 text-xs font-medium text-red-700" data-testid="webhook-url-error">{urlError}</p>
          : <p id={hintId} className="mt-1 text-xs text-slate-500">An https:// address on the public internet, where your program listens.</p>}
      </div>
      <fieldset aria-describedby={eventsError ? `${idPrefix}-events-error` : undefined}>
        <legend className="label">Events</legend>
        <div className="space-y-2">
          {EVENTS.map((event) => {
            const id = `${idPrefix}-event-${event}`;
            return (
              <div key={event} className="flex items-start gap-3">
                <input id={id} type="checkbox" className="mt-1 h-4 w-4" checked={events.includes(event)}
                  onChange={(e) => toggleEvent(event, e.target.checked)} aria-describedby={`${id}-hint`} />
                <div>
                  <label htmlFor={id} className="font-mono text-sm text-slate-900">{event}</label>
                  <p id={`${id}-hint`} className="text-xs text-slate-600">{WEBHOOK_EVENTS[event]}</p>
                </div>
              </div>
            );
          })}
        </div>
        {eventsError && <p id={`${idPrefix}-events-error`} className="mt-1 text-xs font-medium text-red-700">{eventsError}</p>}
      </fieldset>
      <div className="flex flex-wrap gap-2">
        <button type="submit" className="btn-primary" disabled={busy}>
          {busy && <Spinner label={busyLabel} className="h-4 w-4" />}{submitLabel}
        </button>
        {onCancel && <button type="button" className="btn-secondary" disabled={busy} onClick={onCancel}>Cancel</button>}
      </div>
    </form>
  );
}
