import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { toast } from 'react-toastify';
import { Alert, Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { validateReset } from '../../../lib/validation';
import { resetPassword } from '../api';
import { AuthCard } from './AuthCard';

export default function ResetPasswordPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const [form, setForm] = useState({ password: '', confirmPassword: '' });
  const [saving, setSaving] = useState(false);
  const [done, setDone] = useState<string | null>(null);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = validateReset(form);
    if (problem) {
      toast.error(problem);
      return;
    }
    setSaving(true);
    try {
      const res = await resetPassword(token, form.password);
      setDone(res.message || 'Your password has been reset. You can now sign in.');
      toast.success('Password updated successfully');
    } catch (error) {
      toast.error(messageOf(error, 'This reset link is invalid or has expired.'));
    } finally {
      setSaving(false);
    }
  };

  return (
    <AuthCard title="Choose a new password" footer={<Link to="/login" className="link">Back to sign in</Link>}>
      {!token ? (
        <Alert tone="error" title="This reset link is incomplete">Open the link from the email again, or <Link to="/forgot-password" className="link">request a new one</Link>.</Alert>
      ) : done ? (
        <div className="space-y-4"><Alert tone="success">{done}</Alert><Link to="/login" className="btn-primary w-full">Sign in</Link></div>
      ) : (
        <form onSubmit={onSubmit} noValidate className="space-y-5">
          <div>
            <label htmlFor="password" className="label">New password</label>
            <input id="password" type="password" autoComplete="new-password" className="input" aria-describedby="pw-hint" value={form.password} onChange={(e) => setForm((f) => ({ ...f, password: e.target.value }))} />
            <p id="pw-hint" className="mt-1 text-xs text-slate-500">At least 8 characters.</p>
          </div>
          <div>
            <label htmlFor="confirmPassword" className="label">Confirm new password</label>
            <input id="confirmPassword" type="password" autoComplete="new-password" className="input" value={form.confirmPassword} onChange={(e) => setForm((f) => ({ ...f, confirmPassword: e.target.value }))} />
          </div>
          <button type="submit" className="btn-primary w-full" disabled={saving}>{saving && <Spinner label="Saving" className="h-4 w-4" />}Reset password</button>
        </form>
      )}
    </AuthCard>
  );
}
