import { useEffect, useRef, useState, type FormEvent } from 'react';
import { toast } from 'react-toastify';
import { useQueryClient } from '@tanstack/react-query';
import { Container } from '../../../components/Layout';
import { Alert, PageHeader, PageSpinner, Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { roleDescription } from '../../../lib/constants';
import { FieldError, FormAlert, fieldProps, formErrors, type FormErrors } from '../../../lib/form-errors';
import { formatDateTime } from '../../../lib/format';
import { profileChanges } from '../../../lib/validation';
import { PROFILE_NAME_MAX, profileQuery, useProfile } from '../api';
import { ApiKeysSection } from './ApiKeysSection';
import { PasswordForm } from './PasswordForm';
import { WebhooksSection } from './WebhooksSection';

const NAME_FIELDS = ['firstName', 'lastName'] as const;

/** The names' own check: at most PROFILE_NAME_MAX characters each (the server's rule). */
export function nameProblems(names: { firstName: string; lastName: string }): FormErrors {
  const out: FormErrors = {};
  for (const field of NAME_FIELDS) {
    if (names[field].trim().length > PROFILE_NAME_MAX) out[field] = `Must be at most ${PROFILE_NAME_MAX} characters.`;
  }
  return out;
}

export default function ProfilePage() {
  const { user: authUser, updateProfile, setUser } = useAuth();
  const profile = useProfile();
  const queryClient = useQueryClient();
  const [names, setNames] = useState({ firstName: '', lastName: '' });
  const [saving, setSaving] = useState(false);
  const [errors, setErrors] = useState<FormErrors>({});
  const warned = useRef(false);
  const user = profile.data ?? authUser;

  useEffect(() => {
    if (profile.data) {
      setNames({ firstName: profile.data.firstName ?? '', lastName: profile.data.lastName ?? '' });
      setUser({ ...authUser, ...profile.data });
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [profile.data]);

  useEffect(() => {
    if (profile.isError && !warned.current) {
      warned.current = true;
      toast.error('Failed to load profile');
    }
  }, [profile.isError]);

  if (profile.isPending) return <PageSpinner label="Loading profile" />;

  const onSave = async (e: FormEvent) => {
    e.preventDefault();
    const found = nameProblems(names);
    setErrors(found);
    if (Object.keys(found).length) return;
    const changes = profileChanges(user ?? {}, names);
    if (!Object.keys(changes).length) {
      toast.info('No changes to save');
      return;
    }
    setSaving(true);
    try {
      const updated = await updateProfile(changes);
      if (updated) queryClient.setQueryData(profileQuery().queryKey, updated);
      toast.success('Profile updated successfully');
    } catch (error) {
      setErrors(formErrors(error, NAME_FIELDS, 'Failed to update profile'));
    } finally {
      setSaving(false);
    }
  };

  return (
    <Container narrow>
      <PageHeader title="Profile Settings" subtitle="Your name, sign-in details, password, API keys and webhooks." />
      {profile.isError && <div className="mb-6"><Alert tone="error" title="Failed to load profile">{messageOf(profile.error, 'Showing the details saved on this device.')}</Alert></div>}
      <div className="space-y-6">
        <form onSubmit={onSave} noValidate className="card space-y-5 p-6" aria-labelledby="personal-heading" data-testid="profile-form">
          <h2 id="personal-heading" className="font-semibold text-slate-900">Personal information</h2>
          <FormAlert errors={errors} />
          <div className="grid gap-5 sm:grid-cols-2">
            <div>
              <label htmlFor="firstName" className="label">First name</label>
              <input id="firstName" className="input" autoComplete="given-name" value={names.firstName} onChange={(e) => setNames((n) => ({ ...n, firstName: e.target.value }))}
                {...fieldProps(errors, 'firstName')} />
              <FieldError errors={errors} field="firstName" />
            </div>
            <div>
              <label htmlFor="lastName" className="label">Last name</label>
              <input id="lastName" className="input" autoComplete="family-name" value={names.lastName} onChange={(e) => setNames((n) => ({ ...n, lastName: e.target.value }))}
                {...fieldProps(errors, 'lastName')} />
              <FieldError errors={errors} field="lastName" />
            </div>
          </div>
          <div>
            <label htmlFor="email" className="label">Email address</label>
            <input id="email" className="input" value={user?.email ?? ''} readOnly disabled aria-describedby="email-hint" />
            <p id="email-hint" className="mt-1 text-xs text-slate-500">Email cannot be changed</p>
          </div>
          <div className="grid gap-4 text-sm sm:grid-cols-3">
            <div><p className="text-slate-500">Role</p><p className="font-medium text-slate-900">{user?.role}</p><p className="text-xs text-slate-500">{roleDescription(user?.role) ?? ''}</p></div>
            <div><p className="text-slate-500">Created</p><p className="font-medium text-slate-900">{formatDateTime(user?.createdAt)}</p></div>
            <div><p className="text-slate-500">Last updated</p><p className="font-medium text-slate-900">{formatDateTime(user?.updatedAt)}</p></div>
          </div>
          <button type="submit" className="btn-primary" disabled={saving}>{saving && <Spinner label="Saving" className="h-4 w-4" />}Save changes</button>
        </form>

        <PasswordForm />

        <ApiKeysSection />
        <WebhooksSection />
      </div>
    </Container>
  );
}
