import { useEffect, useRef } from 'react';
import { useNavigate, useSearchParams } from 'react-router-dom';
import { toast } from 'react-toastify';
import { PageSpinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { useAuth } from '../../../lib/auth/AuthProvider';

/** Google sign-in lands here with ?code= (or ?error=); the code is exchanged for a session. */
export default function AuthCallbackPage() {
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const { completeGoogleSignIn } = useAuth();
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const code = params.get('code');
    const error = params.get('error');
    if (!code) {
      void navigate(`/login?error=${encodeURIComponent(error || 'google_failed')}`, { replace: true });
      return;
    }
    completeGoogleSignIn(code).then(() => {
      toast.success('Login successful!');
      void navigate('/dashboard', { replace: true });
    }, (err) => {
      void navigate(`/login?error=${encodeURIComponent(messageOf(err, 'google_failed'))}`, { replace: true });
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  return <PageSpinner label="Completing sign-in" />;
}
