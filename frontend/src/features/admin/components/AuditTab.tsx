import { useState } from 'react';
import { toast } from 'react-toastify';
import { Pager } from '../../../components/Pager';
import { DataTable } from '../../../components/DataTable';
import { Alert, PageSpinner, Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { formatDateTime } from '../../../lib/format';
import {
  AUDIT_ACTIONS, DEFAULT_AUDIT_FILTERS, exportAudit, useAudit, type AuditAction, type AuditEntry, type AuditFilters,
} from '../api';
import { UserPicker, type PickedUser } from './UserPicker';

const ACTIONS = Object.keys(AUDIT_ACTIONS) as AuditAction[];

/** The detail of an entry in one line: `key: value` pairs, nested values as JSON. */
function detailText(detail: AuditEntry['detail']): string {
  if (!detail) return '';
  return Object.entries(detail).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' · ');
}

/** Security-relevant actions: who, when, from where, what; filtered, paged, exported as CSV. */
export function AuditTab() {
  const [filters, setFilters] = useState<AuditFilters>(DEFAULT_AUDIT_FILTERS);
  const [exporting, setExporting] = useState(false);
  const audit = useAudit(filters);
  const update = (patch: Partial<AuditFilters>) => setFilters((f) => ({ ...f, page: 1, ...patch }));
  // The user filter's email, for the picker's chip (the API filters by id).
  const [user, setUser] = useState<PickedUser | null>(null);
  const onUser = (picked: PickedUser | null) => {
    setUser(picked);
    update({ userId: picked?.id ?? '' });
  };
  // Who did it: a button that filters to that user, or plain text for an anonymous actor.
  const actor = (e: AuditEntry, plain: string) => (e.actorId ? (
    <button type="button" className="link text-left" title="Show only this user’s entries" onClick={() => onUser({ id: e.actorId ?? '', email: e.actorEmail ?? e.actorId ?? '' })}>
      {e.actorEmail ?? e.actorId}
    </button>
  ) : <span className={plain}>{e.actorEmail ?? '—'}</span>);

  const onExport = async () => {
    setExporting(true);
    try {
      await exportAudit(filters);
      toast.success('Audit log export started');
    } catch (error) {
      toast.error(messageOf(error, 'Failed to export the audit log'));
    } finally {
      setExporting(false);
    }
  };

  const rows = audit.data?.entries ?? [];
  return (
    <div className="space-y-4">
      <div className="card grid gap-4 p-4 sm:grid-cols-2 lg:grid-cols-5" role="search" aria-label="Audit filters">
        <div>
          <label htmlFor="audit-action" className="label">Action</label>
          <select id="audit-action" className="input" value={filters.action} onChange={(e) => update({ action: e.target.value as AuditAction | '' })}>
            <option value="">All actions</option>
            {ACTIONS.map((a) => <option key={a} value={a}>{AUDIT_ACTIONS[a]}</option>)}
          </select>
        </div>
        <UserPicker label="User" value={user} onChange={onUser} />
        <div>
          <label htmlFor="audit-from" className="label">From</label>
          <input id="audit-from" type="date" className="input" value={filters.from} onChange={(e) => update({ from: e.target.value })} />
        </div>
        <div>
          <label htmlFor="audit-to" className="label">To</label>
          <input id="audit-to" type="date" className="input" value={filters.to} onChange={(e) => update({ to: e.target.value })} />
        </div>
        <div className="flex items-end gap-2">
          <button type="button" className="btn-secondary" onClick={() => void onExport()} disabled={exporting}>
            {exporting && <Spinner label="Exporting" className="h-4 w-4" />}Export CSV
          </button>
          <button type="button" className="btn-ghost" onClick={() => { setUser(null); setFilters(DEFAULT_AUDIT_FILTERS); }}>Clear</button>
        </div>
      </div>

      <section className="card overflow-hidden" aria-label="Audit log" aria-busy={audit.isFetching}>
        {audit.isPending ? <PageSpinner label="Loading the audit log" /> : audit.isError ? (
          <div className="p-6"><Alert tone="error" title="Failed to load the audit log">{messageOf(audit.error, '')}</Alert></div>
        ) : rows.length === 0 ? (
          <p className="px-6 py-12 text-center text-slate-600">No entries match these filters.</p>
        ) : (
          <DataTable rows={rows} rowKey={(e) => String(e.id)} label="Audit log table" cardsLabel="Audit entries"
            bodyProps={{ 'data-testid': 'audit-rows' }}
            rowProps={(e) => ({ 'data-testid': 'audit-row', 'data-action': e.action })}
            cardClassName="space-y-1 px-4 py-4 text-sm" cardProps={(e) => ({ 'data-testid': 'audit-card', 'data-action': e.action })}
            card={(e) => (
              <>
                <div className="flex flex-wrap items-baseline justify-between gap-x-3">
                  <p className="font-medium text-slate-900">{AUDIT_ACTIONS[e.action] ?? e.action}</p>
                  <p className="text-xs text-slate-600">{formatDateTime(e.createdAt)}</p>
                </div>
                <p className="break-words">
                  {actor(e, 'text-slate-600')}
                  {e.ip && <span className="font-mono text-xs text-slate-600"> · {e.ip}</span>}
                </p>
                <p className="break-words text-slate-700">
                  {e.targetType && <span className="text-slate-600">{e.targetType} <code className="break-all text-xs">{e.targetId}</code> </span>}
                  {detailText(e.detail)}
                </p>
              </>
            )}
            columns={[
              { key: 'when', header: 'When', cellClassName: 'whitespace-nowrap text-slate-600', cell: (e) => formatDateTime(e.createdAt) },
              { key: 'action', header: 'Action', cellClassName: 'whitespace-nowrap font-medium text-slate-900', cell: (e) => AUDIT_ACTIONS[e.action] ?? e.action },
              { key: 'who', header: 'Who', cell: (e) => actor(e, 'text-slate-500') },
              { key: 'from', header: 'From', cellClassName: 'whitespace-nowrap font-mono text-xs text-slate-600', cell: (e) => e.ip ?? '—' },
              { key: 'what', header: 'What', cellClassName: 'max-w-md text-slate-700', cell: (e) => (
                <>
                  {e.targetType && <span className="text-slate-500">{e.targetType} <code className="text-xs">{e.targetId}</code> </span>}
                  <span className="break-words">{detailText(e.detail)}</span>
                </>
              ) },
            ]} />
        )}
        <Pager pagination={audit.data?.pagination} label="Audit pages" noun="entries" onStep={(step) => setFilters((f) => ({ ...f, page: f.page + step }))} />
      </section>
    </div>
  );
}
