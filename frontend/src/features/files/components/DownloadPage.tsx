import { useEffect, useRef, useState } from 'react';
import { Link, Navigate, useNavigate, useParams } from 'react-router-dom';
import { toast } from 'react-toastify';
import { Container } from '../../../components/Layout';
import { Alert, DetailRow, PageHeader, PageSpinner, Spinner } from '../../../components/ui';
import { VerdictSummary } from '../../../components/Verdict';
import { ApiError } from '../../../lib/api-client';
import { formatDateTime, formatKB } from '../../../lib/format';
import type { FileReport } from '../../../lib/types';
import { downloadFile, useFileStatus } from '../api';
import { FindingsReport } from './FindingsReport';

export default function DownloadPage() {
  const { fileId } = useParams();
  const navigate = useNavigate();
  const status = useFileStatus(fileId, false);
  const [busy, setBusy] = useState(false);
  const handled = useRef(false);

  useEffect(() => {
    if (status.isError && !handled.current) {
      handled.current = true;
      if (status.error instanceof ApiError && status.error.status === 401) return;
      toast.error('Failed to load file information');
      void navigate('/', { replace: true });
    }
  }, [status.isError, status.error, navigate]);

  if (!fileId) return <Navigate to="/" replace />;
  if (status.isPending) return <PageSpinner label="Loading file information" />;
  if (status.isError) return null;
  const file = status.data?.file;

  if (!file || file.status !== 'COMPLETED' || file.isExpired) {
    return (
      <Container narrow>
        <div className="card p-8 text-center">
          <h1 className="text-2xl font-bold text-slate-900">File not ready</h1>
          <p className="mt-2 text-slate-600">
            {file?.isExpired ? 'This file has expired and was deleted.' : 'This file is not ready for download yet. Check its status to follow the processing.'}
          </p>
          <div className="mt-6 flex flex-col justify-center gap-3 sm:flex-row">
            <Link to={`/status/${fileId}`} className="btn-primary">Check Status</Link>
            <Link to="/" className="btn-secondary">Go Home</Link>
          </div>
        </div>
      </Container>
    );
  }

  const onDownload = async () => {
    setBusy(true);
    try {
      await downloadFile(file);
      toast.success('Download started');
      void status.refetch();
    } catch {
      toast.error('Download failed');
    } finally {
      setBusy(false);
    }
  };

  const report: FileReport | null | undefined = file.report;
  const findings = report?.findings ?? [];
  return (
    <Container narrow>
      <PageHeader title="Download" subtitle={<span className="break-all">{file.originalName}</span>} />
      <div className="space-y-6">
        {file.verdict === 'encrypted' && (file.verdictCounts?.encryptedPassed ?? 0) > 0
          ? <Alert tone="warning" title="Encrypted content delivered unchanged">No password opened it, so it was not inspected: whatever it holds reaches you as it came.</Alert>
          : file.verdict === 'encrypted'
          ? <Alert tone="warning" title="File sanitized, with encrypted content held back">The sanitized copy is ready; encrypted content no password opened was not inspected and is not in it.</Alert>
          : file.verdict === 'partial'
          ? <Alert tone="warning" title="File sanitized, with some content left out">The sanitized copy is ready; see below what it does not contain.</Alert>
          : <Alert tone="success" title="File sanitized successfully">The sanitized copy is ready to download.</Alert>}
        <VerdictSummary file={file} />
        <section className="card px-5" aria-label="File summary">
          <dl className="divide-y divide-slate-100">
            <DetailRow label="Original file">{file.originalName} <span className="text-slate-500">({formatKB(file.originalSize)})</span></DetailRow>
            <DetailRow label="Sanitized file">{file.sanitizedName ?? `sanitized_${file.originalName}`} <span className="text-slate-500">({formatKB(file.sanitizedSize)})</span></DetailRow>
            <DetailRow label="Processing summary">
              {file.verdictSummary ?? (findings.length ? `${findings.length} item(s) handled` : '—')}
              {file.processingDuration != null && ` in ${Number(file.processingDuration).toFixed(1)} seconds`}
              {file.mode && <> · <span className="capitalize">{file.mode}</span> mode</>}
            </DetailRow>
            <DetailRow label="Downloads"><span data-testid="download-count">{file.downloadCount ?? 0}</span></DetailRow>
            <DetailRow label="Completed">{formatDateTime(file.processingCompletedAt)}</DetailRow>
          </dl>
        </section>
        <button type="button" onClick={onDownload} disabled={busy} className="btn-primary w-full py-3 text-base">
          {busy ? <Spinner label="Downloading" className="h-4 w-4" /> : (
            <svg className="h-5 w-5" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true"><path d="M12 4v12m0 0l-4-4m4 4l4-4M4 20h16" strokeLinecap="round" strokeLinejoin="round" /></svg>
          )}
          Download Sanitized File
        </button>
        <Alert tone="warning" title="This file will be deleted">
          It expires on {formatDateTime(file.expiresAt)}, 24 hours after upload. Download it before then.
        </Alert>
        <FindingsReport report={file.report} />
        <div className="flex flex-col gap-3 sm:flex-row">
          <Link to="/upload" className="btn-secondary">Upload Another File</Link>
          <Link to="/history" className="btn-ghost">File History</Link>
        </div>
      </div>
    </Container>
  );
}
