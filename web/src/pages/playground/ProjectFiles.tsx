/** A project's files: listed to whoever may read them, added and deleted by its owner (counted in the workspace's storage). */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { playground, uploadOf, type PlaygroundFile, type Project } from '../../playground-api';
import { useCan } from '../../session';
import { bytes, ErrorNote } from '../../ui';

export function ProjectFiles({ project }: { project: Project & { owned: boolean; files: PlaygroundFile[] } }) {
  const can = useCan();
  const client = useQueryClient();
  const refresh = () => Promise.all([client.invalidateQueries({ queryKey: ['playground', 'project', project.id] }), client.invalidateQueries({ queryKey: ['storage'] })]);
  const upload = useMutation({ mutationFn: async (file: File) => playground.uploadProjectFile(project.id, await uploadOf(file)), onSuccess: () => void refresh() });
  const remove = useMutation({ mutationFn: (id: string) => playground.deleteFile(id), onSuccess: () => void refresh() });
  return (
    <section aria-label="Project files">
      <h2>Files</h2>
      <ul className="plain">
        {project.files.map((f) => (
          <li key={f.id}>
            <a href={playground.fileUrl(f.id)} target="_blank" rel="noreferrer">{f.filename}</a> <span className="muted">{bytes(f.bytes)}</span>
            {project.owned && <button type="button" className="secondary small" aria-label={`Delete ${f.filename}`} onClick={() => remove.mutate(f.id)}>Delete</button>}
          </li>
        ))}
        {project.files.length === 0 && <li className="empty">No files. Chats in this project can attach the files added here.</li>}
      </ul>
      {project.owned && can('playground.use') && (
        <label className="secondary file-button">Add project file
          <input type="file" className="sr-only" aria-label="Add project file" onChange={(e) => { const f = e.target.files?.[0]; if (f) upload.mutate(f); e.target.value = ''; }} />
        </label>
      )}
      {upload.isPending && <span role="status" className="muted"> Uploading…</span>}
      <ErrorNote error={upload.error ?? remove.error} />
    </section>
  );
}
