/**
 * Sanitization policies (/api/policies): the list, one policy, create / replace / duplicate /
 * delete, and each role's default (admins). Also what the editor needs to offer only the
 * actions each rule allows, and the preview of a policy over the user's recent findings.
 */
import { queryOptions, useMutation, useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type ApiBody } from '../../lib/api';
import { ApiError } from '../../lib/api-client';
import type { components } from '../../lib/api-schema';
import { fileStatusQuery } from '../../lib/file-status';
import { formErrors } from '../../lib/form-errors';
import type { FileReport } from '../../lib/types';

type Schemas = components['schemas'];
export type Policy = Schemas['PolicyOut'];
export type PolicyBody = ApiBody<'/api/policies', 'post'>;
export type PolicyDefaults = Schemas['PolicyDefaults'];
export type RuleActions = Schemas['RuleActions'];
export type RuleName = keyof RuleActions;
export type RuleAction = RuleActions[RuleName];
export type PolicyOutput = Policy['output'];

interface RuleInfo<A extends string> {
  label: string;
  /** One line, in plain words: what the content can do to the reader. */
  risk: string;
  /** The actions this rule offers, in the order shown (the API's enum for the rule). */
  actions: readonly A[];
}

/** The rules, in the editor's order; each offers exactly the actions its API enum has. */
export const RULES: { [K in RuleName]: RuleInfo<RuleActions[K]> } = {
  macros: {
    label: 'Macros and scripts',
    risk: 'Code that runs inside Office documents: the most common way a document installs malware.',
    actions: ['remove', 'refuse'],
  },
  javascript: {
    label: 'JavaScript and PDF actions',
    risk: 'Scripts and automatic actions that run when a PDF is opened or clicked.',
    actions: ['remove', 'refuse'],
  },
  embeddedFiles: {
    label: 'Embedded files and OLE objects',
    risk: 'Other files hidden inside the document, which may themselves be dangerous.',
    actions: ['remove', 'sanitize', 'keep', 'refuse'],
  },
  externalReferences: {
    label: 'External references and remote templates',
    risk: 'Content fetched from elsewhere when the file opens: it can track the reader or load an attack.',
    actions: ['remove', 'keep', 'refuse'],
  },
  hyperlinks: {
    label: 'Hyperlinks',
    risk: 'Clickable links that may lead to phishing or malicious sites.',
    actions: ['remove', 'keep', 'refuse'],
  },
  reviewData: {
    label: 'Comments and tracked changes',
    risk: 'Earlier wording, reviewers’ remarks and names that the author may not mean to share.',
    actions: ['remove', 'anonymise', 'keep', 'refuse'],
  },
  documentMetadata: {
    label: 'Document metadata',
    risk: 'Author, company, software and dates that reveal who made the file and how.',
    actions: ['remove', 'keep', 'refuse'],
  },
  imageMetadata: {
    label: 'Image metadata',
    risk: 'Camera details and GPS positions in pictures that can reveal where a photo was taken.',
    actions: ['remove', 'keep', 'refuse'],
  },
  hiddenContent: {
    label: 'Hidden content',
    risk: 'Hidden sheets, slides and text that the reader does not see but the file still carries.',
    actions: ['remove', 'keep', 'refuse'],
  },
  formFields: {
    label: 'Form fields',
    risk: 'Fillable fields that can carry data out of the document or hide scripts.',
    actions: ['remove', 'keep', 'refuse'],
  },
  coverArt: {
    label: 'Cover pictures',
    risk: 'Pictures embedded in audio and video files, which may reveal more than the recording (a face, a place, a private photo).',
    actions: ['remove', 'keep', 'refuse'],
  },
  chapters: {
    label: 'Chapters',
    risk: 'Chapter marks of audio and video files, whose titles may name people, places or topics the recording does not show.',
    actions: ['remove', 'keep', 'refuse'],
  },
  encryptedContent: {
    label: 'Encrypted content',
    risk: 'Files, archive members and mail (S/MIME, PGP) that no password opened, so nothing could look inside. Hold back keeps them out of the copy; delivering them unchanged lets whatever they hide reach the reader. Either way the verdict says they were not inspected.',
    actions: ['hold', 'pass'],
  },
};
export const RULE_NAMES = Object.keys(RULES) as RuleName[];

