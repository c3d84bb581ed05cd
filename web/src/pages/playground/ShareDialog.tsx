/** Who a chat reaches: private, the workspace (read or continue), and named members; saving an empty list revokes. */
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { playground, type ChatDetail } from '../../playground-api';
import { Modal } from '../../modal';
import { ErrorNote } from '../../ui';

export function ShareDialog({ chat, onClose }: { chat: ChatDetail; onClose: () => void }) {
  const users = useQuery({ queryKey: ['users'], queryFn: api.users });
  const [visibility, setVisibility] = useState(chat.visibility);
  const [access, setAccess] = useState(chat.workspace_access);
  const [members, setMembers] = useState<Record<string, string>>(Object.fromEntries((chat.shares ?? []).map((s) => [s.userId, s.access])));
  const client = useQueryClient();
  const save = useMutation({
    mutationFn: () => playground.share(chat.id, { visibility, workspace_access: access, members: Object.entries(members).map(([user_id, a]) => ({ user_id, access: a })) }),
    onSuccess: () => { void client.invalidateQueries({ queryKey: ['playground'] }); onClose(); },
  });
  return (
    <Modal label="Share chat" className="card dialog" onClose={onClose}>
      <h2>Share “{chat.title}”</h2>
      <label className="field"><span>Workspace</span>
        <select value={visibility} onChange={(e) => setVisibility(e.target.value as typeof visibility)}>
          <option value="private">Private (only named members)</option>
          <option value="workspace">Everyone in the workspace</option>
        </select>
      </label>
      {visibility === 'workspace' && (
        <label className="field"><span>Workspace access</span>
          <select value={access} onChange={(e) => setAccess(e.target.value as typeof access)}>
            <option value="read">Read</option><option value="continue">Read and continue</option>
          </select>
        </label>
      )}
      <ul className="plain">
        {(users.data?.data ?? []).filter((u) => u.id !== chat.owner_id).map((u) => (
          <li key={u.id}>
            <label className="field"><span>{u.email}</span>
              <select aria-label={`Access for ${u.email}`} value={members[u.id] ?? ''} onChange={(e) => setMembers((m) => {
                const next = { ...m };
                if (e.target.value) next[u.id] = e.target.value; else delete next[u.id];
                return next;
              })}>
                <option value="">No access</option><option value="read">Read</option><option value="continue">Read and continue</option>
              </select>
            </label>
          </li>
        ))}
      </ul>
      <ErrorNote error={save.error} />
      <div className="row"><button type="button" onClick={() => save.mutate()}>Save sharing</button><button type="button" className="secondary" onClick={onClose}>Cancel</button></div>
    </Modal>
  );
}
