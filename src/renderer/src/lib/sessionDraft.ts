import { useCallback, useSyncExternalStore, type SetStateAction } from 'react';

/**
 * What a view holds for one listing (a form half typed, the last results) and must not lose when the
 * creator goes to another section and back: the view unmounts, its drafts stay here, for as long as
 * the page is open (a reload starts over, as Ingest's queue does). One store per kind of draft, made
 * once in the view's module; each listing (or listing and buyer) has its own draft in it.
 */
export interface SessionDraftStore<T> {
  readonly initial: T;
  /**
   * A scope without a draft of its own starts from the draft last written in another one: questions
   * typed for one listing are there to run on the next. Off for results, which belong to their scope.
   */
  readonly carryOver: boolean;
  readonly byScope: Map<string, T>;
  last: T | undefined;
  readonly listeners: Set<() => void>;
}

/** `initial` is what a scope shows before anything is written; keep it a constant (it is compared by identity). */
export function createSessionDraft<T>(initial: T, { carryOver = false } = {}): SessionDraftStore<T> {
  return { initial, carryOver, byScope: new Map(), last: undefined, listeners: new Set() };
}

export function readDraft<T>(store: SessionDraftStore<T>, scope: string | null): T {
  const own = scope === null ? undefined : store.byScope.get(scope);
  if (own !== undefined) return own;
  return (store.carryOver ? store.last : undefined) ?? store.initial;
}

export function writeDraft<T>(
  store: SessionDraftStore<T>,
  scope: string | null,
  next: SetStateAction<T>,
): void {
  if (scope === null) return;
  const value = typeof next === 'function' ? (next as (previous: T) => T)(readDraft(store, scope)) : next;
  store.byScope.set(scope, value);
  store.last = value;
  store.listeners.forEach((listener) => listener());
}

/**
 * `useState` for a draft kept across navigation: the value of `scope` (a listing id, or null when
 * none is chosen: the initial value, and writes go nowhere) in `store`. The setter takes a value or an
 * update function, applied to the draft as it is when called.
 */
export function useSessionDraft<T>(
  store: SessionDraftStore<T>,
  scope: string | null,
): [T, (next: SetStateAction<T>) => void] {
  const subscribe = useCallback(
    (listener: () => void) => {
      store.listeners.add(listener);
      return () => store.listeners.delete(listener);
    },
    [store],
  );
  const value = useSyncExternalStore(subscribe, () => readDraft(store, scope));
  const set = useCallback((next: SetStateAction<T>) => writeDraft(store, scope, next), [store, scope]);
  return [value, set];
}