/** The label of each action, as a radio button shows it. */
export const ACTION_LABELS: Record<RuleAction, string> = {
  remove: 'Remove',
  keep: 'Keep',
  refuse: 'Refuse the file',
  sanitize: 'Sanitize inside',
  anonymise: 'Keep, authors anonymised',
  hold: 'Hold back',
  pass: 'Deliver unchanged, not inspected',
};

export const OUTPUTS: { value: PolicyOutput; label: string; help: string }[] = [
  { value: 'same', label: 'Same format', help: 'The clean copy keeps the input’s format.' },
  { value: 'pdf', label: 'PDF rebuilt from pixels', help: 'Every page drawn again as a picture: nothing active can survive, but no text is kept (no search, copy or screen reader). Spreadsheets come back as a new workbook of their cell values (no formulas, charts or pictures).' },
  { value: 'pdf+ocr', label: 'PDF rebuilt from pixels, with OCR text', help: 'The same, with an invisible text layer so it can be searched and copied: a page\'s own text where every letter of it is visible in the picture, else the text recognised again by OCR (which may contain errors). Spreadsheets come back as a new workbook of their cell values.' },
];

/** A new policy starts from the built-in basic policy's decisions. */
export function blankPolicy(basic?: Policy): PolicyBody {
  return {
    name: '',
    description: '',
    rules: { ...(basic?.rules ?? DEFAULT_RULES) },
    allowedTypes: null,
    output: 'same',
    maxPages: null,
    scope: 'personal',
  };
}
const DEFAULT_RULES: RuleActions = {
  macros: 'remove', javascript: 'remove', embeddedFiles: 'remove', externalReferences: 'remove', hyperlinks: 'keep',
  reviewData: 'remove', documentMetadata: 'remove', imageMetadata: 'remove', hiddenContent: 'keep', formFields: 'keep',
  coverArt: 'remove', chapters: 'remove', encryptedContent: 'hold',
};

/** The body that replaces `p` (PUT), or starts from it. */
export function bodyOf(p: Policy): PolicyBody {
  return {
    name: p.name, description: p.description ?? '', rules: { ...p.rules }, allowedTypes: p.allowedTypes ?? null,
    output: p.output, maxPages: p.maxPages ?? null, scope: p.scope,
  };
}

/** What the form sends: blank description and empty type lists become null. */
export function cleanBody(body: PolicyBody): PolicyBody {
  const types = (body.allowedTypes ?? []).map((t) => t.trim()).filter(Boolean);
  return {
    ...body,
    name: body.name.trim(),
    description: body.description?.trim() ? body.description.trim() : null,
    allowedTypes: types.length ? types : null,
  };
}

/**
 * The 422 message names each bad field ("Invalid request: rules.macros: Input should be ...;
 * name: ..."): split it into field -> message so the editor shows each next to its field.
 * Fields are `name`, `description`, `rules.<rule>`, `allowedTypes`, `output`, `maxPages`,
 * `scope`; anything else goes under `form`.
 */
export function fieldErrors(error: unknown): Record<string, string> {
  // The server names each field (`fields`, messages in plain words): use those.
  if (error instanceof ApiError && error.status === 422 && error.fields?.length) {
    const known = ['name', 'description', 'allowedTypes', 'output', 'maxPages', 'scope', ...RULE_NAMES.map((r) => `rules.${r}`)];
    return formErrors(error, known, '') as Record<string, string>;
  }
  if (!(error instanceof ApiError) || error.status !== 422 || !error.serverMessage) return {};
  const text = error.serverMessage.replace(/^Invalid (request|policy):\s*/, '');
  const out: Record<string, string> = {};
  for (const part of text.split(/;\s+/)) {
    const m = /^([A-Za-z][\w.]*):\s*(.+)$/.exec(part.trim());
    const path = m ? m[1].split('.') : [];
    const field = !m ? 'form'
      : path[0] === 'rules' && path[1] ? `rules.${path[1]}`
        : ['name', 'description', 'allowedTypes', 'output', 'maxPages', 'scope'].includes(path[0]) ? path[0] : 'form';
    const message = m && field !== 'form' ? m[2] : part.trim();
    out[field] = out[field] ? `${out[field]}; ${message}` : message;
  }
  return out;
}

