import { Suspense, useState } from 'react';
import { Alert, PageSpinner, StatTile } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { formatBytes, formatDateTime } from '../../../lib/format';
import type { Timeframe } from '../../../lib/types';
import { ChartsPanel, TIMEFRAMES } from '../../analytics';
import { useAnalytics } from '../api';

function Bars({ data, colors }: { data: Record<string, number>; colors: Record<string, string> }) {
  const max = Math.max(1, ...Object.values(data));
  return (
    <ul className="mt-4 space-y-3">
      {Object.entries(data).map(([key, value]) => (
        <li key={key} className="text-sm">
          <div className="flex justify-between"><span className="text-slate-600">{key}</span><span className="font-semibold text-slate-900">{value}</span></div>
          <div className="mt-1 h-2 rounded-full bg-slate-100"><div className={`h-2 rounded-full ${colors[key] ?? 'bg-brand-600'}`} style={{ width: `${(value / max) * 100}%` }} /></div>
        </li>
      ))}
    </ul>
  );
}

export function AnalyticsTab() {
  const [timeframe, setTimeframe] = useState<Timeframe>('month');
  const analytics = useAnalytics(timeframe);
  return (
    <div className="space-y-6">
      <div className="flex flex-col gap-2 sm:flex-row sm:items-center sm:justify-between">
        <div>
          <label htmlFor="timeframe" className="label">Timeframe</label>
          <select id="timeframe" className="input sm:w-56" value={timeframe} onChange={(e) => setTimeframe(e.target.value as Timeframe)}>
            {TIMEFRAMES.map((t) => <option key={t.value} value={t.value}>{t.label}</option>)}
          </select>
        </div>
        {analytics.data && <p className="text-sm text-slate-500">{formatDateTime(analytics.data.period.start)} – {formatDateTime(analytics.data.period.end)}</p>}
      </div>
      {analytics.isPending ? <PageSpinner label="Loading analytics" /> : analytics.isError ? (
        <Alert tone="error" title="Failed to load analytics">{messageOf(analytics.error, '')}</Alert>
      ) : (
        <>
          <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
            <StatTile label="Users" value={analytics.data.users.total} />
            <StatTile label="Active users" value={analytics.data.users.active} tone="green" />
            <StatTile label="Files in period" value={analytics.data.files.recent} tone="blue" />
            <StatTile label="Storage used" value={formatBytes(analytics.data.storage.totalUsed)} />
          </div>
          <div className="grid gap-6 lg:grid-cols-2">
            <section className="card p-6" aria-labelledby="by-status"><h2 id="by-status" className="font-semibold text-slate-900">Files by status</h2>
              <Bars data={analytics.data.files.byStatus ?? {}} colors={{ PENDING: 'bg-yellow-500', PROCESSING: 'bg-blue-500', COMPLETED: 'bg-green-500', FAILED: 'bg-red-500' }} />
            </section>
            <section className="card p-6" aria-labelledby="by-role"><h2 id="by-role" className="font-semibold text-slate-900">Users by role</h2>
              <Bars data={analytics.data.users.byRole ?? {}} colors={{ ADMIN: 'bg-purple-500', ENTERPRISE: 'bg-amber-500', USER: 'bg-brand-600', GUEST: 'bg-slate-400' }} />
            </section>
          </div>
        </>
      )}
      <section className="space-y-4" aria-labelledby="charts-heading">
        <h2 id="charts-heading" className="text-lg font-semibold text-slate-900">Charts (all users)</h2>
        <Suspense fallback={<PageSpinner label="Loading charts" />}>
          <ChartsPanel timeframe={timeframe} scope="all" />
        </Suspense>
      </section>
    </div>
  );
}
