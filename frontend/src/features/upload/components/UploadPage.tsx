import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { Link } from 'react-router-dom';
import { useDropzone, type FileRejection } from 'react-dropzone';
import { useQueries, useQuery } from '@tanstack/react-query';
import { toast } from 'react-toastify';
import { Container } from '../../../components/Layout';
import { Alert, PageHeader, PageSpinner, Spinner, StatusBadge } from '../../../components/ui';
import { VerdictSummary } from '../../../components/Verdict';
import { messageOf } from '../../../lib/api-client';
import { formatBytes } from '../../../lib/format';
import type { Mode, UploadResultItem } from '../../../lib/types';
import { dropLimits, useUploadInfo } from '../../../lib/upload-info';
import { fileStatusQuery } from '../../../lib/file-status';
import { useCan } from '../../../lib/plans';
import { usablePolicies, usePolicies } from '../../policies/api';
import { useDownloadFile } from '../../files/api';
import { DownloadAllButton } from '../../files';
import { extensionValidator, useUploadFiles, type UploadOutcome } from '../api';
import { acceptedFamilies, refusalText, refusedReasons } from '../formats';

/** The server's codes for a refusal about the account rather than the file: the box links to
 * the dashboard's usage. */
const QUOTA_CODES = new Set(['quota_exceeded', 'storage_quota_exceeded']);

/** What the box under the drop zone says about the last drop: each reason once, with the files
 * it refused; `uploaded` files of the same drop got through (or are on their way). */
export interface DropRefusals {
  reasons: { reason: string; names: string[]; quota: boolean }[];
  uploaded: number;
}

/** Group the drop's refusals, the browser's (type, size, count) and the server's, by reason. */
export function groupRefusals(client: { name: string; reason: string }[], server: UploadOutcome[], uploaded: number): DropRefusals {
  const reasons: DropRefusals['reasons'] = [];
  const add = (name: string, reason: string, quota = false) => {
    const found = reasons.find((r) => r.reason === reason);
    if (found) found.names.push(name);
    else reasons.push({ reason, names: [name], quota });
  };
  for (const c of client) add(c.name, c.reason);
  for (const o of server) if (o.error) add(o.file.name, o.error, QUOTA_CODES.has(o.code ?? ''));
  return { reasons, uploaded };
}

/** One text per mode of the API (a mode the API adds fails the type check until it has one). */
const MODE_TEXT: Record<Mode, string> = {
  basic: 'Basic — rebuild in the same format, active content and metadata removed',
  advanced: 'Advanced — also rebuild documents from pixels as PDF, with a searchable text layer',
};

/** What each mode does to the file, in plain words (shown under the choice). */
const MODE_HELP: Record<Mode, string> = {
  basic: 'The file keeps its format, text and layout; macros, scripts, embedded files and metadata are removed.',
  advanced: 'PDF and office documents are rebuilt from pixels: every page becomes a picture, so nothing active can survive and the layout is kept as an image. '
    + 'So the text can still be searched, copied and read aloud, a page keeps its own text where every letter of it is visible in the picture; other pages with text (scans, hidden or covered text) are read again by OCR, which may contain errors. The report says which pages got which. '
    + 'Spreadsheets are not printed: they come back as a new .xlsx workbook holding only their cell values and number formats; formulas become their last calculated values, and charts, pictures, comments and styling are dropped. '
    + 'Rebuilt files are larger and take longer: about a tenth of a second of processing per page, and about a second per page OCR reads. Pictures stay pictures.',
};

function isMode(value: string): value is Mode {
  return value in MODE_HELP;
}

