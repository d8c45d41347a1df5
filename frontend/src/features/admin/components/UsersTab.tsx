import { useCallback, useEffect, useState } from 'react';
import { toast } from 'react-toastify';
import { useQueryClient } from '@tanstack/react-query';
import { ConfirmDialog } from '../../../components/Dialog';
import { Pager } from '../../../components/Pager';
import { DataTable } from '../../../components/DataTable';
import { Alert, PageSpinner } from '../../../components/ui';
import { messageOf } from '../../../lib/api-client';
import { ROLES } from '../../../lib/constants';
import { formatDate } from '../../../lib/format';
import type { Role, RoleFilter, User, UserStatusFilter } from '../../../lib/types';
import { USER_STATUSES, adminKeys, resetQuota, updateUserActive, updateUserRole, useUsers, type UserFilters } from '../api';
import { UserKeysPanel } from './UserKeysPanel';

type Pending = { kind: 'role'; user: User; role: Role } | { kind: 'deactivate'; user: User } | { kind: 'quota'; user: User };

const CONFIRM = {
  role: { title: 'Change the role?', confirmLabel: 'Change role' },
  deactivate: { title: 'Deactivate the user?', confirmLabel: 'Deactivate user', danger: true },
  quota: { title: 'Reset the quota?', confirmLabel: 'Reset quota' },
} as const;

