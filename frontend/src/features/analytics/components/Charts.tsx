import { useId, type ReactNode } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { kindLabel } from '../../files';
import { type AnalyticsCharts, RESULTS, bucketLabel, familyLabel, formatSeconds, humanize } from '../api';

const BRAND = '#0f766e';
const AMBER = '#d97706';
const SLATE = '#64748b';
const AXIS = { fontSize: 12, fill: '#475569' };

/** One chart: a heading, a one-line summary, the picture (hidden from assistive technology),
 * and the same numbers as a visually hidden table, its text alternative. */
export function ChartCard({ title, summary, empty, table, children, wide = false, testId }: {
  title: string; summary: string; empty: boolean; table: ReactNode; children: ReactNode; wide?: boolean; testId?: string;
}) {
  const id = useId();
  return (
    <section className={`card min-w-0 p-5 sm:p-6 ${wide ? 'lg:col-span-2' : ''}`} aria-labelledby={id} data-testid={testId}>
      <h3 id={id} className="font-semibold text-slate-900">{title}</h3>
      <p className="mt-1 text-sm text-slate-500">{summary}</p>
      {!empty && (
        <>
          <div className="mt-4" aria-hidden="true">{children}</div>
          {table}
        </>
      )}
    </section>
  );
}

/** The text alternative of a chart: a table only screen readers see (the 1-pixel clip is on a
 * wrapper, as a table is never narrower than its content). */
