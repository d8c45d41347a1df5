import { useEffect, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router-dom';
import { Alert, Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { verifyEmail } from '../api';
import { AuthCard } from './AuthCard';

export default function VerifyEmailPage() {
  const [params] = useSearchParams();
  const token = params.get('token') ?? '';
  const { user, setUser, isAuthenticated } = useAuth();
  const [state, setState] = useState<{ kind: 'loading' | 'ok' | 'error'; text: string }>({ kind: 'loading', text: '' });
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    if (!token) {
      setState({ kind: 'error', text: 'This verification link is incomplete. Open the link from the email again.' });
      return;
    }
    verifyEmail(token).then((res) => {
      setState({ kind: 'ok', text: res.message || 'Email verified successfully. You can now sign in.' });
      if (user && res.data && res.data.id === user.id) setUser({ ...user, ...res.data });
    }, (error) => setState({ kind: 'error', text: messageOf(error, 'This verification link is invalid or has expired.') }));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [token]);

  return (
    <AuthCard title="Email verification">
      {state.kind === 'loading' ? (
        <div className="flex items-center justify-center gap-3 py-6 text-brand-700"><Spinner label="Verifying your email" className="h-6 w-6" /><span className="text-slate-700">Verifying your email…</span></div>
      ) : (
        <div className="space-y-5">
          <Alert tone={state.kind === 'ok' ? 'success' : 'error'}>{state.text}</Alert>
          {isAuthenticated
            ? <Link to="/dashboard" className="btn-primary w-full">Go to your dashboard</Link>
            : <Link to="/login" className="btn-primary w-full">Go to sign in</Link>}
        </div>
      )}
    </AuthCard>
  );
}
