import { useState, type FormEvent } from 'react';
import { Link } from 'react-router-dom';
import { toast } from 'react-toastify';
import { Alert, Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { forgotPassword } from '../api';
import { AuthCard } from './AuthCard';

export default function ForgotPasswordPage() {
  const [email, setEmail] = useState('');
  const [sending, setSending] = useState(false);
  const [done, setDone] = useState<string | null>(null);

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    if (!email.trim()) {
      toast.error('Please enter your email address');
      return;
    }
    setSending(true);
    try {
      const res = await forgotPassword(email);
      setDone(res.message || 'If an account exists for that email, a password reset link has been sent.');
    } catch (error) {
      toast.error(messageOf(error, 'Could not send the reset link. Please try again.'));
    } finally {
      setSending(false);
    }
  };

  return (
    <AuthCard title="Reset your password" subtitle="Enter your account's email and we will send you a link to choose a new password."
      footer={<Link to="/login" className="link">Back to sign in</Link>}>
      {done ? <Alert tone="success">{done}</Alert> : (
        <form onSubmit={onSubmit} noValidate className="space-y-5">
          <div>
            <label htmlFor="email" className="label">Email address</label>
            <input id="email" type="email" autoComplete="email" className="input" value={email} onChange={(e) => setEmail(e.target.value)} />
          </div>
          <button type="submit" className="btn-primary w-full" disabled={sending}>{sending && <Spinner label="Sending" className="h-4 w-4" />}Send reset link</button>
        </form>
      )}
    </AuthCard>
  );
}
