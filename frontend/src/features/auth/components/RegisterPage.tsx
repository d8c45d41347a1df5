import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { toast } from 'react-toastify';
import { ApiError } from '../../../lib/api-client';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { validateRegister } from '../../../lib/validation';
import { Spinner } from '../../../components/ui';
import { FieldError, FormAlert, fieldProps, formErrors, type FormErrors } from '../../../lib/form-errors';
import { AuthCard, Divider, GoogleButton } from './AuthCard';

/** Server error.message, else message, else the exception's message, else the default. */
export function registrationErrorText(error: unknown): string {
  if (error instanceof ApiError && error.serverMessage) return error.serverMessage;
  if (error instanceof Error && error.message) return error.message;
  return 'Registration failed. Please try again.';
}

const REGISTER_FIELDS = ['firstName', 'lastName', 'username', 'email', 'password'] as const;
/** Which input each client-side problem belongs to (the rest go to the top of the form). */
const REGISTER_PROBLEM_FIELD: Record<string, string> = {
  'Passwords do not match': 'confirmPassword',
  'Password must be at least 6 characters long': 'password',
};

export default function RegisterPage() {
  const { register } = useAuth();
  const navigate = useNavigate();
  const [form, setForm] = useState({ firstName: '', lastName: '', username: '', email: '', password: '', confirmPassword: '' });
  const [submitting, setSubmitting] = useState(false);
  const [errors, setErrors] = useState<FormErrors>({});
  const set = (key: keyof typeof form) => (e: React.ChangeEvent<HTMLInputElement>) => setForm((f) => ({ ...f, [key]: e.target.value }));

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = validateRegister(form);
    setErrors(problem ? { [REGISTER_PROBLEM_FIELD[problem] ?? 'form']: problem } : {});
    if (problem) return;
    setSubmitting(true);
    try {
      await register({ email: form.email, password: form.password, firstName: form.firstName, lastName: form.lastName, username: form.username });
      toast.success('Registration successful! Please check your email to verify your account.');
      void navigate('/login');
    } catch (error) {
      setErrors(formErrors(error, REGISTER_FIELDS, registrationErrorText(error)));
    } finally {
      setSubmitting(false);
    }
  };

  return (
    <AuthCard title="Create your account" subtitle={<>Already registered? <Link to="/login" className="link">Sign in</Link></>}>
      <form onSubmit={onSubmit} noValidate className="space-y-5">
        <FormAlert errors={errors} />
        <div className="grid gap-5 sm:grid-cols-2">
          <div>
            <label htmlFor="firstName" className="label">First name</label>
            <input id="firstName" name="firstName" autoComplete="given-name" className="input" value={form.firstName} onChange={set('firstName')} />
          </div>
          <div>
            <label htmlFor="lastName" className="label">Last name</label>
            <input id="lastName" name="lastName" autoComplete="family-name" className="input" value={form.lastName} onChange={set('lastName')} />
          </div>
        </div>
        <div>
          <label htmlFor="username" className="label">Username <span className="font-normal text-slate-500">(optional)</span></label>
          <input id="username" name="username" autoComplete="username" className="input" value={form.username} onChange={set('username')} {...fieldProps(errors, 'username')} />
          <FieldError errors={errors} field="username" />
        </div>
        <div>
          <label htmlFor="email" className="label">Email address <span className="text-red-600" aria-hidden="true">*</span></label>
          <input id="email" name="email" type="email" autoComplete="email" required aria-required="true" className="input" value={form.email} onChange={set('email')} {...fieldProps(errors, 'email')} />
          <FieldError errors={errors} field="email" />
        </div>
        <div>
          <label htmlFor="password" className="label">Password <span className="text-red-600" aria-hidden="true">*</span></label>
          <input id="password" name="password" type="password" autoComplete="new-password" required aria-required="true" className="input" value={form.password} onChange={set('password')} {...fieldProps(errors, 'password', 'password-hint')} />
          <p id="password-hint" className="mt-1 text-xs text-slate-500">At least 6 characters.</p>
          <FieldError errors={errors} field="password" />
        </div>
        <div>
          <label htmlFor="confirmPassword" className="label">Confirm password <span className="text-red-600" aria-hidden="true">*</span></label>
          <input id="confirmPassword" name="confirmPassword" type="password" autoComplete="new-password" required aria-required="true" className="input" value={form.confirmPassword} onChange={set('confirmPassword')} {...fieldProps(errors, 'confirmPassword')} />
          <FieldError errors={errors} field="confirmPassword" />
        </div>
        <p className="text-xs text-slate-500">
          By creating an account you agree to our <Link to="/terms" className="link">Terms of Service</Link> and <Link to="/privacy" className="link">Privacy Policy</Link>.
        </p>
        <button type="submit" className="btn-primary w-full" disabled={submitting}>
          {submitting && <Spinner label="Creating account" className="h-4 w-4" />}
          Create account
        </button>
      </form>
      <Divider />
      <GoogleButton label="Sign up with Google" />
    </AuthCard>
  );
}
