import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { Link, navigate, useLocation } from '../../router';
import { useMe } from '../../session';
import { ErrorNote, Loading } from '../../ui';
import { AuthLayout } from './AuthLayout';

/** An invitation link: shows the workspace and role; a signed-in person with the invited address accepts. */
export function Invite() {
  const token = useLocation().query.get('token') ?? '';
  const me = useMe();
  const client = useQueryClient();
  const preview = useQuery({ queryKey: ['invite', token], queryFn: () => api.invitePreview(token), retry: false });
  const accept = useMutation({
    mutationFn: () => api.acceptInvite(token),
    onSuccess: async () => {
      await client.invalidateQueries();
      navigate('/settings/members');
    },
  });
  const here = `/invite?token=${encodeURIComponent(token)}`;
  const email = preview.data?.email ?? '';
  const signIn = `/sign-in?next=${encodeURIComponent(here)}&email=${encodeURIComponent(email)}`;
  const signUp = `/sign-up?invite=${encodeURIComponent(token)}&email=${encodeURIComponent(email)}`;
  // The page's own account links carry the invitation too: whichever one a person follows, it is not lost.
  const footer = !me.data?.user && preview.data?.status === 'pending' ? <><Link to={signIn}>Sign in</Link> · <Link to={signUp}>Create an account</Link></> : undefined;
  return (
    <AuthLayout title="Invitation" footer={footer}>
      {preview.isPending && <Loading what="the invitation" />}
      <ErrorNote error={preview.error} />
      {preview.data && (
        <>
          <p>You are invited to <strong>{preview.data.workspace.name}</strong> as <strong>{preview.data.role}</strong> ({preview.data.email}).</p>
          {preview.data.status !== 'pending' ? <p className="error" role="alert">This invitation is {preview.data.status}.</p>
            : me.data?.user ? <button type="button" onClick={() => accept.mutate()} disabled={accept.isPending}>Accept invitation</button>
            : <p><Link to={signIn}>Sign in</Link> or <Link to={signUp}>create an account</Link> with {preview.data.email} to accept.</p>}
          <ErrorNote error={accept.error} />
        </>
      )}
    </AuthLayout>
  );
}
