import { afterEach, describe, expect, it } from 'vitest';
import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiClient, ApiError } from '../../src/lib/api-client';
import { formErrors } from '../../src/lib/form-errors';
import ContactPage from '../../src/features/contact/components/ContactPage';
import RegisterPage from '../../src/features/auth/components/RegisterPage';
import { calls, renderApp, serve } from './harness';

const adapter = apiClient.defaults.adapter;
afterEach(() => { apiClient.defaults.adapter = adapter; });

const invalid = (fields: { field: string | null; message: string; code?: string }[], message = 'Invalid request: ...') => ({
  success: false, message, error: 'validation_error', fields: fields.map((f) => ({ code: 'invalid', ...f })),
});

/** The input's own message: under it, and what aria-describedby points to. */
function expectFieldError(input: HTMLElement, message: string) {
  expect(input).toHaveAttribute('aria-invalid', 'true');
  const ids = (input.getAttribute('aria-describedby') ?? '').split(' ');
  expect(ids.map((id) => document.getElementById(id)?.textContent)).toContain(message);
}

describe('formErrors', () => {
  it('puts each server field under its input, nested paths under their field, the rest at the top', () => {
    const error = new ApiError('x', 'api', { status: 422, serverMessage: 'Invalid request', fields: [
      { field: 'name', message: 'This field is required.', code: 'missing' },
      { field: 'rules.macros', message: 'Must be one of remove, refuse.', code: 'enum' },
      { field: null, message: 'Body must be an object.', code: 'model_type' },
    ] });
    expect(formErrors(error, ['name', 'rules.macros', 'rules'], 'Failed')).toEqual({
      name: 'This field is required.', 'rules.macros': 'Must be one of remove, refuse.', form: 'Body must be an object.',
    });
    expect(formErrors(new ApiError('x', 'api', { status: 500, serverMessage: 'Database down' }), ['name'], 'Failed')).toEqual({ form: 'Database down' });
  });
});

describe('contact form', () => {
  const fill = async (message: string) => {
    await userEvent.type(screen.getByLabelText('Name'), 'Ada');
    await userEvent.type(screen.getByLabelText('Email'), 'ada@example.org');
    await userEvent.type(screen.getByLabelText('Subject'), 'Hello');
    await userEvent.type(screen.getByLabelText('Message'), message);
    await userEvent.click(screen.getByRole('button', { name: 'Send message' }));
  };

  it('asks for 10 characters of message before sending', async () => {
    serve([]);
    renderApp(<ContactPage />);
    await fill('Too short');
    expectFieldError(screen.getByLabelText('Message'), 'Must be at least 10 characters.');
    expect(calls.some((c) => c.url === '/api/contact')).toBe(false);
  });

  it('shows the server’s field errors next to their fields and others at the top', async () => {
    serve([{ method: 'POST', url: /\/api\/contact$/, status: 422, body: invalid([{ field: 'subject', message: 'Must be at most 200 characters.' }]) }]);
    renderApp(<ContactPage />);
    await fill('A long enough message');
    await waitFor(() => expectFieldError(screen.getByLabelText('Subject'), 'Must be at most 200 characters.'));
    expect(screen.getByLabelText('Name')).not.toHaveAttribute('aria-invalid');
    expect(screen.queryByText(/Invalid request/)).not.toBeInTheDocument();
  });

  it('shows an error without fields in an alert at the top of the form', async () => {
    serve([{ method: 'POST', url: /\/api\/contact$/, status: 429, body: { success: false, message: 'Too many messages; try again in an hour.', error: 'too_many_requests' } }]);
    renderApp(<ContactPage />);
    await fill('A long enough message');
    expect(await screen.findByTestId('form-alert')).toHaveTextContent('Too many messages; try again in an hour.');
    expect(screen.getByTestId('form-alert')).toHaveAttribute('role', 'alert');
  });
});

describe('register form', () => {
  const submit = async (password = 'abcdef', confirm = password) => {
    await userEvent.type(screen.getByLabelText(/^Email address/), 'ada@example');
    await userEvent.type(screen.getByLabelText(/^Password/), password);
    await userEvent.type(screen.getByLabelText(/^Confirm password/), confirm);
    await userEvent.click(screen.getByRole('button', { name: 'Create account' }));
  };

  it('shows the server’s email error under the email field', async () => {
    serve([{ method: 'POST', url: /\/api\/auth\/register$/, status: 422,
      body: invalid([{ field: 'email', message: 'Please enter a valid email address' }], 'Please enter a valid email address') }]);
    renderApp(<RegisterPage />, { path: '/register', at: '/register' });
    await submit();
    await waitFor(() => expectFieldError(screen.getByLabelText(/^Email address/), 'Please enter a valid email address'));
    expect(screen.queryByTestId('form-alert')).not.toBeInTheDocument();
  });

  it('shows a mismatched confirmation under the confirmation field', async () => {
    serve([]);
    renderApp(<RegisterPage />, { path: '/register', at: '/register' });
    await submit('abcdef', 'abcdeg');
    expectFieldError(screen.getByLabelText(/^Confirm password/), 'Passwords do not match');
    expect(calls).toHaveLength(0);
  });
});
