import { useState, type FormEvent } from 'react';
import { toast } from 'react-toastify';
import { Container } from '../../../components/Layout';
import { Pager } from '../../../components/Pager';
import { DataTable } from '../../../components/DataTable';
import { Alert, PageHeader, PageSpinner, Spinner, StatusBadge } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { isPlanRequired, useCan } from '../../../lib/plans';
import { Link } from 'react-router-dom';
import { formatBytes, formatDateTime } from '../../../lib/format';
import { UserPicker, type PickedUser } from '../../admin';
import {
  downloadReport, formatPeriod, isReportActive, isoDay, useReports, useRequestReport, type Report, type ReportFormat,
} from '../api';

type ScopeChoice = 'own' | 'all' | 'user';

export default function ReportsPage() {
  const { user } = useAuth();
  const [planRequired, setPlanRequired] = useState(false);
  const allowed = useCan('reports') && !planRequired;
  const isAdmin = user?.role === 'ADMIN';
  const [page, setPage] = useState(1);
  const reports = useReports(page, allowed);
  const request = useRequestReport();
  const [from, setFrom] = useState(() => isoDay(-30));
  const [to, setTo] = useState(() => isoDay(0));
  const [format, setFormat] = useState<ReportFormat>('csv');
  const [scope, setScope] = useState<ScopeChoice>('own');
  const [picked, setPicked] = useState<PickedUser | null>(null);
  const [downloading, setDownloading] = useState<string | null>(null);

  if (!user || !allowed) {
    return (
      <Container narrow>
        <Alert tone="error" title="Compliance reports are not part of your plan.">
          <Link to="/pricing" className="link font-medium">See the plans</Link>
        </Alert>
      </Container>
    );
  }

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (scope === 'user' && !picked) {
      toast.error('Choose the user whose files the report lists');
      return;
    }
    try {
      await request.mutateAsync({ from, to, format, scope: scope === 'user' && picked ? picked.id : scope });
      setPage(1);
      toast.success('Report requested: it appears below when ready');
    } catch (error) {
      if (isPlanRequired(error)) { setPlanRequired(true); return; }
      toast.error(messageOf(error, 'Failed to request the report'));
    }
  };

  const onDownload = async (r: Report) => {
    setDownloading(r.id);
    try {
      await downloadReport(r);
    } catch (error) {
      toast.error(messageOf(error, 'Failed to download the report'));
    } finally {
      setDownloading(null);
    }
  };

  const list = reports.data?.reports ?? [];
  const scopeText = (s: string) => (s === 'own' ? 'Own files' : s === 'all' ? 'Everyone' : s === user.id ? 'Own files' : `User ${s}`);

  return (
    <Container>
      <PageHeader title="Compliance reports" subtitle="Every file of a period with its hashes, policy and result, as CSV or PDF." />
      <form className="card grid gap-4 p-5 sm:grid-cols-2 lg:grid-cols-4" onSubmit={(e) => void submit(e)} aria-label="Request a report">
        <div>
          <label htmlFor="report-from" className="label">From</label>
          <input id="report-from" type="date" className="input" value={from} max={to} required onChange={(e) => setFrom(e.target.value)} />
        </div>
        <div>
          <label htmlFor="report-to" className="label">To</label>
          <input id="report-to" type="date" className="input" value={to} min={from} required onChange={(e) => setTo(e.target.value)} />
        </div>
        <fieldset>
          <legend className="label">Format</legend>
          <div className="flex gap-4 pt-2">
            {(['csv', 'pdf'] as const).map((f) => (
              <label key={f} className="flex items-center gap-1.5 text-sm text-slate-800">
                <input type="radio" name="report-format" value={f} checked={format === f} onChange={() => setFormat(f)} />
                {f.toUpperCase()}
              </label>
            ))}
          </div>
        </fieldset>
        {isAdmin ? (
          <div>
            <label htmlFor="report-scope" className="label">Files of</label>
            <select id="report-scope" className="input" value={scope} onChange={(e) => setScope(e.target.value as ScopeChoice)}>
              <option value="own">My files</option>
              <option value="all">Everyone</option>
              <option value="user">One user…</option>
            </select>
          </div>
        ) : <div className="text-sm text-slate-600 sm:pt-7">The report lists your own files.</div>}
        {isAdmin && scope === 'user' && (
          <div className="sm:col-span-2">
            <UserPicker label="User" value={picked} onChange={setPicked} />
          </div>
        )}
        <div className="sm:col-span-2 lg:col-span-4">
          <button type="submit" className="btn-primary" disabled={request.isPending}>
            {request.isPending && <Spinner label="Requesting" className="h-4 w-4" />}Request report
          </button>
        </div>
      </form>

      <section className="card mt-6 overflow-hidden" aria-label="Reports" aria-busy={reports.isFetching}>
        {reports.isPending ? <PageSpinner label="Loading reports" /> : reports.isError ? (
          <div className="p-6"><Alert tone="error" title="Failed to load reports">{messageOf(reports.error, '')}</Alert></div>
        ) : list.length === 0 ? (
          <p className="px-6 py-12 text-center text-slate-600">No reports yet.</p>
        ) : (
          <DataTable rows={list} rowKey={(r) => r.id} label="Reports table" cardsLabel="Reports"
            bodyProps={{ 'data-testid': 'report-rows' }}
            rowProps={(r) => ({ 'data-testid': 'report-row', 'data-status': r.status })}
            cardProps={(r) => ({ 'data-testid': 'report-card', 'data-status': r.status })}
            columns={[
              { key: 'period', header: 'Period', cellClassName: 'whitespace-nowrap', cell: (r) => formatPeriod(r.periodStart, r.periodEnd) },
              { key: 'scope', header: 'Files of', cell: (r) => scopeText(r.scope) },
              { key: 'format', header: 'Format', cellClassName: 'uppercase', cell: (r) => r.format },
              { key: 'status', header: 'Status', cell: (r) => (
                <>
                  <StatusBadge status={r.status} />
                  {r.status === 'FAILED' && r.errorMessage && <p className="mt-1 text-xs text-red-700">{r.errorMessage}</p>}
                </>
              ) },
              { key: 'files', header: 'Files', cell: (r) => r.fileCount ?? '—' },
              { key: 'requested', header: 'Requested', cellClassName: 'whitespace-nowrap text-slate-600', cell: (r) => formatDateTime(r.createdAt) },
              { key: 'actions', header: 'Actions', className: 'text-right', cellClassName: 'whitespace-nowrap', cardLabel: '', cell: (r) => (
                r.status === 'COMPLETED' ? (
                  <button type="button" className="btn-secondary px-3 py-1.5" disabled={downloading === r.id}
                    aria-label={`Download ${r.format.toUpperCase()} report of ${formatDateTime(r.createdAt)}`} onClick={() => void onDownload(r)}>
                    {downloading === r.id && <Spinner label="Downloading" className="h-4 w-4" />}Download{r.size != null ? ` (${formatBytes(r.size)})` : ''}
                  </button>
                ) : isReportActive(r.status) ? <span className="text-xs text-slate-500">Generating…</span> : null
              ) },
            ]} />
        )}
        <Pager pagination={reports.data?.pagination} label="Report pages" noun="reports" onStep={(step) => setPage((p) => p + step)} />
      </section>
    </Container>
  );
}
