import { useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate, useSearchParams, type Location } from 'react-router-dom';
import { toast } from 'react-toastify';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { validateLogin } from '../../../lib/validation';
import { Alert, Spinner } from '../../../components/ui';
import { loginErrorText } from '../api';
import { AuthCard, Divider, GoogleButton } from './AuthCard';

export function redirectTarget(state: unknown): string {
  const from = (state as { from?: Location | string } | null)?.from;
  if (!from) return '/dashboard';
  if (typeof from === 'string') return from.startsWith('/') ? from : '/dashboard';
  const path = `${from.pathname ?? ''}${from.search ?? ''}${from.hash ?? ''}`;
  return path && path !== '/login' ? path : '/dashboard';
}

export default function LoginPage() {
  const { login, isAuthenticated, user } = useAuth();
  const navigate = useNavigate();
  const location = useLocation();
  const [params] = useSearchParams();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  const [submitting, setSubmitting] = useState(false);
  const urlError = loginErrorText(params.get('error'));

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = validateLogin({ email, password });
    if (problem) {
      toast.error(problem);
      return;
    }
    setSubmitting(true);
    try {
      await login(email, password);
      toast.success('Login successful!');
      void navigate(redirectTarget(location.state), { replace: true });
    } catch {
      toast.error('Login failed. Please check your credentials.');
    } finally {
      setSubmitting(false);
    }
  };

  return (
    <AuthCard title="Sign in to your account"
      subtitle={<>Or <Link to="/register" className="link">create a free account</Link></>}>
      {urlError && <div className="mb-6"><Alert tone="error">{urlError}</Alert></div>}
      {isAuthenticated && !submitting && (
        <div className="mb-6"><Alert tone="info">You are signed in as {user?.email}. <Link to="/dashboard" className="link">Go to your dashboard</Link> or sign in with another account.</Alert></div>
      )}
      <form onSubmit={onSubmit} noValidate className="space-y-5">
        <div>
          <label htmlFor="email" className="label">Email address</label>
          <input id="email" name="email" type="email" autoComplete="email" className="input" value={email} onChange={(e) => setEmail(e.target.value)} />
        </div>
        <div>
          <label htmlFor="password" className="label">Password</label>
          <input id="password" name="password" type="password" autoComplete="current-password" className="input" value={password} onChange={(e) => setPassword(e.target.value)} />
        </div>
        <div className="flex items-center justify-between gap-4 text-sm">
          <label className="flex items-center gap-2 text-slate-700">
            <input type="checkbox" className="h-4 w-4 rounded border-slate-300 text-brand-700" checked={remember} onChange={(e) => setRemember(e.target.checked)} />
            Remember me
          </label>
          <Link to="/forgot-password" className="link">Forgot your password?</Link>
        </div>
        <button type="submit" className="btn-primary w-full" disabled={submitting}>
          {submitting && <Spinner label="Signing in" className="h-4 w-4" />}
          Sign in
        </button>
      </form>
      <Divider />
      <GoogleButton label="Sign in with Google" />
    </AuthCard>
  );
}
