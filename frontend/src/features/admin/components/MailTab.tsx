import { useState } from 'react';
import { toast } from 'react-toastify';
import { Pager } from '../../../components/Pager';
import { Alert, PageSpinner, Spinner } from '../../../components/ui';
import { VerdictBadge, isVerdict } from '../../../components/Verdict';
import { messageOf } from '../../../lib/api-client';
import { formatBytes, formatDateTime } from '../../../lib/format';
import { HELD_STATUSES, useHeldMessages, useReleaseHeld, type HeldMessage, type HeldStatus } from '../api';

const STATUSES = Object.keys(HELD_STATUSES) as HeldStatus[];

/** One message the mail filter handled: envelope, subject, verdict, attachments, and the
 * release of its original while it is kept. */
function HeldCard({ m }: { m: HeldMessage }) {
  const release = useReleaseHeld();
  const [confirming, setConfirming] = useState(false);
  const onRelease = async () => {
    try {
      await release.mutateAsync(m.id);
      toast.success(`The original was released to ${m.recipients.length} recipient(s)`);
    } catch (error) {
      toast.error(messageOf(error, 'Failed to release the original'));
    } finally {
      setConfirming(false);
    }
  };
  return (
    <article className="card space-y-2 p-5" data-testid="held-message" data-status={m.status}>
      <div className="flex flex-col gap-1 sm:flex-row sm:items-baseline sm:justify-between">
        <h2 className="break-words font-semibold text-slate-900">{m.subject || '(no subject)'}</h2>
        <p className="text-xs text-slate-600">{formatDateTime(m.createdAt)}</p>
      </div>
      <p className="break-words text-sm text-slate-700">
        From <span className="font-medium">{m.sender || '<>'}</span> to {m.recipients.join(', ')}
      </p>
      <p className="flex flex-wrap items-center gap-2 text-sm text-slate-700">
        <span className="rounded bg-slate-100 px-2 py-0.5 text-xs font-medium text-slate-700">{HELD_STATUSES[m.status as HeldStatus] ?? m.status}</span>
        {isVerdict(m.verdict) && <VerdictBadge verdict={m.verdict} />}
        {m.summary && <span>{m.summary}</span>}
      </p>
      <p className="text-xs text-slate-600">
        {formatBytes(m.size)}
        {m.duration != null && <> · {m.duration.toFixed(2)} s</>}
        {m.messageId && <> · <code className="break-all">{m.messageId}</code></>}
        {m.attempts > 1 && <> · {m.attempts} attempts</>}
      </p>
      {m.reason && <p className="text-sm text-red-800">{m.reason}</p>}
      {m.attachments.length > 0 && (
        <ul className="space-y-1 text-sm" aria-label="Attachments">
          {m.attachments.map((a, i) => (
            <li key={`${a.deliveredAs}-${i}`} className="flex flex-wrap items-center gap-2" data-testid="held-attachment">
              <span className="break-all font-medium text-slate-800">{a.name}</span>
              {isVerdict(a.verdict) && <VerdictBadge verdict={a.verdict} />}
              <span className="text-slate-600">{a.summary}</span>
            </li>
          ))}
        </ul>
      )}
      <div className="flex flex-wrap items-center gap-2 pt-1">
        {m.status === 'released' ? (
          <p className="text-sm text-slate-700">Released by {m.releasedBy} on {formatDateTime(m.releasedAt)}</p>
        ) : !m.originalKept ? (
          <p className="text-sm text-slate-600">The original is no longer kept.</p>
        ) : confirming ? (
          <>
            <span className="text-sm text-slate-800">Send the original, uncleaned, to its recipients?</span>
            <button type="button" className="btn-danger" disabled={release.isPending} onClick={() => void onRelease()}>
              {release.isPending && <Spinner label="Releasing" className="h-4 w-4" />}Release original
            </button>
            <button type="button" className="btn-ghost" onClick={() => setConfirming(false)}>Cancel</button>
          </>
        ) : (
          <button type="button" className="btn-secondary" onClick={() => setConfirming(true)}>Release original…</button>
        )}
        {m.originalKept && m.expiresAt && m.status !== 'released' && (
          <span className="text-xs text-slate-600">kept until {formatDateTime(m.expiresAt)}</span>
        )}
      </div>
    </article>
  );
}

/** Messages the mail filter (`sanitas mail`) handled, newest first, with release of originals. */
export function MailTab() {
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<HeldStatus | ''>('');
  const held = useHeldMessages(page, status);
  return (
    <div className="space-y-4">
      <div className="card flex flex-wrap items-end gap-4 p-4" role="search" aria-label="Mail filters">
        <div>
          <label htmlFor="held-status" className="label">Status</label>
          <select id="held-status" className="input" value={status}
            onChange={(e) => { setPage(1); setStatus(e.target.value as HeldStatus | ''); }}>
            <option value="">All messages</option>
            {STATUSES.map((s) => <option key={s} value={s}>{HELD_STATUSES[s]}</option>)}
          </select>
        </div>
      </div>
      {held.isPending ? <PageSpinner label="Loading held mail" /> : held.isError ? (
        <Alert tone="error" title="Failed to load held mail">{messageOf(held.error, '')}</Alert>
      ) : held.data.messages.length === 0 ? (
        <div className="card p-10 text-center text-slate-600">No messages have been filtered yet.</div>
      ) : (
        <section aria-label="Held mail" className="space-y-3">
          {held.data.messages.map((m) => <HeldCard key={m.id} m={m} />)}
          <Pager pagination={held.data.pagination} label="Held mail pages" inCard={false} noun="messages"
            onStep={(step) => setPage((n) => n + step)} />
        </section>
      )}
    </div>
  );
}
