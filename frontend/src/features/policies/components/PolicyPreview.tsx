import { useMemo } from 'react';
import { Alert, Spinner } from '../../../components/ui';
import { PREVIEW_FILES, RULES, RULE_NAMES, previewPolicy, type RecentFile, type RuleActions, type RuleOfKind } from '../api';

const OUTCOME_TEXT = { removed: 'removed', kept: 'kept', refused: 'file refused' } as const;

/** What the policy being edited would have done with the findings of the user's latest files. */
export function PolicyPreview({ rules, recent, ruleOfKind, pending }: {
  rules: RuleActions; recent: RecentFile[]; ruleOfKind: RuleOfKind; pending: boolean;
}) {
  const preview = useMemo(() => previewPolicy(rules, recent, ruleOfKind), [rules, recent, ruleOfKind]);
  const ruled = RULE_NAMES.filter((r) => preview.rules[r]);
  const unknown = preview.kinds.filter((k) => !k.rule);

  return (
    <section className="card p-5" aria-labelledby="preview-title" data-testid="policy-preview">
      <h2 id="preview-title" className="text-lg font-semibold text-slate-900">Preview on your last files</h2>
      <p className="mt-1 text-sm text-slate-600">
        What this policy would have done with the content found in your last {PREVIEW_FILES} cleaned files.
      </p>
      {pending ? <div className="mt-4 text-brand-700"><Spinner label="Loading your recent files" /></div>
        : preview.files === 0 ? <p className="mt-4 text-sm text-slate-600">No cleaned files yet: upload some to see a preview.</p>
          : (
            <>
              <p className="mt-4 text-sm text-slate-800" data-testid="preview-summary">
                {preview.refusedFiles > 0
                  ? `${preview.refusedFiles} of ${preview.files} files would have been refused.`
                  : preview.files === 1 ? 'Your last file would not have been refused.' : `None of your ${preview.files} files would have been refused.`}
              </p>
              {ruled.length > 0 && (
                <table className="mt-3 w-full text-sm">
                  <caption className="sr-only">Findings per rule</caption>
                  <thead className="text-left text-xs uppercase tracking-wide text-slate-500">
                    <tr><th scope="col" className="py-1">Rule</th><th scope="col">Removed</th><th scope="col">Kept</th><th scope="col">Files refused</th></tr>
                  </thead>
                  <tbody className="divide-y divide-slate-100">
                    {ruled.map((r) => {
                      const t = preview.rules[r];
                      return (
                        <tr key={r} data-testid={`preview-rule-${r}`}>
                          <th scope="row" className="py-1.5 pr-2 text-left font-medium text-slate-800">{RULES[r].label}</th>
                          <td>{t?.removed ?? 0}</td><td>{t?.kept ?? 0}</td><td>{t?.refusedFiles ?? 0}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              )}
              <h3 className="mt-5 text-sm font-semibold text-slate-900">Findings by kind</h3>
              <ul className="mt-2 space-y-1 text-sm">
                {preview.kinds.map((k) => (
                  <li key={k.kind} className="flex flex-wrap justify-between gap-2" data-testid={`preview-kind-${k.kind}`}>
                    <span><code className="text-xs">{k.kind}</code> × {k.count} <span className="text-slate-500">({k.files} {k.files === 1 ? 'file' : 'files'})</span></span>
                    <span className="text-slate-600">
                      {k.rule && k.outcome ? <>{RULES[k.rule].label}: <strong>{OUTCOME_TEXT[k.outcome]}</strong></> : 'no policy rule decides this'}
                    </span>
                  </li>
                ))}
              </ul>
              {unknown.length > 0 && (
                <div className="mt-4">
                  <Alert tone="info">
                    The server does not yet say which rule decides each kind of finding, so kinds whose rule is
                    not plain from their name are listed without an outcome.
                  </Alert>
                </div>
              )}
            </>
          )}
    </section>
  );
}
