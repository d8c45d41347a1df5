import { useState } from 'react';
import { toast } from 'react-toastify';
import { Container } from '../../../components/Layout';
import { Alert, PageHeader, PageSpinner, Spinner } from '../../../components/ui';
import { Link } from 'react-router-dom';
import { messageOf } from '../../../lib/api-client';
import { useAuth } from '../../../lib/auth/AuthProvider';
import { formatDateTime } from '../../../lib/format';
import { ROLES } from '../../../lib/constants';
import { can, isPlanRequired, useCan } from '../../../lib/plans';
import type { User } from '../../../lib/types';
import {
  OUTPUTS, RULES, blankPolicy, bodyOf, fieldErrors, useCreatePolicy, useDeletePolicy,
  useDuplicatePolicy, usePolicies, usePolicyDefaults, useRecentFindings, useSetPolicyDefaults, useUpdatePolicy,
  type Policy, type PolicyBody, type PolicyDefaults, type RuleActions,
} from '../api';
import { PolicyEditor } from './PolicyEditor';
import { PolicyPreview } from './PolicyPreview';

interface Editing {
  /** The policy replaced; none for a new one. */
  id?: string;
  title: string;
  body: PolicyBody;
}

/** Whether `user` may change or delete `p` (the server decides too): its plan has policy
 * authoring; organisation-wide policies are the admins' (an admin power, not a plan). */
export function canEdit(p: Policy, user: Pick<User, 'id' | 'role' | 'plan'>): boolean {
  if (p.builtIn || !can(user, 'policyAuthoring')) return false;
  return p.scope === 'organisation' ? user.role === 'ADMIN' : p.ownerId === user.id;
}

