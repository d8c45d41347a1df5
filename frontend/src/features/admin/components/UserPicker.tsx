import { useEffect, useId, useState, type KeyboardEvent } from 'react';
import { Spinner } from '../../../components/ui';
import { useUserPicker } from '../api';

export interface PickedUser {
  id: string;
  email: string;
}

/**
 * Pick one user by typing part of an email, username or name: a combobox over the admin users
 * call (GET /api/users?search=...). Once picked, the user shows as a chip with a button that
 * clears the choice.
 */
export function UserPicker({ label, value, onChange }: { label: string; value: PickedUser | null; onChange: (user: PickedUser | null) => void }) {
  const id = useId();
  const [text, setText] = useState('');
  const [search, setSearch] = useState('');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const matches = useUserPicker(search);
  const options = matches.data ?? [];

  useEffect(() => {
    const t = setTimeout(() => setSearch(text.trim()), 250);
    return () => clearTimeout(t);
  }, [text]);
  useEffect(() => setActive(0), [search]);

  const pick = (user: PickedUser) => {
    onChange({ id: user.id, email: user.email });
    setText('');
    setSearch('');
    setOpen(false);
  };

  if (value) {
    return (
      <div>
        <span className="label" id={`${id}-label`}>{label}</span>
        <div className="flex min-h-[2.5rem] items-center gap-2 rounded-lg border border-slate-300 bg-slate-50 px-3 py-1.5" role="group" aria-labelledby={`${id}-label`}>
          <span className="min-w-0 flex-1 truncate text-sm text-slate-900" data-testid="picked-user" title={value.email}>{value.email}</span>
          <button type="button" className="btn-ghost shrink-0 px-2 py-0.5 text-xs" onClick={() => onChange(null)}>Any user</button>
        </div>
      </div>
    );
  }

  const listId = `${id}-list`;
  const showList = open && search.length > 0;
  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      setOpen(true);
      setActive((i) => Math.min(i + 1, Math.max(options.length - 1, 0)));
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      setActive((i) => Math.max(i - 1, 0));
    } else if (e.key === 'Enter' && showList && options[active]) {
      e.preventDefault();
      pick(options[active]);
    } else if (e.key === 'Escape') {
      setOpen(false);
    }
  };

  return (
    <div className="relative">
      <label htmlFor={`${id}-input`} className="label">{label}</label>
      <input id={`${id}-input`} type="search" className="input" placeholder="Search by email or name" autoComplete="off"
        role="combobox" aria-expanded={showList} aria-controls={listId} aria-autocomplete="list"
        aria-activedescendant={showList && options[active] ? `${id}-opt-${options[active].id}` : undefined}
        value={text} onChange={(e) => { setText(e.target.value); setOpen(true); }} onKeyDown={onKeyDown}
        onFocus={() => setOpen(true)} onBlur={() => setOpen(false)} />
      {showList && (
        <ul id={listId} role="listbox" aria-label={`${label} matches`}
          className="absolute z-30 mt-1 max-h-64 w-full min-w-[14rem] overflow-y-auto rounded-lg border border-slate-200 bg-white py-1 shadow-lg">
          {matches.isPending || (matches.isFetching && options.length === 0) ? (
            <li className="flex items-center gap-2 px-3 py-2 text-sm text-slate-500"><Spinner label="Searching users" className="h-4 w-4" />Searching…</li>
          ) : matches.isError ? (
            <li className="px-3 py-2 text-sm text-red-700">Could not search users</li>
          ) : options.length === 0 ? (
            <li className="px-3 py-2 text-sm text-slate-500">No user matches “{search}”</li>
          ) : options.map((u, i) => {
            const name = [u.firstName, u.lastName].filter(Boolean).join(' ');
            return (
              <li key={u.id} id={`${id}-opt-${u.id}`} role="option" aria-selected={i === active}
                className={`cursor-pointer px-3 py-2 text-sm ${i === active ? 'bg-brand-50 text-brand-900' : 'text-slate-800'}`}
                // mousedown, not click: the input's blur would close the list before a click lands.
                onMouseDown={(e) => { e.preventDefault(); pick(u); }} onMouseEnter={() => setActive(i)}>
                <span className="block truncate font-medium">{u.email}</span>
                {name && <span className="block truncate text-xs text-slate-500">{name}</span>}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
