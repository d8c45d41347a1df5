import { useCallback, useEffect, useState } from 'react';
import { toast } from 'react-toastify';
import { InlineConfirm, SidePanel } from '../../../components/Dialog';
import { Pager } from '../../../components/Pager';
import { DataTable } from '../../../components/DataTable';
import { Alert, DetailRow, PageSpinner, Spinner, StatusBadge } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { formatBytes, formatDateTime } from '../../../lib/format';
import type { StatusFilter } from '../../../lib/types';
import { FindingsReport, HashValue } from '../../files';
import {
  ADMIN_FILE_STATUSES, DEFAULT_ADMIN_FILE_FILTERS, useAdminFile, useAdminFiles, useDeleteAdminFile, useRequeueAdminFile,
  type AdminFileFilters, type AdminFileSummary,
} from '../api';

const STATUS_LABELS: Record<StatusFilter, string> = {
  ALL: 'All statuses', PENDING: 'Pending', PROCESSING: 'Processing', COMPLETED: 'Completed', FAILED: 'Failed',
};
const isStatus = (value: string): value is StatusFilter => (ADMIN_FILE_STATUSES as readonly string[]).includes(value);

/** Every user's files for admins: filters, a page of rows, and one file's details. */
export function FilesTab() {
  const [filters, setFilters] = useState<AdminFileFilters>(DEFAULT_ADMIN_FILE_FILTERS);
  const [userText, setUserText] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const [ownerEmail, setOwnerEmail] = useState('');
  const files = useAdminFiles(filters);
  const closeDetails = useCallback(() => setSelected(null), []);

  useEffect(() => {
    const t = setTimeout(() => setFilters((f) => (f.user === userText ? f : { ...f, user: userText, page: 1 })), 300);
    return () => clearTimeout(t);
  }, [userText]);

  const update = (patch: Partial<AdminFileFilters>) => setFilters((f) => ({ ...f, page: 1, ...patch }));
  const onlyOwner = (file: AdminFileSummary) => {
    setOwnerEmail(file.userEmail);
    update({ userId: file.userId });
  };
  const types = files.data?.types ?? [];

  return (
    <div className="space-y-4">
      <div className="card grid gap-4 p-4 sm:grid-cols-2 lg:grid-cols-5" role="search" aria-label="File filters">
        <div>
          <label htmlFor="file-user-search" className="label">User email</label>
          <input id="file-user-search" type="search" className="input" placeholder="e.g. ada@example.org" value={userText} onChange={(e) => setUserText(e.target.value)} />
        </div>
        <div>
          <label htmlFor="file-status-filter" className="label">File status</label>
          <select id="file-status-filter" className="input" value={filters.status}
            onChange={(e) => { if (isStatus(e.target.value)) update({ status: e.target.value }); }}>
            {ADMIN_FILE_STATUSES.map((s) => <option key={s} value={s}>{STATUS_LABELS[s]}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="file-type-filter" className="label">File type</label>
          <select id="file-type-filter" className="input" value={filters.type} onChange={(e) => update({ type: e.target.value })}>
            <option value="">All types</option>
            {types.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="file-from" className="label">Uploaded from</label>
          <input id="file-from" type="date" className="input" value={filters.from} max={filters.to || undefined} onChange={(e) => update({ from: e.target.value })} />
        </div>
        <div>
          <label htmlFor="file-to" className="label">Uploaded until</label>
          <input id="file-to" type="date" className="input" value={filters.to} min={filters.from || undefined} onChange={(e) => update({ to: e.target.value })} />
        </div>
        {filters.userId && (
          <p className="flex flex-wrap items-center gap-2 text-sm text-slate-700 sm:col-span-2 lg:col-span-5">
            <span>Only the files of <strong>{ownerEmail}</strong></span>
            <button type="button" className="btn-ghost px-2 py-1" onClick={() => update({ userId: '' })}>Show every user</button>
          </p>
        )}
      </div>

      <section className="card overflow-hidden" aria-label="Files" aria-busy={files.isFetching}>
        {files.isPending ? <PageSpinner label="Loading files" /> : files.isError ? (
          <div className="p-6">
            <Alert tone="error" title="Failed to load files">{messageOf(files.error, '')}</Alert>
            <button type="button" className="btn-primary mt-4" onClick={() => void files.refetch()}>Retry</button>
          </div>
        ) : files.data.files.length === 0 ? (
          <p className="px-6 py-12 text-center text-slate-600" data-testid="admin-files-empty">No files match these filters.</p>
        ) : (
          <DataTable rows={files.data.files} rowKey={(f) => f.id} label="Files table" cardsLabel="Files"
            rowProps={(f) => ({ 'data-testid': `admin-file-row-${f.id}` })}
            cardClassName="space-y-2 px-4 py-4" cardProps={(f) => ({ 'data-testid': `admin-file-card-${f.id}` })}
            card={(f) => (
              <>
                <div className="flex items-start justify-between gap-3">
                  <p className="min-w-0 break-words font-medium text-slate-900">{f.originalName}</p>
                  <StatusBadge status={f.status} />
                </div>
                <button type="button" className="max-w-full truncate text-left text-sm text-brand-700 hover:underline"
                  onClick={() => onlyOwner(f)} aria-label={`Show only the files of ${f.userEmail}`}>{f.userEmail}</button>
                <p className="text-xs text-slate-600">
                  {[f.detectedType ?? '—', formatBytes(f.originalSize), formatDateTime(f.createdAt)].join(' · ')}
                </p>
                <button type="button" className="btn-secondary w-full py-2" onClick={() => setSelected(f.id)}
                  aria-label={`Details of ${f.originalName}`}>Details</button>
              </>
            )}
            columns={[
              { key: 'user', header: 'User', className: 'max-w-[12rem]', cell: (f) => (
                <button type="button" className="max-w-full truncate text-left text-brand-700 hover:underline"
                  onClick={() => onlyOwner(f)} aria-label={`Show only the files of ${f.userEmail}`}>{f.userEmail}</button>
              ) },
              { key: 'name', header: 'File name', cellClassName: 'max-w-[14rem] truncate font-medium text-slate-900', title: (f) => f.originalName, cell: (f) => f.originalName },
              { key: 'status', header: 'Status', cell: (f) => <StatusBadge status={f.status} /> },
              { key: 'type', header: 'Type', className: 'hidden sm:table-cell', cellClassName: 'text-slate-700', cell: (f) => f.detectedType ?? '—' },
              { key: 'size', header: 'Size', className: 'hidden md:table-cell', cellClassName: 'whitespace-nowrap text-slate-700', cell: (f) => formatBytes(f.originalSize) },
              { key: 'created', header: 'Created', className: 'hidden lg:table-cell', cellClassName: 'whitespace-nowrap text-slate-600', cell: (f) => formatDateTime(f.createdAt) },
              { key: 'actions', header: 'Actions', className: 'text-right', cellClassName: 'whitespace-nowrap', cell: (f) => (
                <button type="button" className="btn-secondary px-3 py-1.5" onClick={() => setSelected(f.id)}
                  aria-label={`Details of ${f.originalName}`}>Details</button>
              ) },
            ]} />
        )}
        <Pager pagination={files.data?.pagination} label="File pages" noun="files" onStep={(step) => setFilters((f) => ({ ...f, page: f.page + step }))} />
      </section>
      {selected && <FileDetails id={selected} onClose={closeDetails} />}
    </div>
  );
}

/** One file's details in a side panel: owner, status, error, job, findings report, actions. */
function FileDetails({ id, onClose }: { id: string; onClose: () => void }) {
  const detail = useAdminFile(id);
  const remove = useDeleteAdminFile();
  const requeue = useRequeueAdminFile();
  const [confirming, setConfirming] = useState(false);
  const file = detail.data?.file;
  const job = detail.data?.job;
  const busy = remove.isPending || requeue.isPending;

  const onDelete = async () => {
    try {
      await remove.mutateAsync(id);
      toast.success('File deleted successfully');
      onClose();
    } catch (error) {
      toast.error(messageOf(error, 'Failed to delete file'));
    }
  };
  const onRequeue = async () => {
    try {
      await requeue.mutateAsync(id);
      toast.success('File queued for processing again');
    } catch (error) {
      toast.error(messageOf(error, 'Failed to queue the file again'));
    }
  };

  return (
    <SidePanel title={file ? file.originalName : 'File details'} onClose={onClose} width="max-w-2xl">
          {detail.isPending ? <div className="flex justify-center py-10 text-brand-700"><Spinner label="Loading file details" className="h-8 w-8" /></div>
            : detail.isError ? <Alert tone="error" title="Failed to load the file">{messageOf(detail.error, '')}</Alert>
            : file && (
            <>
              <dl className="divide-y divide-slate-100">
                <DetailRow label="Owner">{file.userEmail}</DetailRow>
                <DetailRow label="Status"><StatusBadge status={file.status} /></DetailRow>
                <DetailRow label="Type">{file.detectedType ?? '—'}</DetailRow>
                <DetailRow label="Size">{formatBytes(file.originalSize)}{file.sanitizedSize !== null && file.sanitizedSize !== undefined ? ` → ${formatBytes(file.sanitizedSize)}` : ''}</DetailRow>
                {file.policy ? (
                  <DetailRow label="Policy"><span data-testid="admin-file-policy">{file.policy.name}</span> <span className="text-slate-500">(version {file.policy.version})</span></DetailRow>
                ) : <DetailRow label="Mode">{file.mode ?? '—'}</DetailRow>}
                <DetailRow label="SHA-256 (original)"><HashValue value={file.sha256Original} label="original" /></DetailRow>
                <DetailRow label="SHA-256 (sanitized)"><HashValue value={file.sha256Sanitized} label="sanitized" /></DetailRow>
                <DetailRow label="Uploaded">{formatDateTime(file.createdAt)}</DetailRow>
                <DetailRow label="Expires">{file.isExpired ? 'Expired' : formatDateTime(file.expiresAt)}</DetailRow>
                {job && <DetailRow label="Job">{job.state}, attempt {job.attempts}</DetailRow>}
                {file.errorMessage && <DetailRow label="Error"><span className="text-red-700">{file.errorMessage}</span></DetailRow>}
                {file.errorCode && <DetailRow label="Error code"><code className="text-xs text-slate-700">{file.errorCode}</code></DetailRow>}
              </dl>
              {file.report ? <FindingsReport report={file.report} />
                : <p className="rounded-lg bg-slate-50 px-4 py-3 text-sm text-slate-600" data-testid="no-report">No findings report: the file has not been sanitized.</p>}
              <div className="flex flex-wrap gap-2 border-t border-slate-200 pt-4">
                {file.status === 'FAILED' && !file.isExpired && (
                  <button type="button" className="btn-primary" disabled={busy} onClick={onRequeue}>Re-queue</button>
                )}
                {!confirming && (
                  <button type="button" className="btn-secondary text-red-700" disabled={busy || file.status === 'PROCESSING'}
                    onClick={() => setConfirming(true)}>Delete</button>
                )}
              </div>
              {confirming && (
                <InlineConfirm label={`Confirm deleting ${file.originalName}`}>
                  <p className="text-sm text-red-900">
                    Delete {file.originalName} of {file.userEmail}, with its original and sanitized copies? This cannot be undone.
                  </p>
                  <div className="mt-3 flex gap-2">
                    <button type="button" className="btn-primary bg-red-700 hover:bg-red-800" disabled={busy} onClick={onDelete}>Delete file</button>
                    <button type="button" className="btn-secondary" disabled={busy} onClick={() => setConfirming(false)}>Cancel</button>
                  </div>
                </InlineConfirm>
              )}
            </>
          )}
    </SidePanel>
  );
}
