import { useEffect, useState } from 'react';
import { Link } from 'react-router-dom';
import { toast } from 'react-toastify';
import { Container } from '../../../components/Layout';
import { Pager } from '../../../components/Pager';
import { DataTable } from '../../../components/DataTable';
import { Alert, PageHeader, PageSpinner, Spinner, StatTile, StatusBadge } from '../../../components/ui';
import { VERDICTS, VERDICT_VALUES, VerdictBadge, isVerdict } from '../../../components/Verdict';
import { messageOf } from '../../../lib/api-client';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { formatBytes, formatDateTime } from '../../../lib/format';
import type { FileHistory, FileRecord, StatusFilter } from '../../../lib/types';

type FileSummary = NonNullable<FileHistory['files']>[number];
import { DownloadAllButton } from '../../files';
import { useDownloadFile } from '../../files/api';
import { DEFAULT_FILTERS, SORT_FIELDS, STATUS_FILTERS, emptyHistoryMessage, useHistory, type HistoryFilters } from '../api';

export default function HistoryPage() {
  const { user } = useAuth();
  const [filters, setFilters] = useState<HistoryFilters>(DEFAULT_FILTERS);
  const [searchText, setSearchText] = useState('');
  const [downloading, setDownloading] = useState<string | null>(null);
  // Files ticked for "Download selected", kept across pages and filters until downloaded.
  const [selected, setSelected] = useState<string[]>([]);
  const history = useHistory(user?.id, filters);
  const download = useDownloadFile();

  useEffect(() => {
    const t = setTimeout(() => setFilters((f) => (f.search === searchText ? f : { ...f, search: searchText, page: 1 })), 300);
    return () => clearTimeout(t);
  }, [searchText]);

  if (!user) return <Container narrow><Alert tone="error" page title="Access Denied - Please log in to view your file history." /></Container>;

  const update = (patch: Partial<HistoryFilters>) => setFilters((f) => ({ ...f, page: 1, ...patch }));

  const onDownload = async (file: FileRecord) => {
    setDownloading(file.id);
    try {
      await download.mutateAsync(file);
      toast.success('File download started');
    } catch (error) {
      toast.error(messageOf(error, 'Failed to download file'));
    } finally {
      setDownloading(null);
    }
  };

  const stats = history.data?.stats;
  const files = history.data?.files ?? [];
  const downloadable = (f: FileSummary) => f.status === 'COMPLETED' && !f.isExpired;
  const toggle = (id: string, on: boolean) => setSelected((ids) => (on ? (ids.includes(id) ? ids : [...ids, id]) : ids.filter((x) => x !== id)));
  const pageIds = files.filter(downloadable).map((f) => f.id);
  const allOnPage = pageIds.length > 0 && pageIds.every((id) => selected.includes(id));
  const selectBox = (f: FileSummary) => downloadable(f) ? (
    <input type="checkbox" className="h-4 w-4 rounded border-slate-400 text-brand-700" checked={selected.includes(f.id)}
      onChange={(e) => toggle(f.id, e.target.checked)} aria-label={`Select ${f.originalName}`} />
  ) : null;

  return (
    <Container>
      <PageHeader title="File History" subtitle="Every file you have uploaded, with its status." actions={<Link to="/upload" className="btn-primary">Upload Files</Link>} />
      <div className="grid grid-cols-2 gap-4 sm:grid-cols-3 lg:grid-cols-5">
        <StatTile label="Total" value={stats?.total ?? '—'} />
        <StatTile label="Completed" value={stats?.completed ?? '—'} tone="green" />
        <StatTile label="Processing" value={stats?.processing ?? '—'} tone="blue" />
        <StatTile label="Pending" value={stats?.pending ?? '—'} tone="yellow" />
        <StatTile label="Failed" value={stats?.failed ?? '—'} tone="red" />
      </div>

      <div className="card mt-6 grid gap-4 p-4 sm:grid-cols-2 lg:grid-cols-5" role="search">
        <div>
          <label htmlFor="search" className="label">Search by file name</label>
          <input id="search" type="search" className="input" placeholder="e.g. invoice.pdf" value={searchText} onChange={(e) => setSearchText(e.target.value)} />
        </div>
        <div>
          <label htmlFor="status" className="label">Status</label>
          <select id="status" className="input" value={filters.status} onChange={(e) => update({ status: e.target.value as StatusFilter })}>
            {STATUS_FILTERS.map((s) => <option key={s} value={s}>{s === 'ALL' ? 'All statuses' : s}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="verdict" className="label">Verdict</label>
          <select id="verdict" className="input" value={filters.verdict} onChange={(e) => update({ verdict: isVerdict(e.target.value) ? e.target.value : '' })}>
            <option value="">All verdicts</option>
            {VERDICT_VALUES.map((v) => <option key={v} value={v}>{VERDICTS[v].short}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="sortBy" className="label">Sort by</label>
          <select id="sortBy" className="input" value={filters.sortBy} onChange={(e) => update({ sortBy: e.target.value as HistoryFilters['sortBy'] })}>
            {SORT_FIELDS.map((s) => <option key={s.value} value={s.value}>{s.label}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="sortOrder" className="label">Order</label>
          <select id="sortOrder" className="input" value={filters.sortOrder} onChange={(e) => update({ sortOrder: e.target.value as HistoryFilters['sortOrder'] })}>
            <option value="desc">Descending</option>
            <option value="asc">Ascending</option>
          </select>
        </div>
      </div>

      <div className="mt-6 flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between" data-testid="history-selection">
        <p className="text-sm text-slate-600" aria-live="polite">
          {selected.length ? `${selected.length} file(s) selected` : 'Tick completed files to download them together.'}
          {selected.length > 0 && <> <button type="button" className="link" onClick={() => setSelected([])}>Clear selection</button></>}
        </p>
        {selected.length > 0 && <DownloadAllButton fileIds={selected} label="Download selected" />}
      </div>

      <section className="card mt-4 overflow-hidden" aria-label="Files" aria-busy={history.isFetching}>
        {history.isPending ? <PageSpinner label="Loading file history" /> : history.isError ? (
          <div className="p-6">
            <Alert tone="error" title="Failed to fetch file history">{messageOf(history.error, '')}</Alert>
            <button type="button" className="btn-primary mt-4" onClick={() => history.refetch()}>Try Again</button>
          </div>
        ) : files.length === 0 ? (
          <p className="px-6 py-16 text-center text-slate-600" data-testid="history-empty">{emptyHistoryMessage(filters)}</p>
        ) : (
          <DataTable rows={files} rowKey={(f) => f.id} label="Files table" cardsLabel="Files" from="sm"
            card={(f) => (
              <>
                <div className="flex items-start justify-between gap-3">
                  <span className="flex min-w-0 items-center gap-2">
                    {selectBox(f)}
                    <Link to={`/status/${f.id}`} className="min-w-0 truncate font-medium text-slate-900 hover:text-brand-700" title={f.originalName}>{f.originalName}</Link>
                  </span>
                  <StatusBadge status={f.status} />
                </div>
                {f.verdict && <div className="mt-1"><VerdictBadge verdict={f.verdict} /></div>}
                <p className="mt-1 text-xs text-slate-500">{formatBytes(f.originalSize)} · {formatDateTime(f.createdAt)}{f.policy ? ` · ${f.policy.name}` : ''}</p>
                <div className="mt-3">
                  {f.status === 'COMPLETED' && !f.isExpired ? (
                    <button type="button" className="btn-secondary w-full py-2" onClick={() => onDownload(f)} disabled={downloading === f.id} aria-label={`Download ${f.originalName}`}>
                      {downloading === f.id && <Spinner label="Downloading" className="h-4 w-4" />}Download
                    </button>
                  ) : (
                    <Link to={`/status/${f.id}`} className="btn-ghost w-full py-2">View Status</Link>
                  )}
                </div>
              </>
            )}
            columns={[
              { key: 'select', className: 'w-10', cell: (f) => selectBox(f), header: (
                <input type="checkbox" className="h-4 w-4 rounded border-slate-400 text-brand-700" checked={allOnPage} disabled={pageIds.length === 0}
                  onChange={(e) => setSelected((ids) => (e.target.checked ? [...new Set([...ids, ...pageIds])] : ids.filter((id) => !pageIds.includes(id))))}
                  aria-label="Select every completed file on this page" />
              ) },
              { key: 'file', header: 'File', cellClassName: 'max-w-[12rem] sm:max-w-xs', cell: (f) => (
                <>
                  <Link to={`/status/${f.id}`} className="block truncate font-medium text-slate-900 hover:text-brand-700" title={f.originalName}>{f.originalName}</Link>
                  {f.sanitizedName && <p className="truncate text-xs text-slate-500">{f.sanitizedName}</p>}
                  {f.policy && <p className="truncate text-xs text-slate-500">Policy: {f.policy.name} (v{f.policy.version})</p>}
                </>
              ) },
              { key: 'size', header: 'Size', cellClassName: 'whitespace-nowrap text-slate-700', cell: (f) => formatBytes(f.originalSize) },
              { key: 'status', header: 'Status', cell: (f) => <StatusBadge status={f.status} /> },
              { key: 'verdict', header: 'Verdict', title: (f) => f.verdictSummary ?? undefined, cell: (f) => <VerdictBadge verdict={f.verdict} /> },
              { key: 'uploaded', header: 'Uploaded', className: 'hidden md:table-cell', cellClassName: 'whitespace-nowrap text-slate-600', cell: (f) => formatDateTime(f.createdAt) },
              { key: 'actions', header: 'Actions', className: 'text-right', cellClassName: 'whitespace-nowrap', cell: (f) => (
                f.status === 'COMPLETED' && !f.isExpired ? (
                  <button type="button" className="btn-secondary px-3 py-1.5" onClick={() => onDownload(f)} disabled={downloading === f.id} aria-label={`Download ${f.originalName}`}>
                    {downloading === f.id && <Spinner label="Downloading" className="h-4 w-4" />}Download
                  </button>
                ) : (
                  <Link to={`/status/${f.id}`} className="btn-ghost px-3 py-1.5">Status</Link>
                )
              ) },
            ]} />
        )}
        <Pager pagination={history.data?.pagination} label="Pagination" noun="files" onStep={(step) => setFilters((f) => ({ ...f, page: f.page + step }))} />
      </section>
    </Container>
  );
}
