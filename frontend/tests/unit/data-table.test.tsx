import { describe, expect, it } from 'vitest';
import { render, screen, within } from '@testing-library/react';
import { DataTable, type Column } from '../../src/components/DataTable';

interface Row { id: string; name: string; size: number }
const rows: Row[] = [{ id: 'a', name: 'report.pdf', size: 10 }, { id: 'b', name: 'photo.jpg', size: 20 }];
const columns: Column<Row>[] = [
  { key: 'name', header: 'File', cell: (r) => r.name, title: (r) => r.name },
  { key: 'size', header: 'Size', className: 'hidden lg:table-cell', cell: (r) => `${r.size} B` },
  { key: 'actions', header: 'Actions', cardLabel: '', cell: (r) => <button type="button">Open {r.name}</button> },
];

describe('DataTable', () => {
  it('draws a heading row and a row per item inside a named, focusable scroll region', () => {
    render(<DataTable rows={rows} rowKey={(r) => r.id} columns={columns} label="Files table"
      rowProps={(r) => ({ 'data-testid': `row-${r.id}` })} bodyProps={{ 'data-testid': 'rows' }} />);
    const region = screen.getByRole('region', { name: 'Files table' });
    expect(region).toHaveAttribute('tabindex', '0');
    const table = within(region).getByRole('table');
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['File', 'Size', 'Actions']);
    expect(within(screen.getByTestId('rows')).getAllByRole('row')).toHaveLength(2);
    const cells = within(screen.getByTestId('row-b')).getAllByRole('cell');
    expect(cells.map((c) => c.textContent)).toEqual(['photo.jpg', '20 B', 'Open photo.jpg']);
    expect(cells[0]).toHaveAttribute('title', 'photo.jpg');
    // A column's classes reach its heading and its cells (a column hidden on narrow screens).
    expect(within(table).getByRole('columnheader', { name: 'Size' })).toHaveClass('hidden', 'lg:table-cell');
    expect(cells[1]).toHaveClass('hidden', 'lg:table-cell');
  });

  it('shows cards below the breakpoint and the table above it; the generic card lists each labelled value', () => {
    render(<DataTable rows={rows} rowKey={(r) => r.id} columns={columns} label="Files table" cardsLabel="Files" from="sm"
      cardProps={(r) => ({ 'data-testid': `card-${r.id}` })} />);
    const cards = screen.getByRole('list', { name: 'Files' });
    expect(cards).toHaveClass('sm:hidden');
    expect(screen.getByRole('region', { name: 'Files table' })).toHaveClass('hidden', 'sm:block');
    const card = screen.getByTestId('card-a');
    expect(within(card).getAllByRole('term').map((t) => t.textContent)).toEqual(['File', 'Size']);
    expect(within(card).getAllByRole('definition').map((d) => d.textContent)).toEqual(['report.pdf', '10 B']);
    // An unlabelled column (the actions) is in the card without a term.
    expect(within(card).getByRole('button', { name: 'Open report.pdf' })).toBeInTheDocument();
  });

  it('uses the caller\'s card when given, and only the table for a short one', () => {
    const { unmount } = render(<DataTable rows={rows} rowKey={(r) => r.id} columns={columns} label="Files table"
      card={(r) => <p>{r.name} card</p>} />);
    expect(screen.getByText('photo.jpg card')).toBeInTheDocument();
    unmount();
    render(<DataTable layout="table" rows={rows} rowKey={(r) => r.id} columns={columns} label="Usage table" />);
    expect(screen.queryByRole('list')).not.toBeInTheDocument();
    expect(screen.getByRole('region', { name: 'Usage table' })).not.toHaveClass('hidden');
  });
});
