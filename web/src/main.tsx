import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ApiError } from './api';
import { App } from './App';
import { applyStoredTheme } from './theme';
import './styles.css';

// A 4xx answer will not change on a retry (a revoked share, a deleted chat): shown at once; other failures are retried.
const retry = (failures: number, error: Error) => !(error instanceof ApiError && error.status < 500) && failures < 3;
const client = new QueryClient({ defaultOptions: { queries: { staleTime: 5_000, refetchOnWindowFocus: false, retry } } });

applyStoredTheme();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
