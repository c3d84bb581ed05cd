/** A chat's project: its files offered to the composer, and moving the chat into or out of a project (owner). */
import { useQuery } from '@tanstack/react-query';
import { playground } from '../../playground-api';
import { Link } from '../../router';
import { ErrorNote } from '../../ui';

type Attached = Array<{ id: string; filename: string }>;

export function ProjectAttach({ projectId, attached, onChange }: { projectId: string; attached: Attached; onChange: (files: Attached) => void }) {
  const project = useQuery({ queryKey: ['playground', 'project', projectId], queryFn: () => playground.project(projectId) });
  if (project.isError) return <ErrorNote error={project.error} />;
  const p = project.data;
  if (!p) return null;
  const on = new Set(attached.map((f) => f.id));
  return (
    <fieldset className="project-files">
      <legend>In project <Link to={`/playground/projects/${p.id}`}>{p.name}</Link>{p.files.length > 0 && ' · attach its files:'}</legend>
      {p.files.map((f) => (
        <button key={f.id} type="button" className="secondary small" aria-pressed={on.has(f.id)}
          onClick={() => onChange(on.has(f.id) ? attached.filter((a) => a.id !== f.id) : [...attached, { id: f.id, filename: f.filename }])}>
          Attach {f.filename}
        </button>
      ))}
    </fieldset>
  );
}

export function MoveToProject({ value, onChange }: { value: string | null; onChange: (projectId: string | null) => void }) {
  const projects = useQuery({ queryKey: ['playground', 'projects'], queryFn: playground.projects });
  return (
    <label className="field"><span>Project</span>
      <select value={value ?? ''} onChange={(e) => onChange(e.target.value || null)}>
        <option value="">No project</option>
        {projects.data?.data.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
      </select>
    </label>
  );
}
