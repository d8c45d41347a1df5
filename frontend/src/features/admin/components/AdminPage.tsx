import { useRef, useState, type KeyboardEvent } from 'react';
import { Container } from '../../../components/Layout';
import { Alert, PageHeader } from '../../../components/ui';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { AnalyticsTab } from './AnalyticsTab';
import { AuditTab } from './AuditTab';
import { FilesTab } from './FilesTab';
import { MailTab } from './MailTab';
import { MessagesTab } from './MessagesTab';
import { OverviewTab } from './OverviewTab';
import { UsersTab } from './UsersTab';

const TABS = [
  { id: 'overview', label: 'Overview' },
  { id: 'users', label: 'User Management' },
  { id: 'analytics', label: 'Analytics' },
  { id: 'files', label: 'File Management' },
  { id: 'messages', label: 'Messages' },
  { id: 'mail', label: 'Mail' },
  { id: 'audit', label: 'Audit' },
] as const;
type TabId = (typeof TABS)[number]['id'];

export default function AdminPage() {
  const { user } = useAuth();
  const [tab, setTab] = useState<TabId>('overview');
  const refs = useRef<(HTMLButtonElement | null)[]>([]);

  if (user?.role !== 'ADMIN') {
    return (
      <Container narrow>
        <Alert tone="error" page title="Access Denied - You need admin privileges to access this page." />
      </Container>
    );
  }

  const onKey = (e: KeyboardEvent, index: number) => {
    const delta = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    if (!delta) return;
    e.preventDefault();
    const next = (index + delta + TABS.length) % TABS.length;
    setTab(TABS[next].id);
    refs.current[next]?.focus();
  };

  return (
    <Container>
      <PageHeader title="Admin" subtitle="Users, usage and the processing queue." />
      <div role="tablist" aria-label="Admin sections" className="-mx-4 flex gap-1 overflow-x-auto border-b border-slate-200 px-4 sm:mx-0 sm:px-0">
        {TABS.map((t, i) => (
          <button key={t.id} ref={(el) => { refs.current[i] = el; }} role="tab" type="button" id={`tab-${t.id}`}
            aria-selected={tab === t.id} aria-controls={`panel-${t.id}`} tabIndex={tab === t.id ? 0 : -1}
            onClick={() => setTab(t.id)} onKeyDown={(e) => onKey(e, i)}
            className={`whitespace-nowrap border-b-2 px-4 py-3 text-sm font-medium transition-colors ${tab === t.id ? 'border-brand-700 text-brand-800' : 'border-transparent text-slate-500 hover:text-slate-800'}`}>
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="pt-6">
        {tab === 'overview' && <OverviewTab />}
        {tab === 'users' && <UsersTab currentUserId={user.id} />}
        {tab === 'analytics' && <AnalyticsTab />}
        {tab === 'files' && <FilesTab />}
        {tab === 'messages' && <MessagesTab />}
        {tab === 'mail' && <MailTab />}
        {tab === 'audit' && <AuditTab />}
      </div>
    </Container>
  );
}
