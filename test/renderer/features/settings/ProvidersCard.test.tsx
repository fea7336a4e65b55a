import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ProvidersCard } from '../../../../src/renderer/src/features/settings/ProvidersCard';
import {
  settingPlaceholder,
  type SettingView,
} from '../../../../src/renderer/src/features/settings/settingPlaceholder';

const view = (over: Partial<SettingView> & Pick<SettingView, 'key'>): SettingView => ({
  value: null,
  source: 'unset',
  description: '',
  secret: over.key.endsWith('apiKey'),
  env: over.key.startsWith('openai') ? 'OPENAI_X' : 'COHERE_X',
  ...over,
});

/** The Settings card with GET /studio/settings already answered, as static HTML. */
function render(settings: SettingView[]): string {
  const client = new QueryClient();
  client.setQueryData(['settings'], settings);
  return renderToStaticMarkup(
    <MantineProvider>
      <QueryClientProvider client={client}>
        <ProvidersCard />
      </QueryClientProvider>
    </MantineProvider>,
  );
}

describe('the Settings page provider fields', () => {
  it('show the value in effect when the environment sets it: the URL, and the key masked', () => {
    const html = render([
      view({ key: 'openai.apiKey', value: 'sk-••••abcd', source: 'environment', env: 'OPENAI_API_KEY' }),
      view({
        key: 'openai.baseUrl',
        value: 'http://proxy.example/v1',
        source: 'environment',
        env: 'OPENAI_BASE_URL',
      }),
      view({ key: 'cohere.apiKey', value: '••••', source: 'stored' }),
      view({ key: 'cohere.baseUrl' }),
    ]);
    // Shown as the field's text, not only as a faint placeholder.
    expect(html).toContain('value="sk-••••abcd"');
    expect(html).toContain('value="http://proxy.example/v1"');
    expect(html).toContain('placeholder="http://proxy.example/v1"');
    expect(html).toContain('placeholder="••••"');
    expect(html).toContain('placeholder="Default"');
  });

  it('say which variable sets a value under its field, where a long URL cannot cut it off', () => {
    const masked =
      'https://user:••••@proxy.example.com/v1/some/long/path/to/the/proxy?token=••••&region=••••';
    const html = render([
      view({ key: 'openai.apiKey' }),
      view({ key: 'openai.baseUrl', value: masked, source: 'environment', env: 'OPENAI_BASE_URL' }),
      view({ key: 'cohere.apiKey' }),
      view({ key: 'cohere.baseUrl' }),
    ]);
    // The field holds the URL alone (as the server masked it); the note is text of its own.
    expect(html).toContain(`value="${masked.replaceAll('&', '&amp;')}"`);
    expect(html).not.toContain('(set by OPENAI_BASE_URL)');
    expect(html).toMatch(/<p[^>]*>Set by OPENAI_BASE_URL; unset it to change this here\.<\/p>/);
    expect(html.match(/Set by OPENAI_/g)).toHaveLength(1);
  });

  it('say which variable sets a value, and what an unset or unreadable value is', () => {
    expect(
      settingPlaceholder(view({ key: 'openai.baseUrl', source: 'environment', env: 'OPENAI_BASE_URL' })),
    ).toBe('Set by OPENAI_BASE_URL');
    expect(settingPlaceholder(view({ key: 'openai.apiKey' }))).toBe('Not set');
    expect(settingPlaceholder(view({ key: 'cohere.apiKey', source: 'stored', unreadable: true }))).toMatch(
      /cannot open it/,
    );
  });
});