function DataTable({ caption, columns, rows }: { caption: string; columns: string[]; rows: (string | number)[][] }) {
  return (
    <div className="sr-only">
      <table>
        <caption>{caption}</caption>
        <thead><tr>{columns.map((c) => <th key={c} scope="col">{c}</th>)}</tr></thead>
        <tbody>
          {rows.map((row) => (
            <tr key={String(row[0])}>
              <th scope="row">{row[0]}</th>
              {row.slice(1).map((cell, i) => <td key={columns[i + 1]}>{cell}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Horizontal bars, one per labelled count; tall enough for every label. */
function CountBars({ data, color, name }: { data: { label: string; count: number }[]; color: string; name: string }) {
  return (
    <ResponsiveContainer width="100%" height={Math.max(120, data.length * 34 + 40)} initialDimension={{ width: 480, height: 200 }}>
      <BarChart data={data} layout="vertical" margin={{ top: 4, right: 16, bottom: 4, left: 4 }} accessibilityLayer={false}>
        <CartesianGrid strokeDasharray="3 3" horizontal={false} />
        <XAxis type="number" allowDecimals={false} tick={AXIS} />
        <YAxis type="category" dataKey="label" width={130} tick={AXIS} interval={0} />
        <Tooltip cursor={{ fill: '#f1f5f9' }} />
        <Bar dataKey="count" name={name} fill={color} radius={[0, 4, 4, 0]} maxBarSize={26} isAnimationActive={false} />
      </BarChart>
    </ResponsiveContainer>
  );
}

export function FilesOverTimeChart({ data }: { data: AnalyticsCharts }) {
  const points = data.filesOverTime.map((p) => ({ ...p, label: bucketLabel(p.start, data.bucket) }));
  const totals = RESULTS.map((r) => ({ ...r, total: data.filesOverTime.reduce((sum, p) => sum + p[r.key], 0) }));
  const total = totals.reduce((sum, r) => sum + r.total, 0);
  const per = data.bucket === 'hour' ? 'hour' : 'day';
  const title = `Files per ${per} by result`;
  const summary = total
    ? `${plural(total, 'file')}: ${totals.map((r) => `${r.total} ${r.label.toLowerCase()}`).join(', ')}. ${per === 'hour' ? 'Hours' : 'Days'} in UTC.`
    : 'No files in this period.';
  return (
    <ChartCard title={title} summary={summary} empty={!total} wide testId="chart-files"
      table={<DataTable caption={`${title} (UTC)`} columns={[per === 'hour' ? 'Hour' : 'Day', ...RESULTS.map((r) => r.label)]}
        rows={points.filter((p) => RESULTS.some((r) => p[r.key])).map((p) => [p.label, ...RESULTS.map((r) => p[r.key])])} />}>
      <ResponsiveContainer width="100%" height={280} initialDimension={{ width: 800, height: 280 }}>
        <BarChart data={points} margin={{ top: 4, right: 8, bottom: 4, left: -16 }} accessibilityLayer={false}>
          <CartesianGrid strokeDasharray="3 3" vertical={false} />
          <XAxis dataKey="label" tick={AXIS} minTickGap={12} />
          <YAxis allowDecimals={false} tick={AXIS} />
          <Tooltip cursor={{ fill: '#f1f5f9' }} />
          <Legend wrapperStyle={{ fontSize: 12 }} itemSorter={(item) => RESULTS.findIndex((r) => r.key === item.dataKey)} />
          {RESULTS.map((r) => <Bar key={r.key} dataKey={r.key} name={r.label} stackId="files" fill={r.color} maxBarSize={36} isAnimationActive={false} />)}
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

export function ThreatsChart({ data }: { data: AnalyticsCharts }) {
  const rows = data.threatsByKind.map((t) => ({ label: kindLabel(t.kind), count: t.count }));
  const total = rows.reduce((sum, r) => sum + r.count, 0);
  const read = data.threatReports;
  const sample = read.capped ? ` Counted from the newest ${read.read} of ${read.matched} reports.` : '';
  const summary = total ? `${plural(total, 'item')} removed, converted or blocked, of ${plural(rows.length, 'kind')}.${sample}` : `Nothing removed in this period.${sample}`;
  return (
    <ChartCard title="Threats removed by kind" summary={summary} empty={!total} testId="chart-threats"
      table={<DataTable caption="Threats removed by kind" columns={['Kind', 'Removed']} rows={rows.map((r) => [r.label, r.count])} />}>
      <CountBars data={rows.slice(0, 12)} color={BRAND} name="Removed" />
    </ChartCard>
  );
}

export function RejectionsChart({ data }: { data: AnalyticsCharts }) {
  const rows = data.rejectionsByCode.map((r) => ({ label: humanize(r.code), code: r.code, count: r.count }));
  const total = rows.reduce((sum, r) => sum + r.count, 0);
  return (
    <ChartCard title="Rejections by reason" summary={total ? `${plural(total, 'file')} refused, for ${plural(rows.length, 'reason')}.` : 'No file was refused in this period.'}
      empty={!total} testId="chart-rejections"
      table={<DataTable caption="Rejections by reason" columns={['Reason', 'Code', 'Files']} rows={rows.map((r) => [r.label, r.code, r.count])} />}>
      <CountBars data={rows} color={AMBER} name="Files" />
    </ChartCard>
  );
}

export function TopTypesChart({ data }: { data: AnalyticsCharts }) {
  const rows = data.topTypes.map((t) => ({ label: t.label, count: t.count }));
  if (data.otherTypes > 0) rows.push({ label: 'Other types', count: data.otherTypes });
  const total = rows.reduce((sum, r) => sum + r.count, 0);
  const first = data.topTypes[0];
  const summary = first ? `${plural(total, 'file')}; the most frequent type is ${first.label} (${first.count}).` : 'No files in this period.';
  return (
    <ChartCard title="Top input types" summary={summary} empty={!total} testId="chart-types"
      table={<DataTable caption="Top input types" columns={['Type', 'Files']} rows={rows.map((r) => [r.label, r.count])} />}>
      <CountBars data={rows} color={SLATE} name="Files" />
    </ChartCard>
  );
}

export function ProcessingTimeChart({ data }: { data: AnalyticsCharts }) {
  const rows = data.processingTime.map((t) => ({ label: familyLabel(t.family), files: t.files, median: t.median, p95: t.p95 }));
  const timed = data.timedFiles;
  const sample = timed.capped ? ` Computed from the newest ${timed.read} of ${timed.matched} files.` : '';
  const summary = rows.length ? `Seconds per file cleaned, for ${plural(timed.read, 'file')}.${sample}` : 'No file was cleaned in this period.';
  return (
    <ChartCard title="Processing time by family" summary={summary} empty={!rows.length} testId="chart-timing"
      table={<DataTable caption="Processing time by family" columns={['Family', 'Files', 'Median', '95th percentile']}
        rows={rows.map((r) => [r.label, r.files, formatSeconds(r.median), formatSeconds(r.p95)])} />}>
      <ResponsiveContainer width="100%" height={Math.max(140, rows.length * 56 + 60)} initialDimension={{ width: 800, height: 260 }}>
        <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 16, bottom: 4, left: 4 }} accessibilityLayer={false}>
          <CartesianGrid strokeDasharray="3 3" horizontal={false} />
          <XAxis type="number" tick={AXIS} unit=" s" />
          <YAxis type="category" dataKey="label" width={150} tick={AXIS} interval={0} />
          <Tooltip cursor={{ fill: '#f1f5f9' }} formatter={(value) => formatSeconds(Number(value))} />
          <Legend wrapperStyle={{ fontSize: 12 }} itemSorter={(item) => (item.dataKey === 'median' ? 0 : 1)} />
          <Bar dataKey="median" name="Median" fill={BRAND} maxBarSize={20} radius={[0, 4, 4, 0]} isAnimationActive={false} />
          <Bar dataKey="p95" name="95th percentile" fill="#5eead4" maxBarSize={20} radius={[0, 4, 4, 0]} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}

/** Every chart of the analytics answer. */
export function AnalyticsChartsView({ data }: { data: AnalyticsCharts }) {
  return (
    <div className="grid gap-6 lg:grid-cols-2">
      <FilesOverTimeChart data={data} />
      <ThreatsChart data={data} />
      <RejectionsChart data={data} />
      <TopTypesChart data={data} />
      <ProcessingTimeChart data={data} />
    </div>
  );
}
