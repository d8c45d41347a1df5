import { useState, type FormEvent } from 'react';
import { toast } from 'react-toastify';
import { Spinner } from '../../../components/ui';
import { ApiError } from '../../../lib/api-client';
import { FieldError, FormAlert, fieldProps, formErrors, type FormErrors } from '../../../lib/form-errors';
import { validatePasswordChange } from '../../../lib/validation';
import { changePassword } from '../api';

type Passwords = { currentPassword: string; newPassword: string; confirmPassword: string };
const EMPTY: Passwords = { currentPassword: '', newPassword: '', confirmPassword: '' };
/** The fields the server may name in a 422 (the confirmation never leaves the browser). */
const SERVER_FIELDS = ['currentPassword', 'newPassword'] as const;
export const REQUIRED = 'This field is required.';

/** The form's own checks (the SPEC's messages, lib/validation.ts) as errors by field: a missing
 * field is marked under itself and the SPEC's sentence goes to the top; a mismatch goes under the
 * confirmation, a short password under the new one. */
export function passwordProblems(pw: Passwords): FormErrors {
  const problem = validatePasswordChange(pw);
  if (!problem) return {};
  if (problem === 'New passwords do not match') return { confirmPassword: problem };
  if (problem === 'New password must be at least 8 characters') return { newPassword: problem };
  const out: FormErrors = { form: problem };
  for (const key of Object.keys(pw) as (keyof Passwords)[]) if (!pw[key]) out[key] = REQUIRED;
  return out;
}

/** The server's refusal: a 422's fields under their inputs; a wrong current password (400,
 * `wrong_password`, no field named) under the current password; anything else at the top. */
export function passwordServerErrors(error: unknown): FormErrors {
  if (error instanceof ApiError && error.code === 'wrong_password') {
    return { currentPassword: error.serverMessage || 'Current password is incorrect' };
  }
  return formErrors(error, SERVER_FIELDS, 'Failed to update password');
}

/** Change password: errors next to their fields (and at the top for the rest); the toast only
 * announces the change. */
export function PasswordForm() {
  const [pw, setPw] = useState<Passwords>(EMPTY);
  const [errors, setErrors] = useState<FormErrors>({});
  const [saving, setSaving] = useState(false);
  const set = (key: keyof Passwords) => (e: React.ChangeEvent<HTMLInputElement>) => setPw((p) => ({ ...p, [key]: e.target.value }));

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const found = passwordProblems(pw);
    setErrors(found);
    if (Object.keys(found).length) return;
    setSaving(true);
    try {
      await changePassword(pw.currentPassword, pw.newPassword);
      toast.success('Password updated successfully');
      setPw(EMPTY);
    } catch (error) {
      setErrors(passwordServerErrors(error));
    } finally {
      setSaving(false);
    }
  };

  return (
    <form onSubmit={onSubmit} noValidate className="card space-y-5 p-6" aria-labelledby="password-heading" data-testid="password-form">
      <h2 id="password-heading" className="font-semibold text-slate-900">Change password</h2>
      <FormAlert errors={errors} />
      <div>
        <label htmlFor="currentPassword" className="label">Current password</label>
        <input id="currentPassword" type="password" autoComplete="current-password" className="input" value={pw.currentPassword}
          onChange={set('currentPassword')} {...fieldProps(errors, 'currentPassword')} />
        <FieldError errors={errors} field="currentPassword" />
      </div>
      <div className="grid gap-5 sm:grid-cols-2">
        <div>
          <label htmlFor="newPassword" className="label">New password</label>
          <input id="newPassword" type="password" autoComplete="new-password" className="input" value={pw.newPassword}
            onChange={set('newPassword')} {...fieldProps(errors, 'newPassword', 'new-pw-hint')} />
          <p id="new-pw-hint" className="mt-1 text-xs text-slate-500">At least 8 characters.</p>
          <FieldError errors={errors} field="newPassword" />
        </div>
        <div>
          <label htmlFor="confirmNewPassword" className="label">Confirm new password</label>
          <input id="confirmNewPassword" type="password" autoComplete="new-password" className="input" value={pw.confirmPassword}
            onChange={set('confirmPassword')} {...fieldProps(errors, 'confirmPassword')} />
          <FieldError errors={errors} field="confirmPassword" />
        </div>
      </div>
      <button type="submit" className="btn-primary" disabled={saving}>{saving && <Spinner label="Updating password" className="h-4 w-4" />}Update password</button>
    </form>
  );
}
