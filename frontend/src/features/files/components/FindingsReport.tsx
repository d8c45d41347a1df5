import { DataTable } from '../../../components/DataTable';
import type { FileReport } from '../../../lib/types';

const ACTION_STYLES: Record<string, string> = {
  removed: 'bg-red-50 text-red-700 ring-red-600/20',
  blocked: 'bg-red-100 text-red-800 ring-red-600/30',
  converted: 'bg-blue-50 text-blue-700 ring-blue-600/20',
  kept: 'bg-slate-100 text-slate-700 ring-slate-500/20',
};

const KIND_LABELS: Record<string, string> = {
  macro: 'Macro', gps_location: 'GPS location', macro_enabled_type: 'Macro-enabled file type', javascript: 'JavaScript', exif: 'EXIF metadata', gps: 'GPS location', metadata: 'Metadata',
  external_relationship: 'External reference', embedded_object: 'Embedded object', embedded_file: 'Embedded file',
  ole_object: 'OLE object', activex: 'ActiveX control', link: 'Link', form: 'Form', annotation: 'Annotation',
};

export function kindLabel(kind: string): string {
  return KIND_LABELS[kind] ?? kind.replace(/[_-]+/g, ' ').replace(/^\w/, (c) => c.toUpperCase());
}

export function FindingsReport({ report }: { report: FileReport | null | undefined }) {
  const findings = report?.findings ?? [];
  const removed = findings.filter((f) => f.action === 'removed' || f.action === 'blocked').length;
  return (
    <section className="card overflow-hidden" aria-labelledby="report-heading" data-testid="findings-report">
      <div className="flex flex-wrap items-center justify-between gap-2 border-b border-slate-200 px-5 py-4">
        <h2 id="report-heading" className="font-semibold text-slate-900">Sanitization report</h2>
        <p className="text-sm text-slate-500">
          {findings.length === 0 ? 'Nothing risky was found' : `${findings.length} finding(s), ${removed} removed`}
        </p>
      </div>
      {findings.length === 0 ? (
        <p className="px-5 py-6 text-sm text-slate-600">The file was rebuilt and no active content or metadata needed removing.</p>
      ) : (
        <DataTable rows={findings} rowKey={(f, i) => `${f.kind}-${f.location}-${i}`} label="Findings table" cardsLabel="Findings"
          from="sm" padding="px-5" cardClassName="px-5 py-3 text-sm"
          card={(f) => (
            <>
              <div className="flex items-center justify-between gap-3">
                <span className="font-medium text-slate-900">{kindLabel(f.kind)}</span>
                <ActionBadge action={f.action} />
              </div>
              {f.location && <p className="mt-1 font-mono text-xs text-slate-500 [overflow-wrap:anywhere]">{f.location}</p>}
              {f.detail && <p className="mt-1 text-slate-600">{f.detail}</p>}
            </>
          )}
          columns={[
            { key: 'what', header: 'What', cellClassName: 'whitespace-nowrap font-medium text-slate-900', cell: (f) => kindLabel(f.kind) },
            { key: 'where', header: 'Where', cellClassName: 'min-w-[9rem] font-mono text-xs text-slate-600 [overflow-wrap:anywhere]', cell: (f) => f.location || '—' },
            { key: 'action', header: 'Action', cell: (f) => <ActionBadge action={f.action} /> },
            { key: 'detail', header: 'Detail', cellClassName: 'text-slate-600', cell: (f) => f.detail || '—' },
          ]} />
      )}
    </section>
  );
}

function ActionBadge({ action }: { action: string }) {
  return <span className={`inline-flex rounded-full px-2 py-0.5 text-xs font-semibold capitalize ring-1 ring-inset ${ACTION_STYLES[action] ?? ACTION_STYLES.kept}`}>{action}</span>;
}
