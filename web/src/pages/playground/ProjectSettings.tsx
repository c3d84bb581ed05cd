/** A project's name, instructions (a system message in every chat of it), pin, and deletion (its chats stay). */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { playground, type Project } from '../../playground-api';
import { navigate } from '../../router';
import { ConfirmButton } from '../../confirm';
import { ErrorNote } from '../../ui';

export function ProjectSettings({ project }: { project: Project }) {
  const client = useQueryClient();
  const refresh = () => client.invalidateQueries({ queryKey: ['playground'] });
  const save = useMutation({ mutationFn: (b: { name?: string; instructions?: string; pinned?: boolean }) => playground.updateProject(project.id, b), onSuccess: () => void refresh() });
  const remove = useMutation({
    mutationFn: () => playground.deleteProject(project.id),
    onSuccess: () => {
      navigate('/playground');
      // The project is gone, and so is the project of its chats as cached.
      client.removeQueries({ queryKey: ['playground', 'project', project.id] });
      client.removeQueries({ queryKey: ['playground', 'chat'] });
      void refresh();
      void client.invalidateQueries({ queryKey: ['storage'] });
    },
  });
  return (
    <div className="project-settings">
      <form className="inline" onSubmit={(e) => { e.preventDefault(); save.mutate({ name: String(new FormData(e.currentTarget).get('name')) }); }}>
        <label className="field"><span>Project name</span><input name="name" defaultValue={project.name} required maxLength={120} /></label>
        <button type="submit" className="secondary" disabled={save.isPending}>Rename</button>
        <button type="button" className="secondary" aria-pressed={project.pinned} onClick={() => save.mutate({ pinned: !project.pinned })}>{project.pinned ? 'Unpin project' : 'Pin project'}</button>
      </form>
      <form onSubmit={(e) => { e.preventDefault(); save.mutate({ instructions: String(new FormData(e.currentTarget).get('instructions')) }); }}>
        <label className="field"><span>Instructions</span>
          <textarea name="instructions" defaultValue={project.instructions} rows={3} placeholder="Sent as a system message by every chat in this project" />
        </label>
        <button type="submit" disabled={save.isPending}>Save instructions</button>
        {save.isSuccess && <span role="status" className="ok"> Saved.</span>}
      </form>
      <ErrorNote error={save.error} />
      <ConfirmButton className="danger" onConfirm={() => remove.mutateAsync()}
        confirm={{ title: 'Delete project', confirmLabel: 'Delete', children: <p>Delete “{project.name}” and its files? Its chats stay, out of any project.</p> }}>
        Delete project
      </ConfirmButton>
    </div>
  );
}
