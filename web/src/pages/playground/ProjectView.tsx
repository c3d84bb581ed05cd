/** A project: its chats (and a new one in it); for its owner, its name, instructions, pin, files and deletion. */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { playground } from '../../playground-api';
import { Link, navigate } from '../../router';
import { useCan } from '../../session';
import { ErrorNote, Loading, PinnedMark } from '../../ui';
import { ProjectSettings } from './ProjectSettings';
import { ProjectFiles } from './ProjectFiles';

export function ProjectView({ projectId }: { projectId: string }) {
  const can = useCan();
  const client = useQueryClient();
  const project = useQuery({ queryKey: ['playground', 'project', projectId], queryFn: () => playground.project(projectId) });
  const chats = useQuery({ queryKey: ['playground', 'chats', 'project', projectId], queryFn: () => playground.projectChats(projectId) });
  const newChat = useMutation({
    mutationFn: () => playground.createChat({ model: 'sim-chat', project_id: projectId }),
    onSuccess: (chat) => { void client.invalidateQueries({ queryKey: ['playground'] }); navigate(`/playground/${chat.id}`); },
  });
  if (project.isPending) return <Loading what="the project" />;
  if (project.isError) return <ErrorNote error={project.error} />;
  const p = project.data;
  return (
    <section className="project" aria-labelledby="project-name">
      <header className="chat-head">
        <h1 id="project-name">{p.pinned && <><PinnedMark />{' '}</>}{p.name}</h1>
        {p.owned && can('playground.use') && <button type="button" onClick={() => newChat.mutate()} disabled={newChat.isPending}>New chat in project</button>}
      </header>
      <ErrorNote error={newChat.error} />
      {p.owned ? <ProjectSettings project={p} /> : p.instructions && <p className="muted">Instructions: {p.instructions}</p>}
      <ProjectFiles project={p} />
      <h2>Chats</h2>
      <ErrorNote error={chats.error} />
      <ul aria-label="Chats in this project">
        {chats.data?.data.map((c) => <li key={c.id}><Link to={`/playground/${c.id}`}>{c.title}</Link></li>)}
        {chats.data?.data.length === 0 && <li className="empty">No chats in this project yet.</li>}
      </ul>
    </section>
  );
}
