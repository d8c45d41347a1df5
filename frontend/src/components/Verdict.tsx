/** The one verdict on a finished file (docs/verdicts.md), shown the same way on every screen:
 * the status, download, upload, history and dashboard pages. The sentence is the server's
 * `verdictSummary`, shown as given; only `clean` is ever worded as an all-clear. */
import type { components } from '../lib/api-schema';

export type Verdict = components['schemas']['Verdict'];
export type VerdictCounts = components['schemas']['VerdictCounts'];

/** One label and style per verdict of the API (a verdict the API adds fails the type check until it has one). */
export const VERDICTS: Record<Verdict, { label: string; short: string; style: string; box: string }> = {
  clean: { label: 'Clean – nothing found', short: 'Clean', style: 'bg-green-100 text-green-800 ring-green-600/20', box: 'border-green-200 bg-green-50 text-green-900' },
  cleaned: { label: 'Cleaned', short: 'Cleaned', style: 'bg-blue-100 text-blue-800 ring-blue-600/20', box: 'border-blue-200 bg-blue-50 text-blue-900' },
  partial: { label: 'Partially cleaned – some content was dropped', short: 'Partial', style: 'bg-amber-100 text-amber-900 ring-amber-600/30', box: 'border-amber-300 bg-amber-50 text-amber-950' },
  encrypted: { label: 'Not inspected: encrypted', short: 'Encrypted', style: 'bg-purple-100 text-purple-800 ring-purple-600/20', box: 'border-purple-200 bg-purple-50 text-purple-950' },
  refused: { label: 'Refused', short: 'Refused', style: 'bg-red-100 text-red-800 ring-red-600/20', box: 'border-red-200 bg-red-50 text-red-900' },
};

/** The filter choices of the history page, in this order. */
export const VERDICT_VALUES = Object.keys(VERDICTS) as Verdict[];

export const TEXT_LAYER_DROPPED = "Text can't be selected or searched (pages rebuilt as images)";

export function isVerdict(value: unknown): value is Verdict {
  return typeof value === 'string' && Object.hasOwn(VERDICTS, value);
}

/** A small badge; nothing while the file is unfinished (no verdict yet). */
export function VerdictBadge({ verdict }: { verdict: Verdict | null | undefined }) {
  if (!isVerdict(verdict)) return null;
  const v = VERDICTS[verdict];
  return (
    <span data-testid="verdict-badge" data-verdict={verdict}
      className={`inline-flex items-center rounded-full px-2.5 py-0.5 text-xs font-semibold ring-1 ring-inset ${v.style}`}>
      {v.label}
    </span>
  );
}

interface VerdictFile {
  verdict?: Verdict | null;
  verdictSummary?: string | null;
  verdictCounts?: VerdictCounts | null;
}

/** The verdict as a box: its label (the page's all-clear only for `clean`), the server's
 * sentence, and for a partial result what was left out. `compact` is the one-line form of
 * lists (badge and sentence). */
export function VerdictSummary({ file, compact = false }: { file: VerdictFile; compact?: boolean }) {
  const { verdict, verdictSummary, verdictCounts } = file;
  if (!isVerdict(verdict)) return null;
  const dropped = verdictCounts?.droppedFiles ?? [];
  const textLost = !!verdictCounts?.textLayerDropped;
  if (compact) {
    return (
      <span className="flex min-w-0 flex-wrap items-center gap-2" data-testid="verdict-summary">
        <VerdictBadge verdict={verdict} />
        {verdictSummary && <span className="text-xs text-slate-600">{verdictSummary}</span>}
      </span>
    );
  }
  const v = VERDICTS[verdict];
  return (
    <div role="status" data-testid="verdict-summary" data-verdict={verdict}
      className={`rounded-xl border p-4 text-sm ${v.box}`}>
      <p className="font-semibold">{verdict === 'clean' ? 'Your file is clean' : v.label}</p>
      {verdictSummary && <p className="mt-1" data-testid="verdict-sentence">{verdictSummary}</p>}
      {verdict === 'partial' && (dropped.length > 0 || textLost) && (
        <ul className="mt-2 list-disc space-y-1 pl-5">
          {dropped.length > 0 && <li>Files left out: {dropped.map((name, i) => <span key={`${name}-${i}`}>{i > 0 && ', '}<span className="break-all font-medium">{name}</span></span>)}</li>}
          {textLost && <li>{TEXT_LAYER_DROPPED}</li>}
        </ul>
      )}
    </div>
  );
}
