import { useId, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useMe } from '../../session';
import { ErrorNote } from '../../ui';

const NEW = '__new__';

/** Switches the session's workspace, or creates a new one (the person owns it). */
export function WorkspaceSwitcher() {
  const me = useMe().data!;
  const id = useId();
  const client = useQueryClient();
  const [creating, setCreating] = useState(false);
  const refresh = () => client.invalidateQueries();
  const change = useMutation({ mutationFn: api.switchWorkspace, onSuccess: refresh });
  const create = useMutation({ mutationFn: api.createWorkspace, onSuccess: () => { setCreating(false); return refresh(); } });
  return (
    <div className="switcher">
      <label htmlFor={id} className="sr-only">Workspace</label>
      <select id={id} value={me.workspace?.id ?? ''} onChange={(e) => (e.target.value === NEW ? setCreating(true) : change.mutate(e.target.value))}>
        {me.workspaces.map((w) => <option key={w.id} value={w.id}>{w.name} ({w.role})</option>)}
        <option value={NEW}>+ New workspace…</option>
      </select>
      {creating && (
        <form onSubmit={(e) => { e.preventDefault(); create.mutate(String(new FormData(e.currentTarget).get('name'))); }}>
          <input name="name" aria-label="New workspace name" placeholder="Workspace name" required autoFocus />
          <button type="submit">Create</button>
          <button type="button" className="secondary" onClick={() => setCreating(false)}>Cancel</button>
        </form>
      )}
      <ErrorNote error={change.error ?? create.error} />
    </div>
  );
}
