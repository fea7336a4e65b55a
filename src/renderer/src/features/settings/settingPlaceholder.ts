/** What the Settings view knows of a setting (GET /studio/settings). */
export interface SettingView {
  key: string;
  value: string | null;
  source: 'environment' | 'stored' | 'unset';
  description: string;
  secret: boolean;
  env: string;
  /** A stored secret: sealed with the OS keychain (desktop app) or stored as typed. */
  encryptedAtRest?: boolean;
  /** Stored encrypted, but this keychain cannot open it. */
  unreadable?: true;
}

/**
 * What a setting's empty field shows: the value in effect (a secret, or a base URL's password and query
 * values, as the server masked them). When the environment sets it, the field is read-only and
 * `environmentNote` says which variable sets it, under the field: after a long URL in the field, the
 * note was cut off.
 */
export function settingPlaceholder(setting: SettingView): string {
  const current = setting.value ?? '';
  if (setting.source === 'environment') return current || `Set by ${setting.env}`;
  if (setting.unreadable) return 'Stored encrypted, but this keychain cannot open it: set it again';
  return current || (setting.secret ? 'Not set' : 'Default');
}

/** Under a field the environment sets: which variable, since the field cannot change it then. */
export function environmentNote(setting: SettingView): string | undefined {
  return setting.source === 'environment'
    ? `Set by ${setting.env}; unset it to change this here.`
    : undefined;
}

/** A setting's name on the page; its key (`openai.apiKey`, what the CLI and the API call it) is shown under it. */
const SETTING_LABELS: Record<string, string> = {
  'openai.apiKey': 'OpenAI API key',
  'openai.baseUrl': 'OpenAI base URL',
  'cohere.apiKey': 'Cohere API key',
  'cohere.baseUrl': 'Cohere base URL',
};

export const settingLabel = (key: string): string => SETTING_LABELS[key] ?? key;

/**
 * A refusal as its field shows it: the server starts it with the setting's key ("openai.baseUrl: must
 * be an http(s) URL"), which the field's label already says.
 */
export function settingErrorText(message: string, key: string): string {
  const rest = message.startsWith(`${key}: `) ? message.slice(key.length + 2) : message;
  return rest.charAt(0).toUpperCase() + rest.slice(1);
}
