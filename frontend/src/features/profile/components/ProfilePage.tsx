import { useEffect, useRef, useState, type FormEvent } from 'react';
import { toast } from 'react-toastify';
import { useQueryClient } from '@tanstack/react-query';
import { Container } from '../../../components/Layout';
import { Alert, PageHeader, PageSpinner, Spinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { roleDescription } from '../../../lib/constants';
import { formatDateTime } from '../../../lib/format';
import { profileChanges, validatePasswordChange } from '../../../lib/validation';
import { changePassword, profileQuery, useProfile } from '../api';
import { ApiKeysSection } from './ApiKeysSection';
import { WebhooksSection } from './WebhooksSection';

export default function ProfilePage() {
  const { user: authUser, updateProfile, setUser } = useAuth();
  const profile = useProfile();
  const queryClient = useQueryClient();
  const [names, setNames] = useState({ firstName: '', lastName: '' });
  const [saving, setSaving] = useState(false);
  const [pw, setPw] = useState({ currentPassword: '', newPassword: '', confirmPassword: '' });
  const [pwSaving, setPwSaving] = useState(false);
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
      toast.error(messageOf(error, 'Failed to update profile'));
    } finally {
      setSaving(false);
    }
  };

  const onPassword = async (e: FormEvent) => {
    e.preventDefault();
    const problem = validatePasswordChange(pw);
    if (problem) {
      toast.error(problem);
      return;
    }
    setPwSaving(true);
    try {
      await changePassword(pw.currentPassword, pw.newPassword);
      toast.success('Password updated successfully');
      setPw({ currentPassword: '', newPassword: '', confirmPassword: '' });
    } catch (error) {
      toast.error(messageOf(error, 'Failed to update password'));
    } finally {
      setPwSaving(false);
    }
  };

  return (
    <Container narrow>
      <PageHeader title="Profile Settings" subtitle="Your name, sign-in details, password, API keys and webhooks." />
      {profile.isError && <div className="mb-6"><Alert tone="error" title="Failed to load profile">{messageOf(profile.error, 'Showing the details saved on this device.')}</Alert></div>}
      <div className="space-y-6">
        <form onSubmit={onSave} className="card space-y-5 p-6" aria-labelledby="personal-heading">
          <h2 id="personal-heading" className="font-semibold text-slate-900">Personal information</h2>
          <div className="grid gap-5 sm:grid-cols-2">
            <div>
              <label htmlFor="firstName" className="label">First name</label>
              <input id="firstName" className="input" autoComplete="given-name" value={names.firstName} onChange={(e) => setNames((n) => ({ ...n, firstName: e.target.value }))} />
            </div>
            <div>
              <label htmlFor="lastName" className="label">Last name</label>
              <input id="lastName" className="input" autoComplete="family-name" value={names.lastName} onChange={(e) => setNames((n) => ({ ...n, lastName: e.target.value }))} />
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

        <form onSubmit={onPassword} noValidate className="card space-y-5 p-6" aria-labelledby="password-heading">
          <h2 id="password-heading" className="font-semibold text-slate-900">Change password</h2>
          <div>
            <label htmlFor="currentPassword" className="label">Current password</label>
            <input id="currentPassword" type="password" autoComplete="current-password" className="input" value={pw.currentPassword} onChange={(e) => setPw((p) => ({ ...p, currentPassword: e.target.value }))} />
          </div>
          <div className="grid gap-5 sm:grid-cols-2">
            <div>
              <label htmlFor="newPassword" className="label">New password</label>
              <input id="newPassword" type="password" autoComplete="new-password" className="input" aria-describedby="new-pw-hint" value={pw.newPassword} onChange={(e) => setPw((p) => ({ ...p, newPassword: e.target.value }))} />
              <p id="new-pw-hint" className="mt-1 text-xs text-slate-500">At least 8 characters.</p>
            </div>
            <div>
              <label htmlFor="confirmNewPassword" className="label">Confirm new password</label>
              <input id="confirmNewPassword" type="password" autoComplete="new-password" className="input" value={pw.confirmPassword} onChange={(e) => setPw((p) => ({ ...p, confirmPassword: e.target.value }))} />
            </div>
          </div>
          <button type="submit" className="btn-primary" disabled={pwSaving}>{pwSaving && <Spinner label="Updating password" className="h-4 w-4" />}Update password</button>
        </form>

        <ApiKeysSection />
        <WebhooksSection />
      </div>
    </Container>
  );
}