// -- Queries and mutations -------------------------------------------------------------------
export const policyKeys = {
  all: ['policies'] as const,
  list: () => [...policyKeys.all, 'list'] as const,
  defaults: () => [...policyKeys.all, 'defaults'] as const,
  recentFiles: (userId: string | undefined) => [...policyKeys.all, 'recent-files', userId] as const,
  findingRules: () => [...policyKeys.all, 'finding-rules'] as const,
};

export const fetchPolicies = async () => (await api('get', '/api/policies')).data;
export const fetchPolicyDefaults = async () => (await api('get', '/api/policies/defaults')).data;

/** Every policy the caller may use: the built-ins, the organisation's and its own. */
export const policiesQuery = () => queryOptions({ queryKey: policyKeys.list(), queryFn: fetchPolicies, staleTime: 30_000 });
/** Each role's default policy id (admins only). */
export const policyDefaultsQuery = () => queryOptions({ queryKey: policyKeys.defaults(), queryFn: fetchPolicyDefaults, staleTime: 0 });

export const usePolicies = (enabled = true) => useQuery({ ...policiesQuery(), enabled });
export const usePolicyDefaults = (enabled: boolean) => useQuery({ ...policyDefaultsQuery(), enabled });

export const createPolicy = async (body: PolicyBody) => (await api('post', '/api/policies', { body })).data;
export const updatePolicy = async ({ id, body }: { id: string; body: PolicyBody }) =>
  (await api('put', '/api/policies/{policy_id}', { path: { policy_id: id }, body })).data;
export const deletePolicy = async (id: string) =>
  (await api('delete', '/api/policies/{policy_id}', { path: { policy_id: id } })).data;
export const duplicatePolicy = async (id: string) =>
  (await api('post', '/api/policies/{policy_id}/duplicate', { path: { policy_id: id } })).data;
export const setPolicyDefaults = async (body: ApiBody<'/api/policies/defaults', 'put'>) =>
  (await api('put', '/api/policies/defaults', { body })).data;

/** A write to the policies; the list (and defaults) are fetched again afterwards. */
function usePolicyMutation<A, R>(fn: (arg: A) => Promise<R>) {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: fn, onSuccess: () => queryClient.invalidateQueries({ queryKey: policyKeys.all }) });
}
export const useCreatePolicy = () => usePolicyMutation(createPolicy);
export const useUpdatePolicy = () => usePolicyMutation(updatePolicy);
export const useDeletePolicy = () => usePolicyMutation(deletePolicy);
export const useDuplicatePolicy = () => usePolicyMutation(duplicatePolicy);
export const useSetPolicyDefaults = () => usePolicyMutation(setPolicyDefaults);

/** The policies an upload may name: built-ins only when the plan has their mode, and the
 * pixel-rebuilding outputs only when it has advanced mode (the server answers 403 otherwise). */
export function usablePolicies(policies: Policy[] | undefined, modes: readonly string[]): Policy[] {
  const advanced = modes.includes('advanced');
  return (policies ?? []).filter((p) => (p.builtIn ? modes.includes(p.id) : p.output === 'same' || advanced));
}

// -- Preview over recent findings ------------------------------------------------------------
/** How many of the user's latest completed files the preview reads. */
export const PREVIEW_FILES = 10;

/** Which rule decides each finding kind (the engine's table, published by the API): one rule,
 * two when it depends on the file (the first is the usual one), none for structure. */
export type RuleOfKind = Record<string, readonly RuleName[]>;

export const findingRulesQuery = () => queryOptions({
  queryKey: policyKeys.findingRules(),
  queryFn: async () => (await api('get', '/api/policies/kinds')).data.kinds as RuleOfKind,
  staleTime: Infinity,
});

