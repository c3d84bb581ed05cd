import type { FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useCan, useMe } from '../../session';
import { ROLES } from '../../types';
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
  const manage = can('members.manage');
  return (
    <Section title="Members">
      {users.isPending && <Loading what="members" />}
      <ErrorNote error={users.error ?? setRole.error ?? remove.error ?? transfer.error} />
      {users.data && (
        <Table caption="People in this workspace" head={['Name', 'E-mail', 'Role', 'Added', '']}>
          {users.data.data.map((u) => (
            <tr key={u.id}>
              <td>{u.name}</td>
              <td>{u.email}</td>
              <td>
                {manage && u.role !== 'owner'
                  ? <select aria-label={`Role of ${u.email}`} value={u.role} onChange={(e) => setRole.mutate({ id: u.id, role: e.target.value })}>
                      {roleOptions.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
                    </select>
                  : u.role}
              </td>
              <td>{when(u.added_at)}</td>
              <td className="actions">
                {me.workspace?.role === 'owner' && u.id !== me.user?.id && <button type="button" className="secondary" onClick={() => transfer.mutate(u.id)}>Make owner</button>}
                {manage && u.id !== me.user?.id && u.role !== 'owner' && <button type="button" className="danger" onClick={() => remove.mutate(u.id)}>Remove</button>}
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
