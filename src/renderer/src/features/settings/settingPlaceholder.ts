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
 * What a setting's empty field shows: the value in effect (a secret as the server masked it) and, when
 * the environment sets it, which variable does, since the field cannot change it then.
 */
export function settingPlaceholder(setting: SettingView): string {
  const current = setting.value ?? '';
  if (setting.source === 'environment') {
    return current ? `${current} (set by ${setting.env})` : `Set by ${setting.env}`;
  }
  if (setting.unreadable) return 'Stored encrypted, but this keychain cannot open it: set it again';
  return current || (setting.secret ? 'Not set' : 'Default');
}
