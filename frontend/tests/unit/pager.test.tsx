import { describe, expect, it, vi } from 'vitest';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Pager } from '../../src/components/Pager';
import type { Pagination } from '../../src/lib/types';

const page = (n: number, pages: number, total: number): Pagination => ({
  page: n, limit: 20, total, pages, hasNext: n < pages, hasPrev: n > 1,
});

describe('Pager', () => {
  it('shows nothing for one page or before the list has answered', () => {
    const { container, rerender } = render(<Pager pagination={page(1, 1, 3)} label="File pages" noun="files" onStep={() => {}} />);
    expect(container).toBeEmptyDOMElement();
    rerender(<Pager pagination={undefined} label="File pages" noun="files" onStep={() => {}} />);
    expect(container).toBeEmptyDOMElement();
  });

  it('names its landmark, shows the page with the total, and steps back and on', async () => {
    const onStep = vi.fn();
    render(<Pager pagination={page(2, 3, 45)} label="User pages" noun="users" onStep={onStep} />);
    const nav = screen.getByRole('navigation', { name: 'User pages' });
    expect(nav).toHaveTextContent('Page 2 of 3 · 45 users');
    await userEvent.click(screen.getByRole('button', { name: 'Previous' }));
    await userEvent.click(screen.getByRole('button', { name: 'Next' }));
    expect(onStep.mock.calls).toEqual([[-1], [1]]);
  });

  it('disables the buttons at the ends and leaves the total out without a noun', () => {
    render(<Pager pagination={page(1, 2, 30)} label="Message pages" inCard={false} onStep={() => {}} />);
    expect(screen.getByText('Page 1 of 2')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Previous' })).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Next' })).toBeEnabled();
  });
});
