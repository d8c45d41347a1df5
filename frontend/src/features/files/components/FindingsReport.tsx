import { ScrollArea } from '../../../components/ui';
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
        <>
        <ul className="divide-y divide-slate-100 sm:hidden">
          {findings.map((f, i) => (
            <li key={`${f.kind}-${f.location}-${i}`} className="px-5 py-3 text-sm">
              <div className="flex items-center justify-between gap-3">
                <span className="font-medium text-slate-900">{kindLabel(f.kind)}</span>
                <span className={`inline-flex rounded-full px-2 py-0.5 text-xs font-semibold capitalize ring-1 ring-inset ${ACTION_STYLES[f.action] ?? ACTION_STYLES.kept}`}>{f.action}</span>
              </div>
              {f.location && <p className="mt-1 font-mono text-xs text-slate-500 [overflow-wrap:anywhere]">{f.location}</p>}
              {f.detail && <p className="mt-1 text-slate-600">{f.detail}</p>}
            </li>
          ))}
        </ul>
        <ScrollArea label="Findings table" className="hidden sm:block">
          <table className="min-w-full divide-y divide-slate-200 text-sm">
            <thead className="bg-slate-50 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
              <tr><th scope="col" className="px-5 py-3">What</th><th scope="col" className="px-5 py-3">Where</th><th scope="col" className="px-5 py-3">Action</th><th scope="col" className="px-5 py-3">Detail</th></tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {findings.map((f, i) => (
                <tr key={`${f.kind}-${f.location}-${i}`}>
                  <td className="whitespace-nowrap px-5 py-3 font-medium text-slate-900">{kindLabel(f.kind)}</td>
                  <td className="min-w-[9rem] px-5 py-3 font-mono text-xs text-slate-600 [overflow-wrap:anywhere]">{f.location || '—'}</td>
                  <td className="px-5 py-3"><span className={`inline-flex rounded-full px-2 py-0.5 text-xs font-semibold capitalize ring-1 ring-inset ${ACTION_STYLES[f.action] ?? ACTION_STYLES.kept}`}>{f.action}</span></td>
                  <td className="px-5 py-3 text-slate-600">{f.detail || '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollArea>
        </>
      )}
    </section>
  );
}