export default function UploadPage() {
  const info = useUploadInfo();
  const canAuthor = useCan('policyAuthoring');
  const upload = useUploadFiles();
  const [results, setResults] = useState<UploadResultItem[]>([]);
  const [refusals, setRefusals] = useState<DropRefusals | null>(null);
  const [mode, setMode] = useState('');
  const [password, setPassword] = useState('');
  const warned = useRef(false);
  const limits = useMemo(() => dropLimits(info.data), [info.data]);
  const refused = useMemo(() => refusedReasons(info.data), [info.data]);
  const families = useMemo(() => acceptedFamilies(limits.extensions), [limits.extensions]);
  const modes = useMemo(() => info.data?.modes ?? [], [info.data]);
  const policies = usePolicies(info.isSuccess);
  const usable = useMemo(() => usablePolicies(policies.data, modes), [policies.data, modes]);
  // The picker replaces the mode choice once there is a policy beyond the two built-ins (the
  // organisation's or the user's own); otherwise the mode choice stays as it was.
  const picker = usable.some((p) => !p.builtIn);
  const [policyId, setPolicyId] = useState('');
  const ready = info.isSuccess && !policies.isPending;
  // The same queries as the rows' (one cache entry per file): which files are ready now.
  const statuses = useQueries({ queries: results.map((r) => fileStatusQuery(r.fileId, { fallbackStatus: r.status })) });
  const readyIds = results.filter((_, i) => {
    const file = statuses[i]?.data?.file;
    return file?.status === 'COMPLETED' && !file.isExpired;
  }).map((r) => r.fileId);

  useEffect(() => {
    if (info.isError && !warned.current) {
      warned.current = true;
      toast.error('Failed to load upload configuration. Please refresh the page and try again.');
    }
  }, [info.isError]);

  useEffect(() => {
    if (modes.length && !mode) setMode(modes[0]);
  }, [modes, mode]);

  useEffect(() => {
    if (!picker || policyId) return;
    const preferred = info.data?.defaultPolicyId;
    setPolicyId(usable.some((p) => p.id === preferred) && preferred ? preferred : usable[0].id);
  }, [picker, policyId, usable, info.data?.defaultPolicyId]);

  const onDrop = useCallback(async (accepted: File[], rejected: FileRejection[]) => {
    // The browser's refusals show at once in the box under the drop zone; the server's join
    // them when the uploads have answered.
    const client = rejected.map((r) => ({ name: r.file.name, reason: refusalText(r, limits, refused) }));
    setRefusals(client.length ? groupRefusals(client, [], accepted.length) : null);
    if (!accepted.length) return;
    try {
      const outcomes = await upload.mutateAsync({
        files: accepted, mode: modes.length ? mode : undefined, password: password || undefined,
        policyId: picker ? policyId : undefined,
      });
      const uploaded = outcomes.flatMap((o) => o.items);
      for (const o of outcomes) if (o.error) toast.error(`Failed to upload ${o.file.name}: ${o.error}`);
      if (outcomes.some((o) => o.error) || client.length) setRefusals(groupRefusals(client, outcomes, uploaded.length));
      if (uploaded.length) {
        setResults((prev) => [...uploaded, ...prev]);
        toast.success(`Successfully uploaded ${uploaded.length} file(s). Files are being processed. You can check their status below.`);
      }
    } catch {
      toast.error('Upload failed. Please try again later.');
      setRefusals(groupRefusals(client, accepted.map((file) => ({ file, items: [], error: 'Upload failed. Please try again later.' })), 0));
    }
  }, [upload, mode, modes.length, password, picker, policyId, limits, refused]);

  const { getRootProps, getInputProps, isDragActive, isDragReject } = useDropzone({
    onDrop: (accepted, rejected) => void onDrop(accepted, rejected),
    maxFiles: limits.maxFiles,
    maxSize: limits.maxSize,
    validator: extensionValidator(limits.extensions, refused),
    disabled: !ready || upload.isPending,
    multiple: limits.maxFiles > 1,
  });

  // Red only while files are dragged over and none of them would be taken (react-dropzone
  // keeps isDragReject after a drop with any refusal, even when others were accepted).
  const dragRefused = isDragActive && isDragReject;

  // The policies are part of the configuration: nothing is accepted before both are known.
  if (info.isPending || (info.isSuccess && policies.isPending)) return <PageSpinner label="Loading upload configuration" />;

  return (
    <Container>
      <PageHeader title="Upload Files" subtitle="Drop documents or images here. Each file is sanitized in its own isolated sandbox." />
      <div className="grid gap-8 lg:grid-cols-3">
        <div className="space-y-6 lg:col-span-2">
          {info.isError && <Alert tone="error" title="Upload is unavailable">Failed to load upload configuration. Please refresh the page and try again.</Alert>}
          {ready && picker && (
            <div className="card p-5">
              <label htmlFor="policy" className="label">Sanitization policy</label>
              <select id="policy" className="input" value={policyId} onChange={(e) => setPolicyId(e.target.value)} disabled={upload.isPending}
                aria-describedby="policy-help">
                {usable.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}{p.builtIn ? ' (built-in)' : p.scope === 'organisation' ? ' (organisation)' : ''}{p.id === info.data?.defaultPolicyId ? ' — default' : ''}
                  </option>
                ))}
              </select>
              <p id="policy-help" className="mt-2 text-sm text-slate-500">
                {usable.find((p) => p.id === policyId)?.description || 'Decides what is removed, kept or refused in each file of this upload.'}
                {canAuthor && <> <Link to="/policies" className="link">Manage policies</Link></>}
              </p>
            </div>
          )}
          {ready && !picker && modes.length > 1 && (
            <div className="card p-5">
              <label htmlFor="mode" className="label">Sanitization mode</label>
              <select id="mode" className="input" value={mode} onChange={(e) => setMode(e.target.value)} disabled={upload.isPending}
                aria-describedby="mode-help">
                {modes.map((m) => <option key={m} value={m}>{MODE_TEXT[m]}</option>)}
              </select>
              {isMode(mode) && <p id="mode-help" className="mt-2 text-sm text-slate-500">{MODE_HELP[mode]}</p>}
            </div>
          )}
          {ready && (
            <div className="card p-5">
              <label htmlFor="file-password" className="label">Password (for encrypted files)</label>
              <input id="file-password" name="file-password" type="password" autoComplete="off" className="input"
                maxLength={1024} value={password} onChange={(e) => setPassword(e.target.value)}
                disabled={upload.isPending} aria-describedby="file-password-help" />
              <p id="file-password-help" className="mt-2 text-sm text-slate-500">
                Optional. Opens password-protected PDF, Word, Excel, PowerPoint and ZIP files of this upload.
                It is used only to process them and is not kept; the sanitized copies are not encrypted.
              </p>
            </div>
          )}
          <div {...getRootProps({
            'aria-label': 'File drop zone: press Enter to choose files, or drag files here',
            'aria-disabled': !ready || upload.isPending,
            className: `card flex min-h-64 cursor-pointer flex-col items-center justify-center border-2 border-dashed p-8 text-center transition-colors ${
              !ready || upload.isPending ? 'cursor-not-allowed border-slate-200 bg-slate-50'
                : dragRefused ? 'border-red-400 bg-red-50'
                  : isDragActive ? 'border-brand-600 bg-brand-50' : 'border-slate-300 hover:border-brand-600 hover:bg-brand-50/40'}`,
          })} data-testid="dropzone" data-refused={dragRefused || undefined}>
            <input {...getInputProps({ accept: limits.extensions.join(',') || undefined, disabled: !ready || upload.isPending, 'aria-label': 'Choose files to upload' })} data-testid="file-input" />
            {upload.isPending ? (
              <>
                <Spinner label="Uploading" className="h-10 w-10 text-brand-700" />
                <p className="mt-4 font-semibold text-slate-900">Uploading…</p>
              </>
            ) : (
              <>
                <span className="flex h-14 w-14 items-center justify-center rounded-2xl bg-brand-50 text-brand-700">
                  <svg className="h-8 w-8" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true"><path d="M12 16V4m0 0l-4 4m4-4l4 4M4 16v2a2 2 0 002 2h12a2 2 0 002-2v-2" strokeLinecap="round" strokeLinejoin="round" /></svg>
                </span>
                <p className={`mt-4 text-base font-semibold ${dragRefused ? 'text-red-800' : 'text-slate-900'}`}>
                  {dragRefused ? `Too many files: up to ${limits.maxFiles} at once` : isDragActive ? 'Drop the files here' : 'Drag & drop files here, or click to select'}
                </p>
                <p className="mt-1 text-sm text-slate-600">
                  Up to {limits.maxFiles} files, {formatBytes(limits.maxSize)} each
                </p>
              </>
            )}
          </div>

          {refusals && refusals.reasons.length > 0 && <RefusalBox refusals={refusals} />}

          {results.length > 0 && (
            <section className="card overflow-hidden" aria-labelledby="uploaded-heading">
              <div className="flex flex-col gap-3 border-b border-slate-200 px-5 py-4 sm:flex-row sm:items-start sm:justify-between">
                <h2 id="uploaded-heading" className="font-semibold text-slate-900">Uploaded files</h2>
                {results.length > 1 && <DownloadAllButton fileIds={readyIds} />}
              </div>
              <ul className="divide-y divide-slate-100" data-testid="upload-results">
                {results.map((item) => <UploadRow key={item.fileId} item={item} />)}
              </ul>
            </section>
          )}
        </div>

        <aside className="space-y-6">
          <section className="card p-5" aria-labelledby="guidelines">
            <h2 id="guidelines" className="font-semibold text-slate-900">Upload guidelines</h2>
            <dl className="mt-4 space-y-3 text-sm">
              <div className="flex justify-between gap-4"><dt className="text-slate-500">Max file size</dt><dd className="font-medium text-slate-900">{info.data?.maxFileSizeMB ?? Math.round(limits.maxSize / 1048576)} MB</dd></div>
              <div className="flex justify-between gap-4"><dt className="text-slate-500">Max files per upload</dt><dd className="font-medium text-slate-900">{limits.maxFiles}</dd></div>
              <div>
                <dt className="text-slate-500">Supported formats</dt>
                <dd className="mt-2" data-testid="supported-families">
                  {families.length ? (
                    <>
                      <ul className="flex flex-wrap gap-1.5">
                        {families.map((f) => (
                          <li key={f.id} className="rounded-md bg-slate-100 px-2 py-0.5 text-xs font-medium text-slate-800">{capitalise(f.id === 'other' ? 'other formats' : f.label)}</li>
                        ))}
                      </ul>
                      <details className="mt-2 text-xs text-slate-600">
                        <summary className="cursor-pointer text-brand-700">All {limits.extensions.length} file extensions</summary>
                        <dl className="mt-2 space-y-1">
                          {families.map((f) => (
                            <div key={f.id}><dt className="inline font-medium text-slate-800">{capitalise(f.id === 'other' ? 'other formats' : f.label)}: </dt><dd className="inline font-mono">{f.extensions.join(' ')}</dd></div>
                          ))}
                        </dl>
                      </details>
                    </>
                  ) : <span className="text-slate-500">—</span>}
                </dd>
              </div>
            </dl>
          </section>
          <section className="card p-5" aria-labelledby="how-it-works">
            <h2 id="how-it-works" className="font-semibold text-slate-900">How it works</h2>
            <ol className="mt-4 space-y-4 text-sm">
              {[
                ['Upload', 'Drop your files. We check each file\'s real type by its content.'],
                ['Sanitize', 'An isolated sandbox removes macros, scripts, embedded objects and metadata.'],
                ['Download', 'Follow the status and download the clean copy with its report.'],
              ].map(([title, text], i) => (
                <li key={title} className="flex gap-3">
                  <span className="flex h-7 w-7 shrink-0 items-center justify-center rounded-full bg-brand-700 text-xs font-bold text-white">{i + 1}</span>
                  <div><p className="font-medium text-slate-900">{title}</p><p className="text-slate-600">{text}</p></div>
                </li>
              ))}
            </ol>
          </section>
        </aside>
      </div>
    </Container>
  );
}

