import { useEffect } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { Link, navigate, useLocation } from '../../router';
import { ErrorNote, Loading } from '../../ui';
import { AuthLayout } from './AuthLayout';

/**
 * The e-mail's link: confirms the address and signs in. An account made from an invitation link joins the
 * inviting workspace here; an invitation no longer valid is shown as it is (its page says why).
 */
export function Verify() {
  const { query } = useLocation();
  const token = query.get('token') ?? '';
  const invite = query.get('invite');
  const client = useQueryClient();
  const verify = useMutation({
    mutationFn: api.verify,
    onSuccess: async (user) => {
      await client.invalidateQueries();
      navigate(invite && !user.joined ? `/invite?token=${encodeURIComponent(invite)}` : '/settings/members');
    },
  });
  const { mutate } = verify;
  useEffect(() => mutate({ token, invite_token: invite ?? undefined }), [mutate, token, invite]);
  return (
    <AuthLayout title="Confirming your e-mail">
      {verify.isError ? <><ErrorNote error={verify.error} /><Link to="/sign-in">Sign in</Link></> : <Loading what="your account" />}
    </AuthLayout>
  );
}
