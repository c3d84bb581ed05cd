/** The member's projects in the Playground sidebar (pinned first), and a new one by name. */
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { playground } from '../../playground-api';
import { Link, navigate, useLocation } from '../../router';
import { useCan } from '../../session';
import { ErrorNote, PinnedMark } from '../../ui';

export function ProjectList() {
  const { path } = useLocation();
  const can = useCan();
  const client = useQueryClient();
  const projects = useQuery({ queryKey: ['playground', 'projects'], queryFn: playground.projects });
  const [naming, setNaming] = useState(false);
  const create = useMutation({
    mutationFn: (name: string) => playground.createProject({ name }),
    onSuccess: (p) => { setNaming(false); void client.invalidateQueries({ queryKey: ['playground', 'projects'] }); navigate(`/playground/projects/${p.id}`); },
  });
  return (
    <section aria-label="Projects">
      <div className="row spread">
        <h2>Projects</h2>
        {can('playground.use') && <button type="button" className="secondary small" aria-expanded={naming} onClick={() => setNaming(!naming)}>New project</button>}
      </div>
      {naming && (
        <form onSubmit={(e) => { e.preventDefault(); create.mutate(String(new FormData(e.currentTarget).get('name'))); }}
          onKeyDown={(e) => { if (e.key === 'Escape') setNaming(false); }}>
          <label className="field"><span>Project name</span><input name="name" required maxLength={120} autoFocus /></label>
          <button type="submit" disabled={create.isPending}>Create project</button>
        </form>
      )}
      <ErrorNote error={projects.error ?? create.error} />
      <ul>
        {projects.data?.data.map((p) => (
          <li key={p.id}>
            <Link to={`/playground/projects/${p.id}`} aria-current={path === `/playground/projects/${p.id}` ? 'page' : undefined}>
              {p.pinned && <><PinnedMark />{' '}</>}{p.name}
            </Link>
          </li>
        ))}
        {projects.data?.data.length === 0 && <li className="empty">No projects.</li>}
      </ul>
    </section>
  );
}