export interface RecentFile {
  id: string;
  name: string;
  /** Finding kinds in this file, with how many of each. */
  kinds: Record<string, number>;
}

/** The user's latest completed files with their findings (history call, then each file's status call). */
export function useRecentFindings(userId: string | undefined) {
  const history = useQuery({
    queryKey: policyKeys.recentFiles(userId),
    queryFn: async () => (await api('get', '/api/users/{user_id}/files', {
      path: { user_id: userId ?? '' },
      query: { page: 1, limit: PREVIEW_FILES, status: 'COMPLETED', sortBy: 'createdAt', sortOrder: 'desc' },
    })).data,
    enabled: !!userId,
    // Fetched again each time the page opens: a file cleaned a moment ago belongs in the preview.
    staleTime: 0,
  });
  const files = history.data?.files ?? [];
  const statuses = useQueries({ queries: files.map((f) => fileStatusQuery(f.id)) });
  const rulesOfKinds = useQuery({ ...findingRulesQuery(), enabled: !!userId });
  const pending = history.isPending || rulesOfKinds.isPending || statuses.some((s) => s.isPending);
  const recent: RecentFile[] = [];
  statuses.forEach((s, i) => {
    const file = s.data?.file;
    if (!file) return;
    const kinds: Record<string, number> = {};
    const report: FileReport | null | undefined = file.report;
    for (const f of report?.findings ?? []) kinds[f.kind] = (kinds[f.kind] ?? 0) + 1;
    recent.push({ id: files[i].id, name: file.originalName, kinds });
  });
  return { recent, ruleOfKind: rulesOfKinds.data ?? {}, pending: !!userId && pending,
    isError: history.isError || rulesOfKinds.isError };
}

export interface KindPreview {
  kind: string;
  count: number;
  files: number;
  rule: RuleName | null;
  /** What the policy would do with it: null when the rule is not known. */
  outcome: 'removed' | 'kept' | 'refused' | null;
}

export interface PolicyPreview {
  kinds: KindPreview[];
  /** Per rule: findings removed, kept, and files that would have been refused. */
  rules: Partial<Record<RuleName, { removed: number; kept: number; refusedFiles: number }>>;
  refusedFiles: number;
  files: number;
}

function outcomeOf(action: RuleAction): 'removed' | 'kept' | 'refused' {
  switch (action) {
    case 'remove': case 'hold': return 'removed';
    case 'refuse': return 'refused';
    case 'keep': case 'sanitize': case 'anonymise': case 'pass': return 'kept';
  }
}

/** What `rules` would have done with the recent files' findings (kinds no rule decides, such as
 * the file's structure, are listed without an outcome). */
export function previewPolicy(rules: RuleActions, recent: RecentFile[], ruleOfKind: RuleOfKind): PolicyPreview {
  const byKind = new Map<string, KindPreview>();
  const perRule: PolicyPreview['rules'] = {};
  let refusedFiles = 0;
  for (const file of recent) {
    const refusedBy = new Set<RuleName>();
    for (const [kind, count] of Object.entries(file.kinds)) {
      const rule = Object.hasOwn(ruleOfKind, kind) ? (ruleOfKind[kind][0] ?? null) : null;
      const outcome = rule ? outcomeOf(rules[rule]) : null;
      const entry = byKind.get(kind) ?? { kind, count: 0, files: 0, rule, outcome };
      entry.count += count;
      entry.files += 1;
      byKind.set(kind, entry);
      if (!rule || !outcome) continue;
      const tally = (perRule[rule] ??= { removed: 0, kept: 0, refusedFiles: 0 });
      if (outcome === 'removed') tally.removed += count;
      else if (outcome === 'kept') tally.kept += count;
      else refusedBy.add(rule);
    }
    for (const rule of refusedBy) (perRule[rule] ??= { removed: 0, kept: 0, refusedFiles: 0 }).refusedFiles += 1;
    if (refusedBy.size) refusedFiles += 1;
  }
  const kinds = [...byKind.values()].sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind));
  return { kinds, rules: perRule, refusedFiles, files: recent.length };
}
