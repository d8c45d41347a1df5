import { Suspense, useState } from 'react';
import { Link } from 'react-router-dom';
import { toast } from 'react-toastify';
import { Container } from '../../../components/Layout';
import { DataTable } from '../../../components/DataTable';
import { Alert, PageHeader, PageSpinner, ProgressBar, StatTile } from '../../../components/ui';
import { VERDICTS, VERDICT_VALUES, type Verdict } from '../../../components/Verdict';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { roleDescription } from '../../../lib/constants';
import { formatBytes, formatDate, formatMonth } from '../../../lib/format';
import { messageOf } from '../../../lib/api-client';
import { upgradeTarget, useCan, usePlans } from '../../../lib/plans';
import type { Timeframe } from '../../../lib/types';
import { ChartsPanel, TIMEFRAMES } from '../../analytics';
import { QUOTA_LABEL, quotaState, resendVerification, successRate, useUsageHistory, useUsageStats } from '../api';

const ROLE_BADGE: Record<string, string> = {
  ADMIN: 'bg-purple-100 text-purple-800', ENTERPRISE: 'bg-amber-100 text-amber-800',
  USER: 'bg-brand-100 text-brand-800', GUEST: 'bg-slate-100 text-slate-700',
};

const VERDICT_TILE_TONE: Record<Verdict, string> = { clean: 'green', cleaned: 'blue', partial: 'yellow', encrypted: 'yellow', refused: 'red' };

