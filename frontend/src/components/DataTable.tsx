import type { HTMLAttributes, ReactNode } from 'react';
import { ScrollArea } from './ui';

/** One column of a DataTable: its heading and how a row fills its cell. */
export interface Column<T> {
  /** Unique within the table (React key). */
  key: string;
  /** The heading: text, or an element such as a select-all box. */
  header: ReactNode;
  /** The cell of one row. */
  cell: (row: T) => ReactNode;
  /** Classes of the heading and the cells after the padding, e.g. 'hidden lg:table-cell'. */
  className?: string;
  /** Classes of the cells only (not the heading). */
  cellClassName?: string;
  /** A hover title for the cell. */
  title?: (row: T) => string | undefined;
  /** The label of this value in the generic mobile card (defaults to the heading when it is text). */
  cardLabel?: string;
}

type Attributes = HTMLAttributes<HTMLElement> & Record<`data-${string}`, string | undefined>;

// Tailwind needs whole class names in the source: one entry per breakpoint.
const CARDS_HIDDEN = { sm: 'sm:hidden', md: 'md:hidden' } as const;
const TABLE_SHOWN = { sm: 'hidden sm:block', md: 'hidden md:block' } as const;

interface DataTableProps<T> {
  rows: readonly T[];
  rowKey: (row: T, index: number) => string;
  columns: readonly Column<T>[];
  /** The accessible name of the table's scroll region, e.g. "Files table". */
  label: string;
  /**
   * Narrow screens: 'cards' shows a list of cards below `from` and the table above it (the
   * cards come from `card`, or list every column's label and value); 'table' always shows the
   * table (a short one that fits a phone).
   */
  layout?: 'cards' | 'table';
  from?: keyof typeof CARDS_HIDDEN;
  card?: (row: T, index: number) => ReactNode;
  cardsLabel?: string;
  cardClassName?: string;
  cardProps?: (row: T) => Attributes;
  rowProps?: (row: T) => Attributes;
  bodyProps?: Attributes;
  /** Horizontal padding of headings and cells. */
  padding?: 'px-4' | 'px-5' | 'px-6';
}

/**
 * The one table of the web app: a heading row, one row per item, a keyboard-reachable scroll
 * region, and on narrow screens a card per item (so wide tables never need sideways scrolling
 * on a phone).
 */
export function DataTable<T>({
  rows, rowKey, columns, label, layout = 'cards', from = 'md', card, cardsLabel, cardClassName = 'px-4 py-4',
  cardProps, rowProps, bodyProps, padding = 'px-4',
}: DataTableProps<T>) {
  const table = (
    <table className="min-w-full divide-y divide-slate-200 text-sm">
      <thead className="bg-slate-50 text-left text-xs font-semibold uppercase tracking-wide text-slate-500">
        <tr>
          {columns.map((c) => <th key={c.key} scope="col" className={cx(padding, 'py-3', c.className)}>{c.header}</th>)}
        </tr>
      </thead>
      <tbody className="divide-y divide-slate-100" {...bodyProps}>
        {rows.map((row, i) => (
          <tr key={rowKey(row, i)} {...rowProps?.(row)}>
            {columns.map((c) => (
              <td key={c.key} className={cx(padding, 'py-3', c.className, c.cellClassName)} title={c.title?.(row)}>{c.cell(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
  if (layout === 'table') return <ScrollArea label={label}>{table}</ScrollArea>;
  return (
    <>
      <ul className={cx('divide-y divide-slate-100', CARDS_HIDDEN[from])} aria-label={cardsLabel ?? label}>
        {rows.map((row, i) => (
          <li key={rowKey(row, i)} className={cardClassName} {...cardProps?.(row)}>
            {card ? card(row, i) : <GenericCard row={row} columns={columns} />}
          </li>
        ))}
      </ul>
      <ScrollArea label={label} className={TABLE_SHOWN[from]}>{table}</ScrollArea>
    </>
  );
}

/** Every labelled column's label and value, one under the other; then the unlabelled ones
 * (actions), below the list (a definition list holds only terms and their values). */
function GenericCard<T>({ row, columns }: { row: T; columns: readonly Column<T>[] }) {
  const labelOf = (c: Column<T>) => c.cardLabel ?? (typeof c.header === 'string' ? c.header : '');
  const labelled = columns.filter((c) => labelOf(c) !== '');
  const others = columns.filter((c) => labelOf(c) === '');
  return (
    <>
      <dl className="grid grid-cols-[auto,1fr] gap-x-3 gap-y-1 text-sm">
        {labelled.map((c) => (
          <div key={c.key} className="contents">
            <dt className="text-xs font-semibold uppercase tracking-wide text-slate-500">{labelOf(c)}</dt>
            <dd className="min-w-0 break-words text-slate-700">{c.cell(row)}</dd>
          </div>
        ))}
      </dl>
      {others.map((c) => <div key={c.key} className="mt-2">{c.cell(row)}</div>)}
    </>
  );
}

function cx(...parts: (string | undefined | false)[]): string {
  return parts.filter(Boolean).join(' ');
}
