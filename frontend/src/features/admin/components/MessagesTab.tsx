import { useState } from 'react';
import { Pager } from '../../../components/Pager';
import { Alert, PageSpinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { formatDateTime } from '../../../lib/format';
import { useContactMessages } from '../api';

/** What visitors sent through the contact page. */
export function MessagesTab() {
  const [page, setPage] = useState(1);
  const messages = useContactMessages(page);
  if (messages.isPending) return <PageSpinner label="Loading messages" />;
  if (messages.isError) return <Alert tone="error" title="Failed to load messages">{messageOf(messages.error, '')}</Alert>;
  const { messages: rows, pagination } = messages.data;
  if (!rows.length) return <div className="card p-10 text-center text-slate-600">No messages yet.</div>;
  return (
    <section aria-label="Contact messages" className="space-y-3">
      {rows.map((m) => (
        <article key={m.id} className="card p-5" data-testid="contact-message">
          <div className="flex flex-col gap-1 sm:flex-row sm:items-baseline sm:justify-between">
            <h2 className="font-semibold text-slate-900">{m.subject}</h2>
            <p className="text-xs text-slate-500">{formatDateTime(m.createdAt)}</p>
          </div>
          <p className="mt-1 text-sm text-slate-600">{m.name} · <a className="link" href={`mailto:${m.email}`}>{m.email}</a>{m.userId ? ' · signed-in user' : ''}</p>
          <p className="mt-3 whitespace-pre-line text-sm text-slate-800">{m.message}</p>
        </article>
      ))}
      <Pager pagination={pagination} label="Message pages" inCard={false} onStep={(step) => setPage((n) => n + step)} />
    </section>
  );
}
