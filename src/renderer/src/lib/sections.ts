import { useSyncExternalStore } from 'react';

/** The studio's pages, in sidebar order. The hash (`#/keys`) names the open one. */
export const SECTIONS = [
  'listings',
  'ingest',
  'inspect',
  'playground',
  'evaluation',
  'pricing',
  'wallet',
  'buyers',
  'publish',
  'keys',
  'settings',
] as const;
export type Section = (typeof SECTIONS)[number];

export const DEFAULT_SECTION: Section = 'listings';

export function sectionFromHash(hash: string): Section {
  const name = hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return (SECTIONS as readonly string[]).includes(name) ? (name as Section) : DEFAULT_SECTION;
}

export const sectionHref = (section: Section): string => `#/${section}`;

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

/** The open section; back and forward buttons work because it lives in the URL hash. */
export function useSection(): Section {
  return useSyncExternalStore(subscribe, () => sectionFromHash(window.location.hash));
}
