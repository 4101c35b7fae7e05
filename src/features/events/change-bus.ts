/**
 * Domain change notifications: the one source that auto-sync and event streams subscribe to.
 *
 * Contract:
 * - Published only after the writing transaction has committed (never for a rolled-back write).
 * - One notification per affected folder per operation (a batch touching two folders yields two).
 * - `personal: true` marks changes to personal overrides; consumers that only care about shared
 *   values (syncs, SSE) skip them.
 * - Subscribers run synchronously in publish order; a throwing subscriber is logged and never
 *   affects the publisher or other subscribers.
 */
export type ChangeKind = "created" | "updated" | "deleted" | "import-changed";

export interface SecretChange {
  projectId: string;
  environment: string; // environment slug
  environmentId: string;
  secretPath: string; // normalised folder path, "/" for root
  folderId: string;
  kind: ChangeKind;
  keys: string[]; // empty for import-changed
  personal: boolean;
}

export type ChangeListener = (change: SecretChange) => void;

export interface ChangeBus {
  publish(change: SecretChange): void;
  subscribe(listener: ChangeListener): () => void;
}

export function createLocalChangeBus(onListenerError: (err: unknown) => void = () => {}): ChangeBus {
  const listeners = new Set<ChangeListener>();
  return {
    publish(change) {
      for (const l of listeners) {
        try {
          l(change);
        } catch (err) {
          onListenerError(err);
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