/** One uploaded file; its badge follows the processing status (polled every 3 s while active). */
function UploadRow({ item }: { item: UploadResultItem }) {
  const status = useQuery(fileStatusQuery(item.fileId, { fallbackStatus: item.status }));
  const download = useDownloadFile();
  const file = status.data?.file;
  const current = file?.status ?? item.status;
  const downloadable = file?.status === 'COMPLETED' && !file.isExpired;
  return (
    <li className="flex flex-col gap-3 px-5 py-4 sm:flex-row sm:items-center sm:justify-between" data-testid="upload-row">
      <div className="min-w-0">
        <p className="truncate font-medium text-slate-900">{item.originalName}</p>
        <p className="mt-0.5 flex items-center gap-2 text-sm text-slate-500">{formatBytes(item.size)} <StatusBadge status={current} /></p>
        {file && <div className="mt-1"><VerdictSummary file={file} compact /></div>}
      </div>
      <div className="flex shrink-0 gap-2">
        {downloadable && (
          <button type="button" className="btn-primary" disabled={download.isPending} aria-label={`Download ${item.originalName}`}
            onClick={() => download.mutate(file, {
              onSuccess: () => toast.success('File download started'),
              onError: (error) => toast.error(messageOf(error, 'Failed to download file')),
            })}>
            {download.isPending && <Spinner label="Downloading" className="h-4 w-4" />}Download
          </button>
        )}
        <Link to={`/status/${item.fileId}`} className="btn-secondary">View Status</Link>
      </div>
    </li>
  );
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The last drop's refusals, each reason once with the files it refused. An alert when nothing
 * of the drop got through, a calmer status box when others were uploaded. */
function RefusalBox({ refusals }: { refusals: DropRefusals }) {
  const count = refusals.reasons.reduce((n, r) => n + r.names.length, 0);
  const title = refusals.uploaded > 0 ? 'Some files were not accepted'
    : count === 1 ? 'The file was not accepted' : 'No files were accepted';
  return (
    <div data-testid="upload-refusals">
      <Alert tone={refusals.uploaded > 0 ? 'warning' : 'error'} title={title}>
        <ul className="list-disc space-y-1 pl-5">
          {refusals.reasons.map((r) => (
            <li key={r.reason}>
              <span className="font-medium break-all">{r.names.join(', ')}</span>: {r.reason}
              {r.quota && <> <Link to="/dashboard" className="font-medium underline">See your usage on the dashboard</Link>.</>}
            </li>
          ))}
        </ul>
      </Alert>
    </div>
  );
}
