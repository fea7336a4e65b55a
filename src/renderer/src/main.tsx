import '@mantine/core/styles.css';
import '@mantine/dropzone/styles.css';
import '@mantine/charts/styles.css';
import './styles.css';
import { MantineProvider } from '@mantine/core';
import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { SignInRequired } from './components/SignInRequired';
import { createQueryClient } from './lib/queryClient';
import { createStudioApi, readStudioToken } from './lib/studioApi';
import { fetchWithStudioToken, onServerRestarted } from './lib/studioToken';
import { StudioApiProvider } from './lib/studioContext';
import { colorSchemeManager, cssVariablesResolver, theme } from './theme';

// Files dropped outside the Ingest view's drop zone must not make the browser open them (and leave
// the studio); the drop zone handles its own drops before these window listeners see them.
for (const type of ['dragover', 'drop'] as const) window.addEventListener(type, (e) => e.preventDefault());

// Without a token (this browser never opened the studio's link) the studio cannot work: say how to open it.
const token = readStudioToken();
const staleLink = document.querySelector('meta[name="kbstudio-link"]') !== null;

// The token is read for each request, and read again from the server's page if it was started again.
const api = createStudioApi({ token, fetch: fetchWithStudioToken });
const queryClient = createQueryClient();
// A server started again may hold other data than the page last read: every view asks again.
onServerRestarted(() => void queryClient.invalidateQueries());

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider
      theme={theme}
      cssVariablesResolver={cssVariablesResolver}
      colorSchemeManager={colorSchemeManager}
      defaultColorScheme="auto"
    >
      <QueryClientProvider client={queryClient}>
        {token ? (
          <StudioApiProvider api={api}>
            <App />
          </StudioApiProvider>
        ) : (
          <SignInRequired staleLink={staleLink} />
        )}
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
