import { Button, Center, Code, List, Paper, Stack, Text, Title } from '@mantine/core';

export interface SignInRequiredProps {
  /** The page was opened with a link whose token is not this launch's. */
  staleLink: boolean;
}

/**
 * Shown instead of the studio when the server did not give this page the studio token: the browser
 * has not opened the studio's link (server/studioSession.ts). The studio can create keys and sign
 * with the wallet, so the server hands its token only to a browser that was given the link.
 */
/** The address this page came from: the server's own (it was 7410, the default, whatever the port). */
const studioOrigin = (): string =>
  window.location.protocol === 'http:' || window.location.protocol === 'https:'
    ? window.location.origin
    : 'http://127.0.0.1:7410';

export function SignInRequired({ staleLink }: SignInRequiredProps) {
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder p="xl" radius="md" maw={560} w="100%">
        <Stack gap="md">
          <Title order={1} size="h2">
            {staleLink ? 'This studio link is out of date' : 'Open the studio from its link'}
          </Title>
          <Text>
            {staleLink
              ? 'The link you opened was printed by an earlier start of the server. Each start prints a new one.'
              : 'This browser has not been signed in to this studio yet.'}
          </Text>
          <List spacing="xs">
            <List.Item>
              In a terminal, <Code>kbstudio serve</Code> (or <Code>npm run serve</Code>) prints a line{' '}
              <Code>Studio: {studioOrigin()}/?token=…</Code>: open that link in this browser. It signs this
              browser in; from then on the plain address works too, also after the server is started again on
              the same port.
            </List.Item>
            <List.Item>The desktop app opens its link by itself.</List.Item>
          </List>
          <Button variant="light" onClick={() => window.location.reload()} style={{ alignSelf: 'start' }}>
            Reload
          </Button>
        </Stack>
      </Paper>
    </Center>
  );
}
