import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useCan, useMe } from '../../session';
import { ROLES } from '../../types';
import { ConfirmButton, ConfirmDialog } from '../../confirm';
import { Empty, ErrorNote, Field, Loading, Section, Select, Table, when } from '../../ui';
import { Workspace } from './Workspace';

const roleOptions = ROLES.filter((r) => r !== 'owner').map((r) => ({ value: r, label: r }));

export function Members() {
  const can = useCan();
  return (
    <>
      {can('workspace.manage') && <Workspace />}
      <MemberList />
      {can('members.manage') && <Invitations />}
    </>
  );
}

function MemberList() {
  const me = useMe().data!;
  const can = useCan();
  const client = useQueryClient();
  const users = useQuery({ queryKey: ['users'], queryFn: api.users });
  const refresh = () => client.invalidateQueries();
  const setRole = useMutation({ mutationFn: (v: { id: string; role: string }) => api.setRole(v.id, v.role), onSuccess: refresh });
  const remove = useMutation({ mutationFn: api.removeUser, onSuccess: refresh });
  const transfer = useMutation({ mutationFn: api.transferOwnership, onSuccess: refresh });
  // A role picked in a row's select, waiting for its confirmation (the select keeps showing the current role).
  const [roleChange, setRoleChange] = useState<{ id: string; email: string; from: string; to: string; select: HTMLSelectElement } | null>(null);
  const manage = can('members.manage');
  const workspaceName = me.workspace?.name ?? '';
  return (
    <Section title="Members">
      {users.isPending && <Loading what="members" />}
      <ErrorNote error={users.error} />
      {roleChange && (
        <ConfirmDialog title={`Change the role of ${roleChange.email}?`} confirmLabel={`Make ${roleChange.to}`}
          onConfirm={() => setRole.mutateAsync({ id: roleChange.id, role: roleChange.to })} onClose={() => setRoleChange(null)} opener={roleChange.select}>
          <p>{roleChange.email} goes from {roleChange.from} to {roleChange.to}, and so do the API keys they made, at once.</p>
        </ConfirmDialog>
      )}
      {users.data && (
        <Table caption="People in this workspace" head={['Name', 'E-mail', 'Role', 'Added', '']}>
          {users.data.data.map((u) => (
            <tr key={u.id}>
              <td>{u.name}</td>
              <td>{u.email}</td>
              <td>
                {manage && u.role !== 'owner'
                  ? <select aria-label={`Role of ${u.email}`} value={u.role} onChange={(e) => setRoleChange({ id: u.id, email: u.email, from: u.role, to: e.target.value, select: e.currentTarget })}>
                      {roleOptions.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
                    </select>
                  : u.role}
              </td>
              <td>{when(u.added_at)}</td>
              <td className="actions">
                {me.workspace?.role === 'owner' && u.id !== me.user?.id && (
                  <ConfirmButton className="secondary" aria-label={`Make ${u.email} owner`} onConfirm={() => transfer.mutateAsync(u.id)}
                    confirm={{ title: `Transfer ownership to ${u.email}?`, confirmLabel: 'Transfer ownership', typeToConfirm: workspaceName, children: (
                      <p>{u.email} becomes the owner of {workspaceName}, with every power over it, its members and its money; you stay on as admin. Only they can give it back.</p>
                    ) }}>Make owner</ConfirmButton>
                )}
                {manage && u.id !== me.user?.id && u.role !== 'owner' && (
                  <ConfirmButton className="danger" aria-label={`Remove ${u.email}`} onConfirm={() => remove.mutateAsync(u.id)}
                    confirm={{ title: `Remove ${u.email}?`, confirmLabel: 'Remove member', children: (
                      <p>{u.email} leaves {workspaceName} at once, and every API key they made stops working.</p>
                    ) }}>Remove</ConfirmButton>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}

function Invitations() {
  const client = useQueryClient();
  const invites = useQuery({ queryKey: ['invites'], queryFn: api.invites });
  const refresh = () => client.invalidateQueries({ queryKey: ['invites'] });
  const invite = useMutation({ mutationFn: (v: { email: string; role: string }) => api.invite(v.email, v.role), onSuccess: refresh });
  const revoke = useMutation({ mutationFn: api.revokeInvite, onSuccess: refresh });
  const submit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    invite.mutate({ email: String(f.get('email')), role: String(f.get('role')) });
    e.currentTarget.reset();
  };
  return (
    <Section title="Invitations">
      <form className="inline" onSubmit={submit} aria-label="Invite someone">
        <Field label="E-mail" name="email" type="email" required />
        <Select label="Role" name="role" defaultValue="developer" options={roleOptions} />
        <button type="submit" disabled={invite.isPending}>Send invitation</button>
      </form>
      <ErrorNote error={invite.error ?? revoke.error ?? invites.error} />
      {invite.isSuccess && <p role="status" className="ok">Invitation sent to {invite.data.email}.</p>}
      {invites.isPending && <Loading what="invitations" />}
      {invites.data?.data.length === 0 && <Empty>No invitations yet.</Empty>}
      {!!invites.data?.data.length && (
        <Table caption="Invitations" head={['E-mail', 'Role', 'Status', 'Expires', '']}>
          {invites.data.data.map((i) => (
            <tr key={i.id}>
              <td>{i.email}</td><td>{i.role}</td><td><span className={`badge ${i.status}`}>{i.status}</span></td><td>{when(i.expires_at)}</td>
              <td className="actions">{i.status === 'pending' && <button type="button" className="danger" onClick={() => revoke.mutate(i.id)}>Revoke</button>}</td>
            </tr>
          ))}
        </Table>
      )}
    </Section>
  );
}
