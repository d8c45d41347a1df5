import type { ReactNode } from 'react';
import { clampPercent } from '../lib/format';
import type { FileStatus } from '../lib/types';

export function Spinner({ label = 'Loading', className = 'h-5 w-5' }: { label?: string; className?: string }) {
  return (
    <span role="status" aria-label={label} className="inline-flex">
      <svg className={`animate-spin text-current ${className}`} viewBox="0 0 24 24" fill="none" aria-hidden="true">
        <circle className="opacity-25" cx="12" cy="12" r="10" stroke="currentColor" strokeWidth="4" />
        <path className="opacity-75" fill="currentColor" d="M4 12a8 8 0 018-8v4a4 4 0 00-4 4H4z" />
      </svg>
    </span>
  );
}

/** A box that scrolls sideways when its content (a wide table) does not fit: a named region
 * that takes keyboard focus, so it can be scrolled without a mouse (WCAG 2.1.1). */
export function ScrollArea({ label, className = '', children }: { label: string; className?: string; children: ReactNode }) {
  return (
    // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex -- a scrollable region must be reachable by keyboard
    <div role="region" aria-label={label} tabIndex={0} className={`overflow-x-auto ${className}`}>{children}</div>
  );
}

export function PageSpinner({ label = 'Loading' }: { label?: string }) {
  return (
    <div className="flex min-h-[40vh] items-center justify-center text-brand-700">
      <Spinner label={label} className="h-10 w-10" />
    </div>
  );
}

export function PageHeader({ title, subtitle, actions }: { title: string; subtitle?: ReactNode; actions?: ReactNode }) {
  return (
    <div className="mb-8 flex flex-col gap-4 sm:flex-row sm:items-end sm:justify-between">
      <div>
        <h1 className="text-2xl font-bold tracking-tight text-slate-900 sm:text-3xl">{title}</h1>
        {subtitle && <p className="mt-1 text-slate-600">{subtitle}</p>}
      </div>
      {actions && <div className="flex flex-wrap gap-2">{actions}</div>}
    </div>
  );
}

/** One style per file status of the API (a status the API adds fails the type check until it has one). */
const STATUS_STYLES: Record<FileStatus, string> = {
  PENDING: 'bg-yellow-100 text-yellow-800 ring-yellow-600/20',
  PROCESSING: 'bg-blue-100 text-blue-800 ring-blue-600/20',
  COMPLETED: 'bg-green-100 text-green-800 ring-green-600/20',
  FAILED: 'bg-red-100 text-red-800 ring-red-600/20',
};

/** PENDING yellow, PROCESSING blue, COMPLETED green, FAILED red (docs/product-rules.md, File statuses). */
export function StatusBadge({ status }: { status: string }) {
  const style = Object.hasOwn(STATUS_STYLES, status) ? STATUS_STYLES[status as FileStatus] : 'bg-slate-100 text-slate-700 ring-slate-500/20';
  return (
    <span data-testid="status-badge" data-status={status}
      className={`inline-flex items-center rounded-full px-2.5 py-0.5 text-xs font-semibold ring-1 ring-inset ${style}`}>
      {status}
    </span>
  );
}

export function ProgressBar({ value, label, tone = 'brand' }: { value: number; label: string; tone?: 'brand' | 'yellow' | 'red' }) {
  const pct = clampPercent(value);
  const color = tone === 'red' ? 'bg-red-500' : tone === 'yellow' ? 'bg-yellow-500' : 'bg-brand-600';
  return (
    <div role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(pct)}
      className="h-2.5 w-full overflow-hidden rounded-full bg-slate-200">
      <div className={`h-full rounded-full transition-all duration-500 ${color}`} style={{ width: `${pct}%` }} />
    </div>
  );
}

/** A message box; `page` makes its title the page's heading (h1) for screens that are only this message. */
export function Alert({ tone = 'info', title, page = false, children }: { tone?: 'info' | 'success' | 'warning' | 'error'; title?: string; page?: boolean; children?: ReactNode }) {
  const styles = {
    info: 'border-blue-200 bg-blue-50 text-blue-900',
    success: 'border-green-200 bg-green-50 text-green-900',
    warning: 'border-yellow-200 bg-yellow-50 text-yellow-900',
    error: 'border-red-200 bg-red-50 text-red-900',
  }[tone];
  return (
    <div role={tone === 'error' ? 'alert' : 'status'} className={`rounded-xl border p-4 text-sm ${styles}`}>
      {title && (page ? <h1 className="font-semibold">{title}</h1> : <p className="font-semibold">{title}</p>)}
      {children && <div className={title ? 'mt-1' : ''}>{children}</div>}
    </div>
  );
}

export function StatTile({ label, value, tone = 'slate' }: { label: string; value: ReactNode; tone?: string }) {
  const tones: Record<string, string> = {
    slate: 'text-slate-900', green: 'text-green-700', blue: 'text-blue-700', yellow: 'text-yellow-700', red: 'text-red-700',
  };
  return (
    <div className="card p-4">
      <p className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</p>
      <p className={`mt-1 text-2xl font-bold ${tones[tone] ?? tones.slate}`}>{value}</p>
    </div>
  );
}

export function DetailRow({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="flex flex-col gap-0.5 py-3 sm:flex-row sm:gap-4">
      <dt className="text-sm font-medium text-slate-500 sm:w-48 sm:shrink-0">{label}</dt>
      <dd className="min-w-0 break-words text-sm text-slate-900">{children}</dd>
    </div>
  );
}

export function ShieldIcon({ className = 'h-6 w-6' }: { className?: string }) {
  return (
    <svg className={className} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2" aria-hidden="true">
      <path d="M12 3l7 3v5c0 4.5-3 8.4-7 10-4-1.6-7-5.5-7-10V6l7-3z" strokeLinejoin="round" />
      <path d="M9 12l2 2 4-4" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
