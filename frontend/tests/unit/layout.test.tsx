import { afterEach, describe, expect, it, vi } from 'vitest';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { Link, MemoryRouter, Route, Routes } from 'react-router-dom';
import { Layout } from '../../src/components/Layout';
import { AuthProvider } from '../../src/lib/auth/AuthProvider';

afterEach(() => vi.restoreAllMocks());

describe('layout', () => {
  it('opens each new page at its top', async () => {
    const scrollTo = vi.spyOn(window, 'scrollTo').mockImplementation(() => {});
    render(
      <QueryClientProvider client={new QueryClient()}>
        <MemoryRouter initialEntries={['/upload']}>
          <AuthProvider>
            <Routes>
              <Route element={<Layout />}>
                <Route path="/upload" element={<Link to="/status/f1">View Status</Link>} />
                <Route path="/status/:id" element={<h1>File Status</h1>} />
              </Route>
            </Routes>
          </AuthProvider>
        </MemoryRouter>
      </QueryClientProvider>,
    );
    scrollTo.mockClear();
    await userEvent.click(screen.getByRole('link', { name: 'View Status' }));
    expect(await screen.findByRole('heading', { name: 'File Status' })).toBeInTheDocument();
    expect(scrollTo).toHaveBeenCalledWith({ top: 0, left: 0, behavior: 'instant' });
  });
});