export default function PoliciesPage() {
  const { user } = useAuth();
  const [planRequired, setPlanRequired] = useState(false);
  const allowed = useCan('policyAuthoring') && !planRequired;
  const policies = usePolicies(allowed);
  const create = useCreatePolicy();
  const update = useUpdatePolicy();
  const remove = useDeletePolicy();
  const duplicate = useDuplicatePolicy();
  const [editing, setEditing] = useState<Editing | null>(null);
  const [rules, setRules] = useState<RuleActions | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const recent = useRecentFindings(allowed ? user?.id : undefined);

  if (!user || !allowed) {
    return (
      <Container narrow>
        <Alert tone="error" title="Custom policies are not part of your plan.">
          <Link to="/pricing" className="link font-medium">See the plans</Link>
        </Alert>
      </Container>
    );
  }
  const isAdmin = user.role === 'ADMIN';

  const open = (next: Editing) => {
    setErrors({});
    setEditing(next);
    setRules(next.body.rules as RuleActions);
  };
  const close = () => { setEditing(null); setErrors({}); };

  const save = async (body: PolicyBody) => {
    setErrors({});
    try {
      if (editing?.id) await update.mutateAsync({ id: editing.id, body });
      else await create.mutateAsync(body);
      toast.success(editing?.id ? 'Policy updated' : 'Policy created');
      close();
    } catch (error) {
      if (isPlanRequired(error)) { setPlanRequired(true); return; }
      // Each error next to its field, the rest at the top of the editor (never only a toast).
      const found = fieldErrors(error);
      setErrors(Object.keys(found).length ? found : { form: messageOf(error, 'Failed to save the policy') });
    }
  };

  const onDuplicate = async (p: Policy) => {
    try {
      const copy = await duplicate.mutateAsync(p.id);
      toast.success(`Duplicated as “${copy?.name ?? p.name}”`);
    } catch (error) {
      toast.error(messageOf(error, 'Failed to duplicate the policy'));
    }
  };

  const onDelete = async (p: Policy) => {
    if (!window.confirm(`Delete the policy “${p.name}”? Files already cleaned with it keep their record.`)) return;
    try {
      await remove.mutateAsync(p.id);
      toast.success('Policy deleted');
      if (editing?.id === p.id) close();
    } catch (error) {
      toast.error(messageOf(error, 'Failed to delete the policy'));
    }
  };

  const list = policies.data ?? [];
  const basic = list.find((p) => p.builtIn && p.id === 'basic');

  return (
    <Container>
      <PageHeader title="Policies" subtitle="Decide, for each kind of content, whether it is removed, kept or makes the file refused."
        actions={!editing && <button type="button" className="btn-primary" onClick={() => open({ title: 'New policy', body: blankPolicy(basic) })}>New policy</button>} />
      {editing && (
        <div className="mb-8 grid gap-6 xl:grid-cols-3">
          <div className="xl:col-span-2">
            <PolicyEditor key={editing.id ?? 'new'} title={editing.title} initial={editing.body} isAdmin={isAdmin} errors={errors}
              saving={create.isPending || update.isPending} onSave={(b) => void save(b)} onCancel={close}
              onRulesChange={(r) => setRules(r as RuleActions)} />
          </div>
          <div>
            <PolicyPreview rules={rules ?? (editing.body.rules as RuleActions)} recent={recent.recent}
              ruleOfKind={recent.ruleOfKind} pending={recent.pending} />
          </div>
        </div>
      )}

      <section className="card overflow-hidden" aria-label="Policies" aria-busy={policies.isFetching}>
        {policies.isPending ? <PageSpinner label="Loading policies" /> : policies.isError ? (
          <div className="p-6"><Alert tone="error" title="Failed to load policies">{messageOf(policies.error, '')}</Alert></div>
        ) : (
          <ul className="divide-y divide-slate-100" data-testid="policy-list">
            {list.map((p) => (
              <li key={p.id} className="flex flex-col gap-3 px-5 py-4 lg:flex-row lg:items-center lg:justify-between" data-testid="policy-row">
                <div className="min-w-0">
                  <p className="flex flex-wrap items-center gap-2 font-medium text-slate-900">
                    {p.name}
                    {p.builtIn && <Badge tone="slate">Built-in</Badge>}
                    {!p.builtIn && p.scope === 'organisation' && <Badge tone="brand">Organisation-wide</Badge>}
                    <span className="text-xs font-normal text-slate-500">version {p.version}</span>
                  </p>
                  {p.description && <p className="mt-0.5 text-sm text-slate-600">{p.description}</p>}
                  <p className="mt-1 text-xs text-slate-500">{summary(p)}{p.updatedAt ? ` · updated ${formatDateTime(p.updatedAt)}` : ''}</p>
                </div>
                <div className="flex shrink-0 flex-wrap gap-2">
                  {canEdit(p, user) && (
                    <button type="button" className="btn-secondary px-3 py-1.5" aria-label={`Edit ${p.name}`}
                      onClick={() => open({ id: p.id, title: `Edit “${p.name}”`, body: bodyOf(p) })}>Edit</button>
                  )}
                  <button type="button" className="btn-secondary px-3 py-1.5" aria-label={`Duplicate ${p.name}`}
                    disabled={duplicate.isPending} onClick={() => void onDuplicate(p)}>Duplicate</button>
                  {canEdit(p, user) && (
                    <button type="button" className="btn-ghost px-3 py-1.5 text-red-700" aria-label={`Delete ${p.name}`}
                      disabled={remove.isPending} onClick={() => void onDelete(p)}>Delete</button>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>

      {isAdmin && policies.isSuccess && <RoleDefaults policies={list} />}
    </Container>
  );
}

function Badge({ tone, children }: { tone: 'slate' | 'brand'; children: string }) {
  const style = tone === 'brand' ? 'bg-brand-50 text-brand-800 ring-brand-600/20' : 'bg-slate-100 text-slate-700 ring-slate-500/20';
  return <span className={`inline-flex rounded-full px-2 py-0.5 text-xs font-semibold ring-1 ring-inset ${style}`}>{children}</span>;
}

/** "Output: Same format · refuses macros · keeps hyperlinks ...": the decisions away from removal. */
function summary(p: Policy): string {
  const output = OUTPUTS.find((o) => o.value === p.output)?.label ?? p.output;
  const notes = (Object.keys(RULES) as (keyof RuleActions)[])
    .filter((r) => p.rules[r] !== 'remove')
    .map((r) => `${RULES[r].label.toLowerCase()}: ${p.rules[r]}`);
  return [`Output: ${output}`, ...notes].join(' · ');
}

/** Admins: the policy each role's uploads use when they name none. */
function RoleDefaults({ policies }: { policies: Policy[] }) {
  const defaults = usePolicyDefaults(true);
  const save = useSetPolicyDefaults();
  const [draft, setDraft] = useState<Partial<PolicyDefaults>>({});
  const shared = policies.filter((p) => p.builtIn || p.scope === 'organisation');
  const current = defaults.data;

  const submit = async () => {
    if (!current) return;
    const changed = Object.fromEntries(ROLES.filter((r) => draft[r] && draft[r] !== current[r]).map((r) => [r, draft[r]]));
    try {
      await save.mutateAsync(changed);
      setDraft({});
      toast.success('Default policies updated');
    } catch (error) {
      toast.error(messageOf(error, 'Failed to update the default policies'));
    }
  };

  return (
    <section className="card mt-8 p-5" aria-labelledby="defaults-title">
      <h2 id="defaults-title" className="text-lg font-semibold text-slate-900">Default policy of each role</h2>
      <p className="mt-1 text-sm text-slate-600">Used when an upload names no policy. Built-in and organisation-wide policies only.</p>
      {defaults.isPending ? <div className="mt-4"><Spinner label="Loading defaults" /></div> : defaults.isError || !current ? (
        <div className="mt-4"><Alert tone="error">{messageOf(defaults.error, 'Failed to load the default policies')}</Alert></div>
      ) : (
        <div className="mt-4 grid gap-4 sm:grid-cols-2 lg:grid-cols-4">
          {ROLES.map((role) => (
            <div key={role}>
              <label htmlFor={`default-${role}`} className="label">{role}</label>
              <select id={`default-${role}`} className="input" value={draft[role] ?? current[role]}
                onChange={(e) => setDraft({ ...draft, [role]: e.target.value })}>
                {!shared.some((p) => p.id === current[role]) && <option value={current[role]}>{current[role]}</option>}
                {shared.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
              </select>
            </div>
          ))}
        </div>
      )}
      <button type="button" className="btn-primary mt-4" disabled={save.isPending || !current || !ROLES.some((r) => draft[r] && draft[r] !== current[r])}
        onClick={() => void submit()}>Save defaults</button>
    </section>
  );
}
