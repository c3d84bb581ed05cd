import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { useMe } from '../../session';
import { ErrorNote, Field, Section } from '../../ui';

export function Workspace() {
  const me = useMe().data!;
  const client = useQueryClient();
  const rename = useMutation({ mutationFn: api.renameWorkspace, onSuccess: () => client.invalidateQueries() });
  return (
    <Section title="Workspace">
      <form className="inline" onSubmit={(e) => { e.preventDefault(); rename.mutate(String(new FormData(e.currentTarget).get('name'))); }}>
        <Field label="Name" name="name" defaultValue={me.workspace?.name} key={me.workspace?.id} required maxLength={200} />
        <button type="submit" disabled={rename.isPending}>Rename</button>
      </form>
      <p className="muted">Plan: {me.workspace?.plan ?? 'none'} · id {me.workspace?.id}</p>
      <ErrorNote error={rename.error} />
    </Section>
  );
}
