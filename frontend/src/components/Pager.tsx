import type { Pagination } from '../lib/types';

export interface PagerProps {
  /** The list answer's pagination; nothing shows while it is unknown or there is one page. */
  pagination: Pagination | undefined;
  /** The navigation landmark's name, e.g. "File pages". */
  label: string;
  /** What the list counts ("files", "users"): shown with the total after the page; without it
   * only the page shows. */
  noun?: string;
  /** Go one page back (-1) or on (+1) from the page the screen asked for. */
  onStep: (step: -1 | 1) => void;
  /** Inside a card, under its list: a rule and padding above the buttons. */
  inCard?: boolean;
}

/** "Page n of m" with Previous and Next buttons under a paged list. */
export function Pager({ pagination: p, label, noun, onStep, inCard = true }: PagerProps) {
  if (!p || p.pages <= 1) return null;
  return (
    <nav aria-label={label} className={`flex items-center justify-between text-sm${inCard ? ' border-t border-slate-200 px-4 py-3' : ''}`}>
      <p className="text-slate-600">Page {p.page} of {p.pages}{noun ? ` · ${p.total} ${noun}` : ''}</p>
      <div className="flex gap-2">
        <button type="button" className="btn-secondary px-3 py-1.5" disabled={!p.hasPrev} onClick={() => onStep(-1)}>Previous</button>
        <button type="button" className="btn-secondary px-3 py-1.5" disabled={!p.hasNext} onClick={() => onStep(1)}>Next</button>
      </div>
    </nav>
  );
}
