import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  announce,
  currentAnnouncement,
  subscribeAnnouncements,
} from '../../../src/renderer/src/lib/announce';
import { documentTitle } from '../../../src/renderer/src/navigation';
import {
  settingErrorText,
  settingLabel,
} from '../../../src/renderer/src/features/settings/settingPlaceholder';

describe('the live announcer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal('window', { setTimeout: globalThis.setTimeout });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('empties the region, then says the message, so the same words are said again', () => {
    const seen: string[] = [];
    const stop = subscribeAnnouncements(() => seen.push(currentAnnouncement()));
    announce('Test buyer added.');
    vi.runAllTimers();
    announce('Test buyer added.');
    vi.runAllTimers();
    stop();
    expect(seen).toEqual(['', 'Test buyer added.', '', 'Test buyer added.']);
    expect(currentAnnouncement()).toBe('Test buyer added.');
  });
});

describe('the window title', () => {
  it('names the open view before the studio', () => {
    expect(documentTitle('buyers')).toBe('Test buyers · KB Studio');
    expect(documentTitle('keys')).toBe('API keys · KB Studio');
  });
});

describe('the Settings provider fields', () => {
  it('are named for people, and a refusal does not repeat the key', () => {
    expect(settingLabel('openai.apiKey')).toBe('OpenAI API key');
    expect(settingLabel('cohere.baseUrl')).toBe('Cohere base URL');
    expect(settingErrorText('openai.baseUrl: must be an http(s) URL.', 'openai.baseUrl')).toBe(
      'Must be an http(s) URL.',
    );
    expect(settingErrorText('Cannot reach the studio.', 'openai.baseUrl')).toBe('Cannot reach the studio.');
  });
});
