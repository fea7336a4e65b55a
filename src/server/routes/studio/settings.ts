import { z } from 'zod';
import { SETTING_VALUE_MAX, SETTINGS, settingKey, storeSetting } from '../../../core/settings';
import type { ServerDeps } from '../../deps';
import type { defineRoutes } from '../../route';

const KeyParams = z.object({ key: z.string().min(1).max(100) });
const ValueBody = z.object({
  value: z
    .string()
    .max(
      SETTING_VALUE_MAX,
      `The value can be at most ${SETTING_VALUE_MAX.toLocaleString('en-US')} characters.`,
    ),
});

/**
 * Provider settings (DESIGN §8) for the Settings view: secrets masked, with where each value comes
 * from. A secret's value is never sent back, not even after it was set.
 */
export function settingsRoutes(route: ReturnType<typeof defineRoutes>, { services }: ServerDeps): void {
  const views = () =>
    services.settings.describe(services.environment).map((view) => ({
      ...view,
      secret: SETTINGS[view.key].secret,
      env: SETTINGS[view.key].env,
    }));

  route({
    method: 'get',
    path: '/settings',
    summary: 'Provider settings, secrets masked, with their source (environment, stored, unset)',
    tags: ['Studio'],
    response: { status: 200, description: 'OK' },
    handler: () => ({ data: views() }),
  });
  route({
    method: 'put',
    path: '/settings/:key',
    summary: 'Store a setting (validated); an empty value clears it',
    tags: ['Studio'],
    params: KeyParams,
    body: ValueBody,
    response: { status: 200, description: 'The setting as shown, masked when secret' },
    handler: ({ params, body }) => {
      // Trimmed, blank clears, checked: the same rule as `kbstudio settings set` (core/settings.ts).
      const key = settingKey(params.key);
      const cleared = storeSetting(services.settings, key, body.value);
      return { data: views().find((v) => v.key === key), ...(cleared.length ? { cleared } : {}) };
    },
  });
}
