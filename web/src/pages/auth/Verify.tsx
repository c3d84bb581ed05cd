import { useEffect } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../api';
import { Link, navigate, useLocation } from '../../router';
import { ErrorNote, Loading } from '../../ui';
import { AuthLayout } from './AuthLayout';

/** The e-mail's link: confirms the address and signs in. */
export function Verify() {
  const token = useLocation().query.get('token') ?? '';
  const client = useQueryClient();
  const verify = useMutation({
    mutationFn: api.verify,
    onSuccess: async () => {
      await client.invalidateQueries();
      navigate('/settings/members');
    },
  });
  const { mutate } = verify;
  useEffect(() => mutate(token), [mutate, token]);
  return (
    <AuthLayout title="Confirming your e-mail">
      {verify.isError ? <><ErrorNote error={verify.error} /><Link to="/sign-in">Sign in</Link></> : <Loading what="your account" />}
    </AuthLayout>
  );
}
