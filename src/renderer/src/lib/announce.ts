import { useSyncExternalStore } from 'react';

/**
 * What the studio's one polite live region says (`components/LiveAnnouncer.tsx`): the result of an
 * action whose button is disabled while it runs, so that the focus, and a screen reader's attention,
 * would otherwise be lost ("Wallet created", "handbook.md deleted").
 */
let current = { message: '', id: 0 };
const listeners = new Set<() => void>();

function publish(message: string): void {
  current = { message, id: current.id + 1 };
  for (const listener of listeners) listener();
}

/**
 * Says `message` politely. The region is emptied first and filled a moment later, so that the same
 * words said twice ("Test buyer added") are announced twice.
 */
export function announce(message: string): void {
  publish('');
  window.setTimeout(() => publish(message), 50);
}

export function subscribeAnnouncements(onChange: () => void): () => void {
  listeners.add(onChange);
  return () => listeners.delete(onChange);
}

export const currentAnnouncement = (): string => current.message;

/** The message the live region shows. */
export function useAnnouncement(): string {
  return useSyncExternalStore(subscribeAnnouncements, currentAnnouncement);
}