export function UsersTab({ currentUserId }: { currentUserId: string }) {
  const queryClient = useQueryClient();
  const [filters, setFilters] = useState<UserFilters>({ page: 1, search: '', role: '', status: 'all' });
  const [searchText, setSearchText] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  const users = useUsers(filters);
  const [keysOf, setKeysOf] = useState<Pick<User, 'id' | 'email'> | null>(null);
  const closeKeys = useCallback(() => setKeysOf(null), []);
  // A role picked in a row's select, applied only by its Change button and the confirmation.
  const [roleDrafts, setRoleDrafts] = useState<Record<string, Role>>({});
  const [pending, setPending] = useState<Pending | null>(null);
  const closePending = useCallback(() => setPending(null), []);

  useEffect(() => {
    const t = setTimeout(() => setFilters((f) => (f.search === searchText ? f : { ...f, search: searchText, page: 1 })), 300);
    return () => clearTimeout(t);
  }, [searchText]);

  const act = async (key: string, fn: () => Promise<unknown>, ok: string, fail: string) => {
    setBusy(key);
    try {
      await fn();
      toast.success(ok);
      await queryClient.invalidateQueries({ queryKey: adminKeys.all });
    } catch (error) {
      toast.error(messageOf(error, fail));
    } finally {
      setBusy(null);
    }
  };

  const onRole = async (u: User, role: Role) => {
    await act(`role-${u.id}`, () => updateUserRole(u.id, role), 'User role updated successfully', 'Failed to update user role');
    setRoleDrafts((d) => {
      const rest = { ...d };
      delete rest[u.id];
      return rest;
    });
  };
  const onActive = (u: User) => act(`active-${u.id}`, () => updateUserActive(u.id, !u.isActive),
    `User ${u.isActive ? 'deactivated' : 'activated'} successfully`, 'Failed to update user status');
  const onQuota = (u: User) => act(`quota-${u.id}`, () => resetQuota(u.id), 'User quota reset successfully', 'Failed to reset quota');
  /** Activating takes effect at once; deactivating asks first. */
  const askActive = (u: User) => (u.isActive ? setPending({ kind: 'deactivate', user: u }) : void onActive(u));
  const confirmPending = async () => {
    if (!pending) return;
    if (pending.kind === 'role') await onRole(pending.user, pending.role);
    else if (pending.kind === 'deactivate') await onActive(pending.user);
    else await onQuota(pending.user);
    setPending(null);
  };

  /** A row's role picker: choosing in the list (arrow keys included) only prepares the change. */
  const rolePicker = (u: User, id: string, selectClass: string) => {
    const draft = roleDrafts[u.id] ?? u.role;
    return (
      <div className="flex gap-2">
        <label className="sr-only" htmlFor={id}>Role of {u.email}</label>
        <select id={id} className={selectClass} value={draft} disabled={busy === `role-${u.id}`}
          onChange={(e) => { const role = e.target.value as Role; setRoleDrafts((d) => ({ ...d, [u.id]: role })); }}>
          {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
        </select>
        <button type="button" className="btn-secondary shrink-0 px-3 py-1.5" disabled={!!busy || draft === u.role}
          onClick={() => setPending({ kind: 'role', user: u, role: draft })} aria-label={`Change role of ${u.email}`}>Change</button>
      </div>
    );
  };

  return (
    <div className="space-y-4">
      <div className="card grid gap-4 p-4 sm:grid-cols-3" role="search">
        <div>
          <label htmlFor="user-search" className="label">Search users</label>
          <input id="user-search" type="search" className="input" placeholder="Email, username or name" value={searchText} onChange={(e) => setSearchText(e.target.value)} />
        </div>
        <div>
          <label htmlFor="role-filter" className="label">Role</label>
          <select id="role-filter" className="input" value={filters.role} onChange={(e) => setFilters((f) => ({ ...f, role: e.target.value as RoleFilter, page: 1 }))}>
            <option value="">All roles</option>
            {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="status-filter" className="label">Status</label>
          <select id="status-filter" className="input" value={filters.status} onChange={(e) => setFilters((f) => ({ ...f, status: e.target.value as UserStatusFilter, page: 1 }))}>
            {USER_STATUSES.map((s) => <option key={s} value={s}>{s.charAt(0).toUpperCase() + s.slice(1)}</option>)}
          </select>
        </div>
      </div>
      <section className="card overflow-hidden" aria-label="Users" aria-busy={users.isFetching}>
        {users.isPending ? <PageSpinner label="Loading users" /> : users.isError ? (
          <div className="p-6"><Alert tone="error" title="Failed to load users">{messageOf(users.error, '')}</Alert>
            <button type="button" className="btn-primary mt-4" onClick={() => users.refetch()}>Retry</button></div>
        ) : users.data.users.length === 0 ? (
          <p className="px-6 py-12 text-center text-slate-600">No users match these filters.</p>
        ) : (
          <DataTable rows={users.data.users} rowKey={(u) => u.id} label="Users table" cardsLabel="Users"
            rowProps={(u) => ({ 'data-testid': `user-row-${u.email}` })}
            cardClassName="space-y-3 px-4 py-4" cardProps={(u) => ({ 'data-testid': `user-card-${u.email}` })}
            card={(u) => (
              <>
                <NameAndEmail user={u} />
                <div className="flex flex-wrap gap-1">
                  <AccountBadges user={u} />
                  <span className="rounded-full bg-slate-100 px-2 py-0.5 text-xs text-slate-600">{u.fileCount ?? 0} files</span>
                </div>
                {rolePicker(u, `role-m-${u.id}`, 'input py-2')}
                <div className="grid grid-cols-2 gap-2">
                  <button type="button" className={u.isActive ? 'btn-secondary py-2' : 'btn-primary py-2'} disabled={!!busy || u.id === currentUserId}
                    onClick={() => askActive(u)} aria-label={`${u.isActive ? 'Deactivate' : 'Activate'} ${u.email}`}>{u.isActive ? 'Deactivate' : 'Activate'}</button>
                  <button type="button" className="btn-secondary py-2" disabled={!!busy} onClick={() => setPending({ kind: 'quota', user: u })} aria-label={`Reset quota of ${u.email}`}>Reset quota</button>
                  <button type="button" className="btn-secondary col-span-2 py-2" onClick={() => setKeysOf(u)} aria-label={`API keys of ${u.email}`}>API keys</button>
                </div>
              </>
            )}
            columns={[
              { key: 'user', header: 'User', cellClassName: 'max-w-[14rem]', cell: (u) => <NameAndEmail user={u} /> },
              { key: 'role', header: 'Role', cell: (u) => rolePicker(u, `role-${u.id}`, 'input w-36 py-1.5') },
              { key: 'status', header: 'Status', cell: (u) => <div className="flex flex-wrap gap-1"><AccountBadges user={u} /></div> },
              { key: 'files', header: 'Files', className: 'hidden lg:table-cell', cellClassName: 'text-slate-700', cell: (u) => u.fileCount ?? 0 },
              { key: 'joined', header: 'Joined', className: 'hidden lg:table-cell', cellClassName: 'whitespace-nowrap text-slate-600', cell: (u) => formatDate(u.createdAt) },
              { key: 'actions', header: 'Actions', className: 'text-right', cellClassName: 'whitespace-nowrap', cell: (u) => (
                <div className="flex justify-end gap-2">
                  <button type="button" className={u.isActive ? 'btn-secondary px-3 py-1.5' : 'btn-primary px-3 py-1.5'} disabled={!!busy || u.id === currentUserId}
                    onClick={() => askActive(u)} aria-label={`${u.isActive ? 'Deactivate' : 'Activate'} ${u.email}`}>{u.isActive ? 'Deactivate' : 'Activate'}</button>
                  <button type="button" className="btn-ghost px-3 py-1.5" disabled={!!busy} onClick={() => setPending({ kind: 'quota', user: u })} aria-label={`Reset quota of ${u.email}`}>Reset quota</button>
                  <button type="button" className="btn-ghost px-3 py-1.5" onClick={() => setKeysOf(u)} aria-label={`API keys of ${u.email}`}>Keys</button>
                </div>
              ) },
            ]} />
        )}
        <Pager pagination={users.data?.pagination} label="User pages" noun="users" onStep={(step) => setFilters((f) => ({ ...f, page: f.page + step }))} />
      </section>
      {keysOf && <UserKeysPanel userId={keysOf.id} email={keysOf.email} onClose={closeKeys} />}
      {pending && (
        <ConfirmDialog {...CONFIRM[pending.kind]} busy={!!busy} onConfirm={() => void confirmPending()} onCancel={closePending}>
          {pending.kind === 'role' ? <>Change the role of <strong>{pending.user.email}</strong> from {pending.user.role} to {pending.role}? Their plan and limits change at once.</>
            : pending.kind === 'deactivate' ? <><strong>{pending.user.email}</strong> will not be able to sign in until the account is activated again.</>
            : <>Set this month’s upload count of <strong>{pending.user.email}</strong> back to zero?</>}
        </ConfirmDialog>
      )}
    </div>
  );
}

/** A user's name (or username) over their email. */
function NameAndEmail({ user }: { user: User }) {
  const name = [user.firstName, user.lastName].filter(Boolean).join(' ');
  return (
    <div className="min-w-0">
      <p className="truncate font-medium text-slate-900">{name || user.username || '—'}</p>
      <p className="truncate text-xs text-slate-500">{user.email}</p>
    </div>
  );
}

/** Active or not, verified or not. */
function AccountBadges({ user }: { user: User }) {
  return (
    <>
      <span className={`rounded-full px-2 py-0.5 text-xs font-semibold ${user.isActive ? 'bg-green-100 text-green-800' : 'bg-slate-200 text-slate-700'}`}>{user.isActive ? 'Active' : 'Inactive'}</span>
      <span className={`rounded-full px-2 py-0.5 text-xs font-semibold ${user.isEmailVerified ? 'bg-blue-100 text-blue-800' : 'bg-yellow-100 text-yellow-800'}`}>{user.isEmailVerified ? 'Verified' : 'Unverified'}</span>
    </>
  );
}