export default function DashboardPage() {
  const { user } = useAuth();
  const stats = useUsageStats();
  const history = useUsageHistory();
  const [resending, setResending] = useState(false);
  const [timeframe, setTimeframe] = useState<Timeframe>('month');
  const canCharts = useCan('charts');
  const upgrade = upgradeTarget(usePlans().data, user?.plan);

  const onResend = async () => {
    setResending(true);
    try {
      const res = await resendVerification();
      toast.success(res.message || 'A new verification email has been sent.');
    } catch (error) {
      toast.error(messageOf(error, 'Could not send the verification email.'));
    } finally {
      setResending(false);
    }
  };

  if (stats.isPending) return <PageSpinner label="Loading dashboard" />;
  if (stats.isError) {
    return (
      <Container narrow>
        <Alert tone="error" title="Failed to load dashboard data">{messageOf(stats.error, 'Please try again.')}</Alert>
        <button type="button" className="btn-primary mt-4" onClick={() => stats.refetch()}>Retry</button>
      </Container>
    );
  }
  const s = stats.data;
  const role = s.user?.role ?? user?.role ?? 'USER';
  const state = quotaState(s);
  const label = QUOTA_LABEL[state];
  const unlimitedStorage = s.overall.storageQuota < 0;

  return (
    <Container>
      <PageHeader title="Dashboard" subtitle={`Welcome back${user?.firstName ? `, ${user.firstName}` : ''}.`}
        actions={<><Link to="/upload" className="btn-primary">Upload Files</Link><Link to="/history" className="btn-secondary">File History</Link></>} />
      {user?.isEmailVerified === false && (
        <div className="mb-6">
          <Alert tone="warning" title="Please verify your email address">
            We sent a link to {user.email}. Open it to confirm your address.{' '}
            <button type="button" className="link" onClick={onResend} disabled={resending}>Resend verification email</button>
          </Alert>
        </div>
      )}
      <div className="grid gap-6 lg:grid-cols-3">
        <section className="card p-6" aria-labelledby="account-heading">
          <h2 id="account-heading" className="font-semibold text-slate-900">Account</h2>
          <dl className="mt-4 space-y-4 text-sm">
            <div><dt className="text-slate-500">Email</dt><dd className="mt-0.5 break-all font-medium text-slate-900">{user?.email}</dd></div>
            <div>
              <dt className="text-slate-500">Account type</dt>
              <dd className="mt-1">
                <span className={`inline-flex rounded-full px-2.5 py-0.5 text-xs font-semibold ${ROLE_BADGE[role] ?? ROLE_BADGE.GUEST}`} data-testid="role-badge">{role}</span>
                <p className="mt-1 text-slate-600">{roleDescription(role) ?? role}</p>
              </dd>
            </div>
            <div><dt className="text-slate-500">Member since</dt><dd className="mt-0.5 font-medium text-slate-900">{formatDate(s.user?.memberSince ?? user?.createdAt)}</dd></div>
          </dl>
        </section>

        <section className="card p-6" aria-labelledby="quota-heading">
          <div className="flex items-start justify-between gap-2">
            <h2 id="quota-heading" className="font-semibold text-slate-900">Uploads this month</h2>
            {label && (
              <span data-testid="quota-label" className={`rounded-full px-2.5 py-0.5 text-xs font-semibold ${state === 'over' ? 'bg-red-100 text-red-800' : 'bg-yellow-100 text-yellow-800'}`}>{label}</span>
            )}
          </div>
          <p className="mt-4 text-3xl font-bold text-slate-900" data-testid="quota-usage">
            {s.currentPeriod.uploadsUsed}
            <span className="text-base font-medium text-slate-500"> / {state === 'unlimited' ? 'Unlimited' : s.currentPeriod.uploadQuota}</span>
          </p>
          {state !== 'unlimited' && (
            <div className="mt-3">
              <ProgressBar value={s.currentPeriod.quotaUtilization} label="Monthly upload quota used" tone={state === 'over' ? 'red' : state === 'near' ? 'yellow' : 'brand'} />
            </div>
          )}
          <p className="mt-3 text-sm text-slate-600">Resets in {s.limits.daysUntilReset} day(s).</p>
          {state === 'over' && <p className="mt-2 text-sm text-red-700">You have used all uploads for this month. Upgrade or wait for the reset.</p>}
          {state === 'near' && <p className="mt-2 text-sm text-yellow-800">You are close to this month's upload limit.</p>}
        </section>

        <section className="card p-6" aria-labelledby="storage-heading">
          <h2 id="storage-heading" className="font-semibold text-slate-900">Storage</h2>
          <p className="mt-4 text-3xl font-bold text-slate-900">{formatBytes(s.overall.totalStorageUsed)}</p>
          <p className="text-sm text-slate-500">{unlimitedStorage ? 'Unlimited storage' : `of ${formatBytes(s.overall.storageQuota)}`}</p>
          {!unlimitedStorage && <div className="mt-3"><ProgressBar value={s.overall.storageUtilization} label="Storage used" /></div>}
          <p className="mt-3 text-sm text-slate-600">{s.overall.totalFiles} file(s) processed in total.</p>
        </section>
      </div>

      <section className="mt-6" aria-labelledby="verdicts-heading" data-testid="dashboard-verdicts">
        <h2 id="verdicts-heading" className="mb-3 font-semibold text-slate-900">Your files by verdict</h2>
        <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
          {VERDICT_VALUES.map((v) => (
            <StatTile key={v} label={VERDICTS[v].short} value={s.verdicts[v]} tone={VERDICT_TILE_TONE[v]} />
          ))}
        </div>
      </section>

      <section className="card mt-6 overflow-hidden" aria-labelledby="history-heading">
        <h2 id="history-heading" className="border-b border-slate-200 px-6 py-4 font-semibold text-slate-900">Usage history (last 6 months)</h2>
        {history.isPending ? <div className="p-6"><PageSpinner /></div> : history.isError ? (
          <div className="p-6">
            <Alert tone="error" title="Failed to load usage data" />
            <button type="button" className="btn-secondary mt-3" onClick={() => history.refetch()}>Retry</button>
          </div>
        ) : (
          <DataTable layout="table" padding="px-6" rows={history.data} rowKey={(m) => m.month} label="Usage history table"
            columns={[
              { key: 'month', header: 'Month', cellClassName: 'whitespace-nowrap font-medium text-slate-900', cell: (m) => formatMonth(m.month) },
              { key: 'uploads', header: 'Uploads', cellClassName: 'text-slate-700', cell: (m) => m.uploads },
              { key: 'size', header: 'Total size', cellClassName: 'text-slate-700', cell: (m) => formatBytes(m.totalSize) },
              { key: 'rate', header: 'Success rate', cellClassName: 'text-slate-700', cell: (m) => successRate(m) },
            ]} />
        )}
      </section>

      {canCharts && (
        <section className="mt-6 space-y-4" aria-labelledby="charts-heading" data-testid="dashboard-charts">
          <div className="flex flex-col gap-2 sm:flex-row sm:items-end sm:justify-between">
            <div>
              <h2 id="charts-heading" className="text-lg font-semibold text-slate-900">Analytics</h2>
              <p className="text-sm text-slate-500">Your files: results, threats removed, rejections, types and processing time.</p>
            </div>
            <div>
              <label htmlFor="charts-timeframe" className="label">Timeframe</label>
              <select id="charts-timeframe" className="input sm:w-56" value={timeframe} onChange={(e) => setTimeframe(e.target.value as Timeframe)}>
                {TIMEFRAMES.map((t) => <option key={t.value} value={t.value}>{t.label}</option>)}
              </select>
            </div>
          </div>
          <Suspense fallback={<PageSpinner label="Loading charts" />}>
            <ChartsPanel timeframe={timeframe} scope="own" />
          </Suspense>
        </section>
      )}

      {upgrade && (
        <section className="mt-6 overflow-hidden rounded-2xl bg-gradient-to-r from-brand-800 to-brand-600 p-6 text-white sm:p-8">
          <div className="sm:flex sm:items-center sm:justify-between sm:gap-8">
            <div>
              <h2 className="text-xl font-bold">Upgrade to {upgrade.label}</h2>
              <p className="mt-2 max-w-xl text-brand-100">Higher quotas, more storage, priority support and batch processing for your whole team.</p>
            </div>
            <Link to="/pricing" className="btn mt-4 shrink-0 bg-white text-brand-800 hover:bg-brand-50 sm:mt-0">See plans</Link>
          </div>
        </section>
      )}
    </Container>
  );
}
