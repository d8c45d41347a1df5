import { useEffect, useRef } from 'react';
import { Link, Navigate, useNavigate, useParams } from 'react-router-dom';
import { toast } from 'react-toastify';
import { Container } from '../../../components/Layout';
import { Alert, DetailRow, PageHeader, PageSpinner, ProgressBar, Spinner, StatusBadge } from '../../../components/ui';
import { VerdictSummary } from '../../../components/Verdict';
import { ApiError, messageOf } from '../../../lib/api-client';
import { formatBytes, formatDateTime } from '../../../lib/format';
import { jobPercent, useDownloadFile, useFileStatus } from '../api';
import { FilePreview } from './FilePreview';
import { FindingsReport } from './FindingsReport';
import { HashValue } from './HashValue';

export default function StatusPage() {
  const { fileId } = useParams();
  const navigate = useNavigate();
  const status = useFileStatus(fileId);
  const download = useDownloadFile();
  const handled = useRef(false);

  // The page opens at its top (not at the scroll position of the page that linked here).
  useEffect(() => {
    window.scrollTo?.(0, 0);
  }, [fileId]);

  useEffect(() => {
    if (status.isError && !handled.current) {
      handled.current = true;
      if (status.error instanceof ApiError && status.error.status === 401) return; // forced sign-out handles it
      toast.error('Failed to load file status');
      void navigate('/', { replace: true });
    }
  }, [status.isError, status.error, navigate]);

  if (!fileId) return <Navigate to="/" replace />;
  if (status.isPending) return <PageSpinner label="Loading file status" />;
  if (status.isError) return null;
  const data = status.data;
  if (!data?.file) {
    return <Container narrow><Alert tone="warning" title="File not found" /></Container>;
  }
  const { file, job } = data;
  const active = file.status === 'PENDING' || file.status === 'PROCESSING';
  const percent = file.status === 'COMPLETED' ? 100 : jobPercent(job?.progress);
  // The job has not been claimed by a worker yet: it waits in the queue, behind `ahead` jobs,
  // or for an administrator to resume the queue.
  const waiting = active && (!job || job.state === 'waiting');
  const waitingText = data.queuePaused ? 'Paused by the administrator'
    : job?.ahead != null ? `Waiting in queue (${job.ahead} ahead)` : 'Waiting in queue';
  const outcome = file.status === 'COMPLETED' ? (file.verdictSummary
    ? `Processing finished: ${file.verdictSummary}. The sanitized file is ready to download.`
    : 'Processing finished: the sanitized file is ready to download.')
    : file.status === 'FAILED' ? `Processing failed${file.errorMessage ? `: ${file.errorMessage}` : '.'}` : '';
  const downloadable = file.status === 'COMPLETED' && !file.isExpired;

  return (
    <Container narrow>
      <PageHeader title="File Status" subtitle={<span className="break-all">{file.originalName}</span>} actions={<StatusBadge status={file.status} />} />
      {/* Present from the first answer on, so the change to finished or failed is read out. */}
      <p className="sr-only" aria-live="polite" data-testid="status-announcement">{outcome}</p>
      <div className="space-y-6">
        {job && (
          <div className="card p-5">
            <div className="mb-2 flex items-center justify-between text-sm">
              <span className="font-medium text-slate-700" data-testid="progress-state">
                {waiting ? waitingText : active ? 'Processing…' : file.status === 'COMPLETED' ? 'Done' : 'Stopped'}
              </span>
              {!waiting && <span className="font-semibold text-slate-900" data-testid="progress-percent">{percent}%</span>}
            </div>
            <ProgressBar value={percent} label="Processing progress" tone={file.status === 'FAILED' ? 'red' : 'brand'} />
            {active && <p className="mt-3 text-xs text-slate-600">This page refreshes every 3 seconds until the file is ready.</p>}
          </div>
        )}
        {file.status === 'FAILED' && file.errorMessage && <Alert tone="error" title="Processing failed">{file.errorMessage}</Alert>}
        <VerdictSummary file={file} />
        {downloadable && <FilePreview fileId={file.id} name={file.sanitizedName ?? file.originalName} />}

        <section className="card px-5" aria-label="File details">
          <dl className="divide-y divide-slate-100">
            <DetailRow label="Status"><StatusBadge status={file.status} /></DetailRow>
            <DetailRow label="Original file">{file.originalName} <span className="text-slate-500">({formatBytes(file.originalSize)})</span></DetailRow>
            <DetailRow label="Sanitized file">{file.sanitizedName ? <>{file.sanitizedName} <span className="text-slate-500">({formatBytes(file.sanitizedSize)})</span></> : '—'}</DetailRow>
            {file.policy ? (
              <DetailRow label="Policy"><span data-testid="file-policy">{file.policy.name}</span> <span className="text-slate-500">(version {file.policy.version})</span></DetailRow>
            ) : file.mode && <DetailRow label="Mode"><span className="capitalize">{file.mode}</span></DetailRow>}
            <DetailRow label="SHA-256 (original)"><HashValue value={file.sha256Original} label="original" /></DetailRow>
            <DetailRow label="SHA-256 (sanitized)"><HashValue value={file.sha256Sanitized} label="sanitized" /></DetailRow>
            <DetailRow label="Uploaded">{formatDateTime(file.createdAt)}</DetailRow>
            <DetailRow label="Processing started">{formatDateTime(file.processingStartedAt)}</DetailRow>
            <DetailRow label="Processing completed">{formatDateTime(file.processingCompletedAt)}</DetailRow>
            <DetailRow label="Processing duration">{file.processingDuration != null ? `${Number(file.processingDuration).toFixed(1)} seconds` : '—'}</DetailRow>
            {file.errorMessage && <DetailRow label="Error"><span className="text-red-700">{file.errorMessage}</span></DetailRow>}
            {file.errorCode && <DetailRow label="Error code"><code className="text-xs text-slate-700">{file.errorCode}</code></DetailRow>}
            <DetailRow label="Expires">{formatDateTime(file.expiresAt)}{file.isExpired && <span className="ml-2 text-red-600">(expired)</span>}</DetailRow>
          </dl>
        </section>

        {file.status === 'COMPLETED' && <FindingsReport report={file.report} />}

        <div className="flex flex-col gap-3 sm:flex-row">
          {downloadable && (
            <button type="button" className="btn-primary" disabled={download.isPending} onClick={() => download.mutate(file, {
              onSuccess: () => toast.success('Download started'),
              onError: (error) => toast.error(messageOf(error, 'Download failed')),
            })}>
              {download.isPending && <Spinner label="Downloading" className="h-4 w-4" />}Download Sanitized File
            </button>
          )}
          {downloadable && <Link to={`/download/${file.id}`} className="btn-secondary">Download</Link>}
          <Link to="/upload" className="btn-secondary">Upload Another File</Link>
          <Link to="/" className="btn-ghost">Go Home</Link>
        </div>
      </div>
    </Container>
  );
}
