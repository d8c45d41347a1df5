import { Alert, PageSpinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import type { Timeframe } from '../../../lib/types';
import { type ChartScope, useCharts } from '../api';
import { AnalyticsChartsView } from './Charts';

/** The analytics charts of one timeframe: everyone's files (admins) or the caller's own. */
export default function ChartsPanel({ timeframe, scope }: { timeframe: Timeframe; scope: ChartScope }) {
  const charts = useCharts(timeframe, scope);
  if (charts.isPending) return <PageSpinner label="Loading charts" />;
  if (charts.isError) return <Alert tone="error" title="Failed to load charts">{messageOf(charts.error, '')}</Alert>;
  return <AnalyticsChartsView data={charts.data} />;
}
