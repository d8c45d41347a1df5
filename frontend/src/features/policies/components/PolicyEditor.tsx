import { useState, type FormEvent } from 'react';
import { Alert, Spinner } from '../../../components/ui';
import {
  ACTION_LABELS, OUTPUTS, RULES, RULE_NAMES, cleanBody, type PolicyBody, type RuleAction, type RuleName,
} from '../api';

export interface PolicyEditorProps {
  title: string;
  initial: PolicyBody;
  /** Admins may publish the policy organisation-wide. */
  isAdmin: boolean;
  /** The API's field errors of the last save (`fieldErrors`). */
  errors: Record<string, string>;
  saving: boolean;
  onSave: (body: PolicyBody) => void;
  onCancel: () => void;
  /** Called with the rules as they change, for the preview. */
  onRulesChange?: (rules: PolicyBody['rules']) => void;
}

const errorId = (field: string) => `policy-error-${field.replace('.', '-')}`;

function FieldError({ field, errors }: { field: string; errors: Record<string, string> }) {
  if (!errors[field]) return null;
  return <p id={errorId(field)} className="mt-1 text-sm text-red-700" data-testid={`error-${field}`}>{errors[field]}</p>;
}

/** The policy form: name, scope, the ten rules as radio groups, input types, output and pages. */
export function PolicyEditor({ title, initial, isAdmin, errors, saving, onSave, onCancel, onRulesChange }: PolicyEditorProps) {
  const [body, setBody] = useState<PolicyBody>(initial);
  const [types, setTypes] = useState((initial.allowedTypes ?? []).join(', '));
  const [maxPages, setMaxPages] = useState(initial.maxPages != null ? String(initial.maxPages) : '');

  const setRule = (rule: RuleName, action: RuleAction) => {
    const rules = { ...body.rules, [rule]: action };
    setBody({ ...body, rules });
    onRulesChange?.(rules);
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const pages = maxPages.trim() === '' ? null : Number(maxPages);
    onSave(cleanBody({ ...body, allowedTypes: types.split(',').map((t) => t.trim()), maxPages: pages }));
  };

  const described = (field: string, help?: string) =>
    [help, errors[field] ? errorId(field) : undefined].filter(Boolean).join(' ') || undefined;

  return (
    <form className="card p-5" onSubmit={submit} aria-labelledby="policy-editor-title" noValidate>
      <h2 id="policy-editor-title" className="text-lg font-semibold text-slate-900">{title}</h2>
      {errors.form && <div className="mt-3"><Alert tone="error" title="The policy was not saved">{errors.form}</Alert></div>}
      <div className="mt-4 grid gap-4 sm:grid-cols-2">
        <div>
          <label htmlFor="policy-name" className="label">Name</label>
          <input id="policy-name" className="input" value={body.name} maxLength={100} required
            aria-invalid={!!errors.name} aria-describedby={described('name')}
            onChange={(e) => setBody({ ...body, name: e.target.value })} />
          <FieldError field="name" errors={errors} />
        </div>
        <div>
          <label htmlFor="policy-description" className="label">Description (optional)</label>
          <input id="policy-description" className="input" value={body.description ?? ''}
            aria-invalid={!!errors.description} aria-describedby={described('description')}
            onChange={(e) => setBody({ ...body, description: e.target.value })} />
          <FieldError field="description" errors={errors} />
        </div>
      </div>
      {isAdmin && (
        <div className="mt-4">
          <label className="flex items-center gap-2 text-sm text-slate-700">
            <input type="checkbox" checked={body.scope === 'organisation'}
              onChange={(e) => setBody({ ...body, scope: e.target.checked ? 'organisation' : 'personal' })} />
            Organisation-wide: every account may use this policy
          </label>
          <FieldError field="scope" errors={errors} />
        </div>
      )}

      <h3 className="mt-6 font-semibold text-slate-900">What to do with each kind of content</h3>
      <div className="mt-3 grid gap-3 lg:grid-cols-2">
        {RULE_NAMES.map((rule) => {
          const info = RULES[rule];
          const field = `rules.${rule}`;
          return (
            <fieldset key={rule} className={`rounded-xl border p-4 ${errors[field] ? 'border-red-300' : 'border-slate-200'}`}
              aria-describedby={described(field, `risk-${rule}`)} data-testid={`rule-${rule}`}>
              <legend className="px-1 text-sm font-semibold text-slate-900">{info.label}</legend>
              <p id={`risk-${rule}`} className="text-sm text-slate-600">{info.risk}</p>
              <div className="mt-2 flex flex-wrap gap-x-4 gap-y-1">
                {(info.actions as readonly RuleAction[]).map((action) => (
                  <label key={action} className="flex items-center gap-1.5 text-sm text-slate-800">
                    <input type="radio" name={`rule-${rule}`} value={action} checked={body.rules[rule] === action}
                      onChange={() => setRule(rule, action)} />
                    {ACTION_LABELS[action]}
                  </label>
                ))}
              </div>
              <FieldError field={field} errors={errors} />
            </fieldset>
          );
        })}
      </div>

      <div className="mt-6 grid gap-4 sm:grid-cols-2">
        <div>
          <label htmlFor="policy-types" className="label">Allowed input types</label>
          <input id="policy-types" className="input" value={types} placeholder="e.g. pdf, docx, image"
            aria-invalid={!!errors.allowedTypes} aria-describedby={described('allowedTypes', 'policy-types-help')}
            onChange={(e) => setTypes(e.target.value)} />
          <p id="policy-types-help" className="mt-1 text-xs text-slate-500">Families or kinds, separated by commas. Empty: every supported type.</p>
          <FieldError field="allowedTypes" errors={errors} />
        </div>
        <div>
          <label htmlFor="policy-pages" className="label">Most pages to rebuild</label>
          <input id="policy-pages" className="input" type="number" min={1} inputMode="numeric" value={maxPages}
            aria-invalid={!!errors.maxPages} aria-describedby={described('maxPages', 'policy-pages-help')}
            onChange={(e) => setMaxPages(e.target.value)} />
          <p id="policy-pages-help" className="mt-1 text-xs text-slate-500">Only for PDF output. Empty: the server’s limit.</p>
          <FieldError field="maxPages" errors={errors} />
        </div>
      </div>
      <fieldset className="mt-4" aria-describedby={described('output')}>
        <legend className="label">Output</legend>
        <div className="space-y-1">
          {OUTPUTS.map((o) => (
            <label key={o.value} className="flex items-start gap-2 text-sm text-slate-800">
              <input type="radio" name="policy-output" value={o.value} checked={body.output === o.value} className="mt-1"
                onChange={() => setBody({ ...body, output: o.value })} />
              {o.label} <span className="text-slate-500">— {o.help}</span>
            </label>
          ))}
        </div>
        <FieldError field="output" errors={errors} />
      </fieldset>

      <div className="mt-6 flex gap-2">
        <button type="submit" className="btn-primary" disabled={saving}>{saving && <Spinner label="Saving" className="h-4 w-4" />}Save policy</button>
        <button type="button" className="btn-ghost" onClick={onCancel} disabled={saving}>Cancel</button>
      </div>
    </form>
  );
}
