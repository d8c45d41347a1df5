import { useState } from 'react';
import { toast } from 'react-toastify';
import { Alert, PageSpinner, StatTile } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { formatBytes } from '../../../lib/format';
import { overviewSuccessRate, queueAction, useAnalytics, useQueueStats, type QueueAction } from '../api';

const QUEUE_KEYS: ['waiting' | 'active' | 'completed' | 'failed', string][] = [['waiting', 'Waiting'], ['active', 'Active'], ['completed', 'Completed'], ['failed', 'Failed']];

export function OverviewTab() {
  const analytics = useAnalytics('month');
  const queue = useQueueStats();
  const [busy, setBusy] = useState<string | null>(null);

  const run = async (action: QueueAction) => {
    setBusy(action);
    try {
      const res = await queueAction(action);
      toast.success(res.message || 'Done');
      void queue.refetch();
    } catch (error) {
      toast.error(messageOf(error, 'Queue action failed'));
    } finally {
      setBusy(null);
    }
  };

  if (analytics.isPending) return <PageSpinner label="Loading overview" />;
  if (analytics.isError) {
    return (
      <div>
        <Alert tone="error" title="Failed to load analytics">{messageOf(analytics.error, '')}</Alert>
        <button type="button" className="btn-primary mt-4" onClick={() => analytics.refetch()}>Retry</button>
      </div>
    );
  }
  const a = analytics.data;
  const q = queue.data;
  return (
    <div className="space-y-6">
      <div className="grid grid-cols-2 gap-4 lg:grid-cols-4">
        <StatTile label="Total users" value={a.users.total} />
        <StatTile label="Active users" value={a.users.active} tone="green" />
        <StatTile label="Files (30 days)" value={a.files.recent} tone="blue" />
        <StatTile label="Success rate" value={<span data-testid="success-rate">{overviewSuccessRate(a)}%</span>} tone="green" />
      </div>
      <div className="grid gap-6 lg:grid-cols-2">
        <section className="card p-6" aria-labelledby="storage-ov">
          <h2 id="storage-ov" className="font-semibold text-slate-900">Storage</h2>
          <p className="mt-3 text-3xl font-bold text-slate-900">{formatBytes(a.storage.totalUsed)}</p>
          <p className="text-sm text-slate-500">Average file {formatBytes(a.storage.averageFileSize)} · {a.files.total} files in total</p>
        </section>
        <section className="card p-6" aria-labelledby="queue-ov">
          <div className="flex items-center justify-between">
            <h2 id="queue-ov" className="font-semibold text-slate-900">Processing queue</h2>
            {q && <span className={`rounded-full px-2.5 py-0.5 text-xs font-semibold ${q.paused ? 'bg-yellow-100 text-yellow-800' : 'bg-green-100 text-green-800'}`}>{q.paused ? 'Paused' : 'Running'}</span>}
          </div>
          {queue.isError ? <p className="mt-3 text-sm text-red-700">{messageOf(queue.error, 'Queue statistics are unavailable.')}</p> : q ? (
            <dl className="mt-4 grid grid-cols-2 gap-3 text-sm sm:grid-cols-4">
              {QUEUE_KEYS.map(([k, label]) => (
                <div key={k}><dt className="text-slate-500">{label}</dt><dd className="text-lg font-semibold text-slate-900">{typeof q[k] === 'number' ? q[k] : '—'}</dd></div>
              ))}
            </dl>
          ) : <PageSpinner />}
          <div className="mt-5 flex flex-wrap gap-2">
            {q?.paused
              ? <button type="button" className="btn-secondary" disabled={!!busy} onClick={() => run('resume')}>Resume queue</button>
              : <button type="button" className="btn-secondary" disabled={!!busy} onClick={() => run('pause')}>Pause queue</button>}
            <button type="button" className="btn-ghost" disabled={!!busy} onClick={() => run('clear-completed')}>Clear completed</button>
            <button type="button" className="btn-ghost" disabled={!!busy} onClick={() => run('clear-failed')}>Clear failed</button>
          </div>
        </section>
      </div>
    </div>
  );
}
